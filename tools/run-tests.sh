#!/usr/bin/env bash
# Runs every test the project has and ends with one line,
# "N passed, N failed[, N skipped]", counting Rust tests, checks, R tests and
# end-to-end tests together. Installs the dependencies first
# (tools/install-deps.sh, a counted step). Exits non-zero if anything failed.
# This is `make test`.
#
# Needs no network once the system packages are installed: the Rust code is
# built from the vendored crates (tools/cargo-offline.sh), and the package is
# built and its R tests run inside a network namespace without network
# (tools/offline.sh) where one can be made. A group whose tools must come from
# a registry that cannot be reached (PyPI, npm, apt, rustup) is one line
# "not run: <reason>" and counts as one skipped; it is never a pass, and
# never fails the run.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export MCPSERVER_KEEP_TARGET=1
R_LIB="$PWD/.lib"
LOG_DIR="$PWD/.cache/test-logs"
mkdir -p "$R_LIB" "$LOG_DIR"

passed=0
failed=0
skipped=0

report() { # name, passed, failed[, skipped]
  printf '== %-28s %4d passed, %d failed%s\n' "$1" "$2" "$3" "${4:+, $4 skipped}"
  passed=$((passed + $2))
  failed=$((failed + $3))
  skipped=$((skipped + ${4:-0}))
}

# A group that cannot run here: one line with the reason, one skipped.
not_run() { # name, reason
  printf '== %-28s not run: %s\n' "$1" "$2"
  skipped=$((skipped + 1))
}

# A check that is one pass or one failure; its output is shown on failure.
# Exit status 75 means "a registry it needs is out of reach" (the last line
# of its output says which): not run.
check() { # name, command...
  local name=$1 log="$LOG_DIR/$1.log" status
  shift
  "$@" >"$log" 2>&1
  status=$?
  if [ "$status" -eq 0 ]; then
    report "$name" 1 0
  elif [ "$status" -eq 75 ]; then
    not_run "$name" "$(tail -n 1 "$log")"
  else
    tail -n 40 "$log"
    report "$name" 0 1
  fi
}

# rustfmt, clippy and the macOS standard library come from rustup
# (tools/install-deps.sh adds the components): a missing one is a failure,
# unless rustup's server is out of reach, when its group is not run.
without_rustup() { # name, what is missing
  local reason
  if reason=$(python3 tools/reachable.py rustup 2>&1); then
    check "$1" sh -c "echo '$2'; exit 1"
  else
    not_run "$1" "$2, and $reason"
  fi
}
has_component() { # component
  rustup component list --installed 2>/dev/null | grep -q "^$1"
}

# The package is built as a user without network would build it: inside a
# network namespace (tools/offline.sh), from the vendored crates, with a HOME
# of its own, which must stay free of .cargo (nothing is written to
# ~/.cargo). Where no namespace can be made, it is built here (with the
# network) and the offline proof is one group not run.
offline_works=yes
offline_reason=$(tools/offline.sh true 2>&1) || offline_works=""
offline() { # command...: runs it without network where that can be done
  if [ -n "$offline_works" ]; then tools/offline.sh "$@"; else "$@"; fi
}
install_package() {
  local home status rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
  home=$(mktemp -d)
  HOME=$home RUSTUP_HOME=$rustup_home offline R CMD INSTALL --no-test-load -l "$R_LIB" .
  status=$?
  if [ -e "$home/.cargo" ]; then
    echo "the build wrote $home/.cargo: it must leave HOME alone"
    status=1
  fi
  rm -rf "$home"
  return "$status"
}

# First, so that the steps below have what they need; a failure here is
# counted like any other rather than stopping the run.
check install-deps tools/install-deps.sh

# The vendored crates are exactly those of Cargo.lock (else `make vendor`).
check vendor python3 tools/vendor.py check

# No import circles between the modules of either crate, and mcp-core's
# layers depend one way (see src/rust/mcp-core/src/lib.rs); the checker,
# tools/module-cycles.py, is tested first.
check module-cycles-tool python3 -m unittest tools/test_module_cycles.py
check module-cycles-mcp-core python3 tools/module-cycles.py src/rust/mcp-core/src \
  --layers=util,protocol,telemetry,stores,engine,client,transport
check module-cycles-mcpserver python3 tools/module-cycles.py src/rust/mcpserver/src

# Every file and folder ARCHITECTURE.md names exists (the checker tested first).
check architecture-tool python3 -m unittest tools/test_check_architecture.py
check architecture-paths python3 tools/check-architecture.py

if has_component rustfmt; then
  check rust-fmt cargo fmt --manifest-path src/rust/Cargo.toml --all -- --check
else
  without_rustup rust-fmt "rustfmt is not installed"
