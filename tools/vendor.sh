#!/bin/sh
# `make vendor`: writes src/rust/vendor.tar.xz, every crate of Cargo.lock,
# from which the package always builds offline (tools/config.R), and
# inst/AUTHORS, their authors and licences. Both are committed: re-run this
# after every change of Cargo.lock (`make test` fails until then, through
# `tools/vendor.py check`). Needs the network (crates.io) to fetch the
# crates, unless they are in cargo's cache.
#
# cargo-vendor-filterer (pinned, installed under .cache/tools) runs `cargo
# vendor` and applies [workspace.metadata.vendor-filter] of
# src/rust/Cargo.toml: crates needed only off Unix become empty stubs, and
# crates' tests, benchmarks and examples are left out. The archive is
# reproducible: the same Cargo.lock gives the same bytes.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
PATH="$HOME/.cargo/bin:$PATH"
FILTERER_VERSION=0.5.18
# A fixed time for every member, so that the archive depends on the crates only.
SOURCE_DATE_EPOCH=1577836800
export SOURCE_DATE_EPOCH

filterer="$ROOT/.cache/tools/bin/cargo-vendor-filterer"
if ! "$filterer" --version 2>/dev/null | grep -q " $FILTERER_VERSION\$"; then
  echo "vendor: installing cargo-vendor-filterer $FILTERER_VERSION into .cache/tools" >&2
  cargo install --locked --quiet --root "$ROOT/.cache/tools" "cargo-vendor-filterer@$FILTERER_VERSION" -j 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# An interrupted package build leaves src/.cargo (whose configuration sends
# cargo to the unpacked src/vendor instead of crates.io) and src/vendor.
rm -rf src/.cargo src/vendor
cd src/rust
# Refuses a Cargo.lock that Cargo.toml has outgrown instead of rewriting it.
cargo metadata --locked --format-version 1 >/dev/null
"$filterer" --versioned-dirs --format=tar --prefix=vendor "$work/vendor.tar" >"$work/filterer.log" 2>&1 || {
  cat "$work/filterer.log" >&2
  exit 1
}
# Single-threaded xz: its output then depends on the input alone.
xz -9e -T1 -c "$work/vendor.tar" >"$work/vendor.tar.xz"
mv "$work/vendor.tar.xz" vendor.tar.xz
cd "$ROOT"
python3 tools/vendor.py authors >inst/AUTHORS
python3 tools/vendor.py check
