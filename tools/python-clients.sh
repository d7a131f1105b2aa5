#!/bin/sh
# Creates the virtual environments of the Python MCP clients the demo and
# the end-to-end tests drive, pinned to exact versions, under .cache/.
# Prints the path of the requested environment's python. Fails loudly if
# PyPI cannot be reached.
#   tools/python-clients.sh mcp2   # mcp 2.x (Client, both protocol eras)
#   tools/python-clients.sh mcp1   # mcp 1.x (handshake era only)
set -eu
cd "$(dirname "$0")/.."
which=${1:-mcp2}
case "$which" in
  mcp2) pin="mcp==2.3.0 jsonschema==4.26.0" ;; # jsonschema: the e2e wire validator
  mcp1) pin="mcp==1.29.0" ;;
  *) echo "unknown client: $which" >&2; exit 2 ;;
esac
venv=".cache/clients/python-$which"
stamp="$venv/.installed-$(echo "$pin" | tr ' ' '_')"
if [ ! -f "$stamp" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  # shellcheck disable=SC2086 # one word per requirement
  "$venv/bin/pip" install --quiet --disable-pip-version-check $pin >&2
  touch "$stamp"
fi
echo "$PWD/$venv/bin/python"
