#!/bin/sh
# Fetches the strict build of plotly.js (the one that compiles no code from
# strings) of the version R's plotly package uses, for the browser test of
# MCP Apps (tests/e2e/apps/browser.mjs). Apps made of plotly widgets load it
# from plotly's CDN (R/app.R says why); the test machine reaches npm only,
# so the test serves this copy as the CDN would. It comes from the npm
# package plotly.js (its tarball alone, checked against the registry's
# integrity pinned here), into .cache/clients/plotly-<version>/; prints the
# file's path. Fails loudly if npm cannot be reached.
#   tools/plotly-strict.sh 2.11.1
set -eu
cd "$(dirname "$0")/.."
version=${1:?usage: tools/plotly-strict.sh VERSION}
case "$version" in
  2.11.1) integrity="sha512-EKAACNT9wzZdrcU79xUUgLGYCp1fi2iZAAE7lVHw0qMTB8DcdPaYUkItpUT2Q2rIyf5EPu3z3n+5AKyvDZ/azw==" ;;
  *)
    echo "plotly-strict: no integrity is pinned for plotly.js $version; add the registry's (npm view plotly.js@$version dist.integrity)" >&2
    exit 1
    ;;
esac
dest=".cache/clients/plotly-$version"
file="$dest/plotly-strict.min.js"
if [ ! -f "$file" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  if ! (cd "$tmp" && npm pack "plotly.js@$version" --silent --fetch-retries=1 \
    --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000 >/dev/null); then
    echo "plotly-strict: npm pack plotly.js@$version failed; is the npm registry ($(npm config get registry)) reachable?" >&2
    exit 1
  fi
  tarball="$tmp/plotly.js-$version.tgz"
  got=$(python3 -c 'import base64, hashlib, sys; print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$tarball")
  if [ "$got" != "$integrity" ]; then
    echo "plotly-strict: plotly.js-$version.tgz has integrity $got, not the pinned $integrity" >&2
    exit 1
  fi
  tar -xzf "$tarball" -C "$tmp" package/dist/plotly-strict.min.js
  mkdir -p "$dest"
  mv "$tmp/package/dist/plotly-strict.min.js" "$file"
fi
echo "$PWD/$file"
