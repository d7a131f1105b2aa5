#!/bin/sh
# Runs cargo on the workspace with the crates of src/rust/vendor.tar.xz in
# place of crates.io and without network, as the package build does: how
# `make test` lints, tests and cross-checks the Rust code, so that a
# machine without network runs it too. The crates are unpacked once per
# archive under .cache/vendor/, with a CARGO_HOME of their own there, so
# that ~/.cargo is neither read nor written.
#   tools/cargo-offline.sh clippy --workspace --all-targets -- -D warnings
#   tools/cargo-offline.sh test --workspace
set -eu
cd "$(dirname "$0")/.."
PATH="$HOME/.cargo/bin:$PATH"
archive=src/rust/vendor.tar.xz
digest=$(sha256sum "$archive" | cut -c1-16)
dir="$PWD/.cache/vendor/$digest"
if [ ! -f "$dir/.unpacked" ]; then
  rm -rf "$PWD/.cache/vendor"
  mkdir -p "$dir/cargo-home"
  tar -xf "$archive" -C "$dir"
  cat >"$dir/cargo-home/config.toml" <<EOF
[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "$dir/vendor"

[net]
offline = true
EOF
  touch "$dir/.unpacked"
fi
command=$1
shift
CARGO_HOME="$dir/cargo-home" exec cargo "$command" --locked --manifest-path src/rust/Cargo.toml "$@"