fi
if has_component clippy; then
  check rust-clippy tools/cargo-offline.sh clippy --workspace --all-targets -- -D warnings
else
  without_rustup rust-clippy "clippy is not installed"
fi

# Type-checks (and lints) every crate for macOS (Apple silicon), so that Linux-only
# calls stay behind cfg gates. Needs that target's standard library.
MACOS_TARGET=aarch64-apple-darwin
if ! rustup target list --installed 2>/dev/null | grep -qx "$MACOS_TARGET"; then
  timeout 300 rustup target add "$MACOS_TARGET" >"$LOG_DIR/rust-macos-target.log" 2>&1
fi
if rustup target list --installed 2>/dev/null | grep -qx "$MACOS_TARGET"; then
  check rust-check-macos tools/cargo-offline.sh clippy --workspace --all-targets --target "$MACOS_TARGET" -- -D warnings
else
  without_rustup rust-check-macos "the $MACOS_TARGET standard library is not installed (rustup target add $MACOS_TARGET)"
fi

# cargo test prints one "test result:" line per test binary; --no-fail-fast
# runs every binary even after one fails, so all of them are counted. Only
# those lines are summed (a failing test's output may say "N passed" too).
tools/cargo-offline.sh test --no-fail-fast --workspace -- --test-threads=2 >"$LOG_DIR/rust-test.log" 2>&1
rust_status=$?
rust_count() { # passed|failed
  grep -E '^test result:' "$LOG_DIR/rust-test.log" | grep -Eo "[0-9]+ $1" | awk '{s+=$1} END {print s+0}'
}
rust_passed=$(rust_count passed)
rust_failed=$(rust_count failed)
if [ "$rust_status" -ne 0 ] && [ "$rust_failed" -eq 0 ]; then
  rust_failed=1 # it did not build
fi
[ "$rust_failed" -ne 0 ] && grep -E -A15 '^(failures:|error)' "$LOG_DIR/rust-test.log" | head -n 80
report rust-test "$rust_passed" "$rust_failed"

[ -n "$offline_works" ] || not_run offline-build "$offline_reason"
if install_package >"$LOG_DIR/install.log" 2>&1; then
  report r-install 1 0
  check generated-files tools/check-generated.sh "$R_LIB"
  # The HTTP client tests talk to the official Python SDK's HTTP server.
  # The R tests run without network too (loopback only); those that need
  # the Python SDK skip themselves if PyPI could not be reached.
  MCPSERVER_TEST_PYTHON=$(tools/python-clients.sh mcp2 2>/dev/null) \
    offline Rscript tools/testthat.R "$R_LIB" 2>&1 | tee "$LOG_DIR/testthat.log" | grep -v '^COUNTS'
  counts=$(grep '^COUNTS' "$LOG_DIR/testthat.log" | tail -n 1)
  if [ -n "$counts" ]; then
    read -r _ t_passed t_failed t_skipped <<<"$counts"
    report r-testthat "$t_passed" "$t_failed" "$t_skipped"
  else
    report r-testthat 0 1
  fi
  # End-to-end: the official MCP SDK clients drive a real server process.
  R_LIB="$R_LIB" tests/e2e/run.sh 2>&1 | tee "$LOG_DIR/e2e.log" | grep -Ev '^e2e: [0-9]+ passed'
  e2e=$(grep -E '^e2e: [0-9]+ passed, [0-9]+ failed' "$LOG_DIR/e2e.log" | tail -n 1)
  if [ -n "$e2e" ]; then
    read -r e_passed e_failed e_skipped <<<"$(sed -E 's/^e2e: ([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$/\1 \2 \4/' <<<"$e2e")"
    report e2e "$e_passed" "$e_failed" ${e_skipped:+"$e_skipped"}
  else
    report e2e 0 1
  fi
  # The official MCP conformance suite over HTTP: first the judge of its
  # runs, then one verdict per scenario and run (tools/conformance.sh).
  check conformance-verdicts python3 -m unittest tests/conformance/test_verdicts.py
  R_LIB="$R_LIB" tools/conformance.sh 2>&1 | tee "$LOG_DIR/conformance.log" | grep -Ev '^conformance: [0-9]+ passed'
  conf=$(grep -E '^conformance: [0-9]+ passed, [0-9]+ failed' "$LOG_DIR/conformance.log" | tail -n 1)
  if [ -n "$conf" ]; then
    read -r c_passed c_failed c_skipped <<<"$(sed -E 's/^conformance: ([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$/\1 \2 \4/' <<<"$conf")"
    report conformance "$c_passed" "$c_failed" ${c_skipped:+"$c_skipped"}
  else
    report conformance 0 1
  fi
else
  tail -n 40 "$LOG_DIR/install.log"
  report r-install 0 1
fi

echo
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
