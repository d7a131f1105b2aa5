#!/usr/bin/env bash
# Runs the official MCP conformance suite against the fixture server
# tests/conformance/server.R over HTTP (`make conformance`, and a step of
# `make test`). Three runs, each against a fresh server process:
#   0.1.16          active suite at --spec-version 2025-11-25
#   0.2.0-alpha.12  --requirements 2025-11-25 (handshake wire)
#   0.2.0-alpha.12  --requirements 2026-07-28 (stateless wire)
# Every scenario a run executes is one verdict (tests/conformance/verdicts.py
# against that run's baseline in tests/conformance/expected-failures/, which
# the suite is given too: its own exit status must agree). Ends
# with "conformance: N passed, N failed[, N skipped]" and exits non-zero on
# any failure. Results stay in .cache/conformance-results/<run>/.
#   tools/conformance.sh              # installs the suite if needed (tools/conformance-suite.sh)
#   tools/conformance.sh --url URL    # against a server you started yourself
#   tools/conformance.sh --run 2026-07-28   # only the run(s) with that name
# Environment: R_LIB, the library holding mcpserver (default ./.lib).
set -uo pipefail
cd "$(dirname "$0")/.."
R_LIB=${R_LIB:-$PWD/.lib}
OUT="$PWD/.cache/conformance-results"
BASELINES=tests/conformance/expected-failures

url=""
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --url) url=$2; shift 2 ;;
    --run) only=$2; shift 2 ;;
    *) echo "usage: tools/conformance.sh [--url URL] [--run NAME]" >&2; exit 2 ;;
  esac
done

# name | package directory | suite arguments
RUNS=(
  "0.1.16|conformance-0.1|--spec-version 2025-11-25"
  "2025-11-25|conformance-0.2|--requirements 2025-11-25"
  "2026-07-28|conformance-0.2|--requirements 2026-07-28"
)

passed=0
failed=0
skipped=0
finish() {
  if [ "$skipped" -gt 0 ]; then
    echo "conformance: $passed passed, $failed failed, $skipped skipped"
  else
    echo "conformance: $passed passed, $failed failed"
  fi
  [ "$failed" -eq 0 ] && exit 0
  exit 1
}

# Baselines are checked even when the runs cannot happen.
if ! python3 tests/conformance/verdicts.py --check "$BASELINES"/*.yaml; then
  failed=$((failed + 1))
fi

# A suite that cannot be installed because the npm registry is out of
# reach leaves each run not run (one line with the reason, one skipped).
mkdir -p "$OUT"
suite=$(tools/conformance-suite.sh 2>"$OUT/install.log")
case $? in
  0) ;;
  75)
    for spec in "${RUNS[@]}"; do
      [ -n "$only" ] && [ "$only" != "${spec%%|*}" ] && continue
      echo "conformance ${spec%%|*}: not run: $(tail -n 1 "$OUT/install.log")"
      skipped=$((skipped + 1))
    done
    finish
    ;;
  *)
    cat "$OUT/install.log" >&2
    failed=$((failed + 1))
    finish
    ;;
esac
node="$suite/node_modules/.bin/node"

# The fixture needs mcp_server(transport = "http"); a build without it
# skips the runs (counted as skipped, never as passed).
if [ -z "$url" ]; then
  R_LIBS="$R_LIB" Rscript -e 'q(status = if ("transport" %in% names(formals(mcpserver::mcp_server))) 0 else 3)' >/dev/null 2>&1
  case $? in
    0) ;;
    3)
      echo "conformance: this build of mcpserver has no HTTP transport (mcp_server(transport = \"http\")); the runs are skipped"
      skipped=${#RUNS[@]}
      finish
      ;;
    *)
      echo "conformance: cannot load mcpserver from $R_LIB (run make install)"
      failed=$((failed + 1))
      finish
      ;;
  esac
fi

server_pid=""
# Asks the fixture to stop, and insists after ten seconds: a server that
# ignores SIGTERM must not hang the run.
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null
    local tries=0
    while kill -0 "$server_pid" 2>/dev/null && [ "$tries" -lt 100 ]; do
      sleep 0.1
      tries=$((tries + 1))
    done
    kill -9 "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
    server_pid=""
  fi
}
trap stop_server EXIT

# Starts the fixture on a port the system picks and sets server_url from
# the URL the server reports on stderr. Returns non-zero if it never does.
start_server() { # log file
  local log=$1 waited=0
  : >"$log"
  R_LIBS="$R_LIB" MCP_CONFORMANCE_TRANSPORT=http MCP_CONFORMANCE_PORT=0 \
    Rscript tests/conformance/server.R </dev/null >"$log" 2>&1 &
  server_pid=$!
  server_url=""
  while [ "$waited" -lt 600 ]; do # 60 s
    server_url=$(grep -Eo 'http://(127\.0\.0\.1|localhost|\[::1\]):[0-9]+/[^[:space:]"'"'"')]*' "$log" | head -n 1)
    [ -n "$server_url" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
    waited=$((waited + 1))
  done
  return 1
}

mkdir -p "$OUT"
for spec in "${RUNS[@]}"; do
  IFS='|' read -r name package args <<<"$spec"
  [ -n "$only" ] && [ "$only" != "$name" ] && continue
  dir="$OUT/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  version=$("$node" "$suite/node_modules/$package/dist/index.js" --version)
  echo "-- conformance $version, $args"
  run_url=$url
  if [ -z "$run_url" ]; then
    if ! start_server "$dir/server.log"; then
      echo "FAIL the fixture server did not report its URL; its output ended with:"
      tail -n 20 "$dir/server.log"
      stop_server
      failed=$((failed + 1))
      continue
    fi
    run_url=$server_url
  fi
  # shellcheck disable=SC2086 # the arguments are words
  timeout 900 "$node" "$suite/node_modules/$package/dist/index.js" server \
    --url "$run_url" $args -o "$dir/results" --expected-failures "$BASELINES/$name.yaml" >"$dir/suite.log" 2>&1
  suite_status=$?
  # A fixture that died during the run is a failure even if the scenarios
  # it left unanswered happen to be baselined.
  if [ -n "$server_pid" ] && ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" 2>/dev/null
    echo "FAIL the fixture server exited (status $?) during the run; its output ended with:"
    tail -n 20 "$dir/server.log"
    server_pid=""
    failed=$((failed + 1))
  fi
  stop_server
  python3 tests/conformance/verdicts.py --results "$dir/results" \
    --baseline "$BASELINES/$name.yaml" --log "$dir/suite.log" >"$dir/verdicts.txt"
  # Show what failed (with its explanation) and the count; the rest is in the file.
  awk '/^FAIL/ {show = 1} /^ok/ {show = 0} show || /^verdicts:/' "$dir/verdicts.txt"
  counts=$(sed -n 's/^verdicts: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$dir/verdicts.txt")
  if [ -z "$counts" ]; then
    failed=$((failed + 1))
  else
    read -r p f <<<"$counts"
    passed=$((passed + p))
    failed=$((failed + f))
    # The suite judged the same baseline itself: if it is stricter than the
    # verdicts (or stopped early), that is a failure of its own.
    if [ "$f" -eq 0 ] && [ "$suite_status" -ne 0 ]; then
      echo "FAIL the suite exited with status $suite_status although every verdict passed; its report ends:"
      tail -n 15 "$dir/suite.log"
      failed=$((failed + 1))
    fi
  fi
done
finish
