#!/bin/sh
# Vendors the Rust dependencies into src/rust/vendor.tar.xz, with the cargo
# configuration to use them in src/rust/vendor-config.toml, so a release
# tarball builds offline (tools/config.R switches to --offline when the
# tarball is present). Neither file is committed. Re-run whenever
# Cargo.lock changes.
set -eu
cd "$(dirname "$0")/../src/rust"
PATH="$HOME/.cargo/bin:$PATH"
rm -rf vendor vendor.tar.xz
cargo vendor --locked vendor 2>/dev/null > vendor-config.toml
# Vendored crates carry test data and benches we do not need.
tar -cJ --no-xattrs --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
  -f vendor.tar.xz vendor
rm -rf vendor
echo "vendor: $(du -h vendor.tar.xz | cut -f1) in src/rust/vendor.tar.xz"
