#!/bin/sh
# Creates the virtual environments of the Python MCP clients the demo and
# the end-to-end tests drive, pinned to exact versions, under .cache/.
# Prints the path of the requested environment's python. When it must
# download and PyPI cannot be reached, says so and exits 75 (the callers
# then report the tests that need it as not run); other failures exit 1.
#   tools/python-clients.sh mcp2   # mcp 2.x (Client, both protocol eras)
#   tools/python-clients.sh mcp1   # mcp 1.x (handshake era only)
set -eu
cd "$(dirname "$0")/.."
which=${1:-mcp2}
case "$which" in
  mcp2) pin="mcp==2.3.0 jsonschema==4.26.0 opentelemetry-proto==1.45.2" ;; # jsonschema: the e2e wire validator; opentelemetry-proto: the OTLP receiver of test-telemetry.R
  mcp1) pin="mcp==1.29.0" ;;
  *) echo "unknown client: $which" >&2; exit 2 ;;
esac
venv=".cache/clients/python-$which"
stamp="$venv/.installed-$(echo "$pin" | tr ' ' '_')"
if [ ! -f "$stamp" ]; then
  python3 tools/reachable.py pypi || exit $?
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  # shellcheck disable=SC2086 # one word per requirement
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check --retries 1 --timeout 20 $pin >&2; then
    rm -rf "$venv"
    # PyPI may have gone away during the install.
    python3 tools/reachable.py pypi || exit $?
    echo "python-clients: pip could not install $pin although PyPI answers" >&2
    exit 1
  fi
  touch "$stamp"
fi
echo "$PWD/$venv/bin/python"
