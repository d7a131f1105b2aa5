#!/bin/sh
# Installs the official MCP TypeScript SDK clients the end-to-end tests
# drive (SDK v1 @modelcontextprotocol/sdk and v2 @modelcontextprotocol/client),
# at the exact versions of tests/e2e/node/package-lock.json, into
# .cache/clients/node, and prints that directory. Reinstalls only when the
# lockfile changed. When it must download and the npm registry cannot be
# reached, says so and exits 75 (the tests that need the clients are then
# reported as not run); other failures exit 1.
#   tools/node-clients.sh
set -eu
cd "$(dirname "$0")/.."
src="tests/e2e/node"
dest=".cache/clients/node"

node_major=$(node -v 2>/dev/null | sed -n 's/^v\([0-9][0-9]*\).*/\1/p')
if ! command -v npm >/dev/null 2>&1 || [ -z "$node_major" ] || [ "$node_major" -lt 20 ]; then
  echo "node-clients: the pinned clients need Node.js >= 20 with npm (found: $(node -v 2>/dev/null || echo no node));" >&2
  echo "node-clients: get it from NodeSource (https://github.com/nodesource/distributions) or nvm (nvm install 20)" >&2
  exit 1
fi

# The stamp names the lockfile's checksum, so editing the pins reinstalls.
sum=$(sha256sum "$src/package-lock.json" | cut -c1-16)
stamp="$dest/.installed-$sum"
if [ ! -f "$stamp" ] || [ ! -d "$dest/node_modules" ]; then
  python3 tools/reachable.py npm || exit $?
  rm -rf "$dest"
  mkdir -p "$dest"
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  # npm ci installs exactly the lockfile and fails if it disagrees with
  # package.json. Short retries keep an unreachable registry a quick failure.
  if ! (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error \
    --fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000 >&2); then
    rm -rf "$dest"
    python3 tools/reachable.py npm || exit $?
    echo "node-clients: npm ci failed although the npm registry answers" >&2
    exit 1
  fi
  touch "$stamp"
fi
echo "$PWD/$dest"
