#!/bin/sh
# `make check`: R CMD build and R CMD check --no-manual of the package with
# its vendored Rust crates; fails on any ERROR or WARNING.
set -eu
cd "$(dirname "$0")/.."
PATH="$HOME/.cargo/bin:$PATH"
rm -rf mcpserver.Rcheck mcpserver_*.tar.gz
R CMD build .
# The tarball now holds the vendored crates; drop the working-tree copy so
# development builds keep using the registry (a stale copy breaks them as
# soon as Cargo.lock changes).
rm -f src/rust/vendor.tar.xz src/rust/vendor-config.toml
# Offline checks: no CRAN, no time server.
empty_repo=$(mktemp -d)
mkdir -p "$empty_repo/src/contrib"
: > "$empty_repo/src/contrib/PACKAGES"
profile=$(mktemp)
echo "options(repos = c(CRAN = 'file://$empty_repo'))" > "$profile"
# The wire schemas the server tests check every message against are kept in
# tests/e2e, which the tarball leaves out: name the repository's copy.
export R_PROFILE_USER="$profile" _R_CHECK_SYSTEM_CLOCK_=FALSE \
  _R_CHECK_CRAN_INCOMING_=false _R_CHECK_CRAN_INCOMING_REMOTE_=false NOT_CRAN=true \
  MCP_SCHEMA_DIR="$PWD/tests/e2e/schemas"
R CMD check --no-manual mcpserver_*.tar.gz || true
log=mcpserver.Rcheck/00check.log
status=$(grep '^Status:' "$log" || echo "Status: no result")
echo "$status"
if grep -q -E '^Status:.*(ERROR|WARNING)' "$log" || ! grep -q '^Status:' "$log"; then
  exit 1
fi
