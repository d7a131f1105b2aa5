#!/bin/sh
# Installs what building and testing mcpserver needs on Debian or Ubuntu:
# R and the R packages the tests use (from Debian, since CRAN may be out of
# reach), and checks for a Rust toolchain from rustup (and warns about a Node
# older than 20).
# Idempotent, and fast when everything is present (then it needs no network).
# Exits 75 when packages are missing and the apt repositories cannot be
# reached (`make test` reports the step as not run, and the tests that need
# a missing tool skip themselves), 1 on any other failure.
set -eu

DEBIAN_PACKAGES="r-base-dev r-cran-testthat r-cran-processx r-cran-jsonlite \
r-cran-roxygen2 r-cran-withr r-cran-knitr r-cran-rmarkdown r-cran-future r-cran-parallelly \
pandoc xz-utils curl haproxy devscripts qpdf"
# curl: the HTTP tests drive the server with it; haproxy: the load balancer of
# the scale-out tests (tests/testthat/test-scaling.R); devscripts
# (checkbashisms) and qpdf: R CMD check --as-cran (`make check`) runs them.

# The end-to-end suite drives the official Python and TypeScript clients.
# Use the python3 and node already on PATH when there are any (Node from
# NodeSource ships npm itself; Debian's npm package would conflict with it).
# python3-venv only matters for Debian's own python3; others bring venv.
case "$(command -v python3 || true)" in
  "") DEBIAN_PACKAGES="$DEBIAN_PACKAGES python3 python3-venv" ;;
  /usr/bin/python3 | /bin/python3) DEBIAN_PACKAGES="$DEBIAN_PACKAGES python3-venv" ;;
esac
command -v node >/dev/null 2>&1 || DEBIAN_PACKAGES="$DEBIAN_PACKAGES nodejs"
command -v npm >/dev/null 2>&1 || DEBIAN_PACKAGES="$DEBIAN_PACKAGES npm"

# MCP Apps (R/app.R): the tests and inst/examples/apps use htmlwidgets,
# plotly and DT; the browser test (tests/e2e/apps) drives Debian's Chromium
# with playwright-core, which never downloads a browser of its own.
DEBIAN_PACKAGES="$DEBIAN_PACKAGES r-cran-htmltools r-cran-htmlwidgets r-cran-plotly r-cran-dt chromium"

missing=""
for pkg in $DEBIAN_PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
    missing="$missing $pkg"
  fi
done

# Whether apt failed because its repositories are out of reach: asked of
# tools/reachable.py when there is a python3, else read from apt's messages.
apt_unreachable() { # apt's log
  if command -v python3 >/dev/null 2>&1; then
    ! python3 "$(dirname "$0")/reachable.py" apt
  else
    grep -Eq 'Temporary failure resolving|Could not resolve|Failed to fetch|Unable to connect|Could not connect|Network is unreachable' "$1"
  fi
}

if [ -n "$missing" ]; then
  echo "install-deps: installing$missing" >&2
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  apt_log=$(mktemp)
  # shellcheck disable=SC2086 # one word per package
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    $SUDO apt-get install -y -qq --no-install-recommends $missing; } >"$apt_log" 2>&1; then
    cat "$apt_log" >&2
    if apt_unreachable "$apt_log"; then
      rm -f "$apt_log"
      echo "install-deps: not installed, the apt repositories are unreachable:$missing" >&2
      exit 75
    fi
    rm -f "$apt_log"
    exit 1
  fi
  rm -f "$apt_log"
fi

# Rust comes from rustup (Debian's rustc is far too old for our crates).
PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null 2>&1; then
  echo "install-deps: cargo not found. Install Rust with rustup: https://rustup.rs" >&2
  exit 1
fi
for component in rustfmt clippy; do
  if ! rustup component list --installed 2>/dev/null | grep -q "^$component"; then
    rustup component add "$component" >/dev/null 2>&1 || true
  fi
done

# The pinned TypeScript clients of the end-to-end tests need Node >= 20
# (Debian bookworm's nodejs is 18). Only those tests need it, so warn here;
# tools/node-clients.sh refuses an older Node when the tests run.
node_major=$(node -v 2>/dev/null | sed -n 's/^v\([0-9][0-9]*\).*/\1/p')
if [ -z "$node_major" ] || [ "$node_major" -lt 20 ]; then
  echo "install-deps: warning: the end-to-end tests need Node.js >= 20 (found: $(node -v 2>/dev/null || echo none))." >&2
  echo "install-deps: get it from NodeSource (https://github.com/nodesource/distributions) or nvm (nvm install 20), first on PATH." >&2
fi
