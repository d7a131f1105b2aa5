#!/usr/bin/env bash
# Runs every test the project has and ends with one line,
# "N passed, N failed", counting Rust tests, checks, R tests and end-to-end
# tests together. Installs the dependencies first (tools/install-deps.sh, a
# counted step). Exits non-zero if anything failed. This is `make test`.
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

# A check that is one pass or one failure; its output is shown on failure.
check() { # name, command...
  local name=$1 log="$LOG_DIR/$1.log"
  shift
  if "$@" >"$log" 2>&1; then
    report "$name" 1 0
  else
    tail -n 40 "$log"
    report "$name" 0 1
  fi
}

# First, so that the steps below have what they need; a failure here is
# counted like any other rather than stopping the run.
check install-deps tools/install-deps.sh

check rust-fmt cargo fmt --manifest-path src/rust/Cargo.toml --all -- --check
check rust-clippy cargo clippy --manifest-path src/rust/Cargo.toml --workspace --all-targets -- -D warnings

# cargo test prints one "test result:" line per test binary; --no-fail-fast
# runs every binary even after one fails, so all of them are counted. Only
# those lines are summed (a failing test's output may say "N passed" too).
cargo test --no-fail-fast --manifest-path src/rust/Cargo.toml --workspace -- --test-threads=2 >"$LOG_DIR/rust-test.log" 2>&1
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

if R CMD INSTALL --no-test-load -l "$R_LIB" . >"$LOG_DIR/install.log" 2>&1; then
  report r-install 1 0
  check generated-files tools/check-generated.sh "$R_LIB"
  # The HTTP client tests talk to the official Python SDK's HTTP server.
  MCPSERVER_TEST_PYTHON=$(tools/python-clients.sh mcp2 2>/dev/null) \
    Rscript tools/testthat.R "$R_LIB" 2>&1 | tee "$LOG_DIR/testthat.log" | grep -v '^COUNTS'
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
