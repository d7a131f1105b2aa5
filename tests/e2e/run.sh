#!/usr/bin/env bash
# The end-to-end interoperability suite: the official MCP SDK clients drive
# tests/e2e/server.R over real stdio, started as a user's client starts it
# (`Rscript server.R`, behind the recording proxy capture.py), and every
# message the server wrote is validated against its revision's schema.
#
#   tests/e2e/run.sh          # needs R, python3, node/npm; the package in $R_LIB
#
# Prints one line per client and mode, one line "e2e examples: ..." for the
# example servers (inst/examples/*/server.R, driven by python/examples.py),
# then "e2e: N passed, M failed" over all of them (", K skipped" if
# anything was skipped). Exits non-zero if anything failed or a client
# could not be installed. A client whose registry (PyPI, npm) is out of
# reach is not a failure: each group that needs it is one line "not run"
# with the reason, and counts as one skipped. Logs: .cache/e2e/<client>/.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
R_LIB=${R_LIB:-$ROOT/.lib}
OUT=$ROOT/.cache/e2e
start=$SECONDS

passed=0
failed=0
skipped=0

report() { # name, passed, failed, skipped[, note]
  local skips=""
  [ "$4" -gt 0 ] && skips=", $4 skipped"
  printf 'e2e %s: %d passed, %d failed%s%s\n' "$1" "$2" "$3" "$skips" "${5:+ ($5)}"
  passed=$((passed + $2))
  failed=$((failed + $3))
  skipped=$((skipped + $4))
}

finish() {
  echo "e2e: took $((SECONDS - start))s; logs in ${OUT#"$ROOT"/}/"
  if [ "$skipped" -gt 0 ]; then
    echo "e2e: $passed passed, $failed failed, $skipped skipped"
  else
    echo "e2e: $passed passed, $failed failed"
  fi
  exit $((failed > 0))
}

rm -rf "$OUT"
mkdir -p "$OUT"

# The package under test. A concurrent `make install` holds a lock in the
# library for a moment; wait for it rather than fail spuriously.
for _ in $(seq 90); do
  compgen -G "$R_LIB/00LOCK*" >/dev/null || break
  sleep 2
done
export R_LIBS="$R_LIB${R_LIBS:+:$R_LIBS}"
if ! Rscript -e 'library(mcpserver)' >"$OUT/r-package.log" 2>&1; then
  cat "$OUT/r-package.log" >&2
  echo "e2e: mcpserver is not installed in $R_LIB (run make install)" >&2
  report r-package 0 1 0
  finish
fi
export E2E_RSCRIPT
E2E_RSCRIPT=$(command -v Rscript)

# The clients. An installer exits 75 when its registry cannot be reached
# (the groups that need its clients are then not run, with its reason in
# unreachable/<name>), and 1 on any other failure (they fail).
mkdir -p "$OUT/unreachable"
install() { # name, command...
  local name=$1 status
  shift
  "$@" 2>"$OUT/install-$name.log"
  status=$?
  [ "$status" -eq 0 ] && return 0
  if [ "$status" -eq 75 ]; then
    tail -n 1 "$OUT/install-$name.log" >"$OUT/unreachable/$name"
  else
    cat "$OUT/install-$name.log" >&2
    echo "e2e: could not install the $name clients" >&2
  fi
  return 1
}
py2=$(install python-mcp2 tools/python-clients.sh mcp2) || py2=""
py1=$(install python-mcp1 tools/python-clients.sh mcp1) || py1=""
node_dir=$(install node tools/node-clients.sh) || node_dir=""
export E2E_PYTHON=${py2:-python3} E2E_NODE_CLIENTS=$node_dir

# Why a group cannot run: empty when its clients (and the mcp 2.x
# environment, whose jsonschema validates every wire) are there.
missing() { # installs the group needs, as name=path
  local pair name
  for pair in "$@"; do
    name=${pair%%=*}
    [ -n "${pair#*=}" ] && continue
    if [ -f "$OUT/unreachable/$name" ]; then
      echo "not run: $(cat "$OUT/unreachable/$name")"
    else
      echo "client not installed"
    fi
    return
  done
}

# Reports a group that cannot run: a failure if its clients failed to
# install, one skipped if their registry is out of reach.
cannot_run() { # name, why
  case "$2" in
    "not run:"*) report "$1" 0 0 1 "$2" ;;
    *) report "$1" 0 1 0 "$2" ;;
  esac
}

# Runs one driver against a fresh capture directory, validates the capture,
# and reports the PASS/FAIL/SKIP lines of both.
drive() { # name, needed install as name=path (empty path if missing), command...
  local name=$1 why dir=$OUT/$1
  why=$(missing "$2" "python-mcp2=$py2")
  shift 2
  if [ -n "$why" ]; then
    cannot_run "$name" "$why"
    return
  fi
  mkdir -p "$dir"
  local began=$SECONDS
  # A hung client must not hang the suite: every step has a time limit.
  run_driver "$dir" 120 env E2E_LOG_DIR="$dir/wire" "$@"
  timeout 60 "$py2" tests/e2e/validate_wire.py "$dir/wire" >"$dir/wire.txt" 2>&1
  local status=$?
  if [ "$status" -ne 0 ] && ! grep -q '^FAIL' "$dir/wire.txt"; then
    echo "FAIL wire-validation: validate_wire.py exited with status $status" >>"$dir/wire.txt"
  fi
  cat "$dir/wire.txt" >>"$dir/checks.txt"
  tally "$name" "$dir" "$began"
}

run_driver() { # dir, time limit, command...: checks.txt, stderr.txt
  local dir=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$dir/checks.txt" 2>"$dir/stderr.txt"
  local status=$?
  if [ "$status" -ne 0 ] && ! grep -q '^FAIL' "$dir/checks.txt"; then
    echo "FAIL driver: exited with status $status" >>"$dir/checks.txt"
  fi
}

tally() { # name, dir, start time: the report line, then what failed or was skipped
  local name=$1 dir=$2 began=$3
  report "$name" "$(grep -c '^PASS' "$dir/checks.txt")" "$(grep -c '^FAIL' "$dir/checks.txt")" \
    "$(grep -c '^SKIP' "$dir/checks.txt")" "$((SECONDS - began))s"
  # Show what failed right away, and what was skipped and why (the checks
  # skipped for one reason on one line).
  grep -A10 '^FAIL' "$dir/checks.txt" | grep -E '^(FAIL|    )' | sed 's/^/    /'
  grep '^SKIP' "$dir/checks.txt" | sed -E 's/^SKIP ([^:]*): (.*)$/\2\t\1/' | awk -F'\t' '
    !($1 in names) { order[++n] = $1 }
    { names[$1] = names[$1] (names[$1] == "" ? "" : ", ") $2 }
    END { for (i = 1; i <= n; i++) printf "    SKIP %s: %s\n", names[order[i]], order[i] }'
  # A session that broke down is usually explained by the server's stderr.
  if grep -Eq '^FAIL ([^ :]*/)?(connect|session|driver)' "$dir/checks.txt"; then
    echo "    server and client stderr (last lines of ${dir#"$ROOT"/}/stderr.txt):"
    tail -n 8 "$dir/stderr.txt" | sed 's/^/      /'
  fi
}

for mode in auto legacy 2026-07-28; do
  drive "python-mcp2-$mode" "python-mcp2=$py2" "$py2" tests/e2e/python/mcp2_client.py "$mode"
done
drive python-mcp1 "python-mcp1=$py1" "$py1" tests/e2e/python/mcp1_client.py
drive ts-sdk-v1 "node=$node_dir" node tests/e2e/node/ts_client.mjs v1
for mode in legacy auto 2026-07-28; do
  drive "ts-client-v2-$mode" "node=$node_dir" node tests/e2e/node/ts_client.mjs v2 "$mode"
done

# The same fixture served over Streamable HTTP, reached by URL through a
# recording proxy (http_capture.py) whose record is validated as above.
for mode in auto legacy 2026-07-28; do
  drive "http-python-mcp2-$mode" "python-mcp2=$py2" "$py2" tests/e2e/python/http_client.py "$mode"
done
for client in "v1 legacy" "v2 legacy" "v2 auto" "v2 2026-07-28"; do
  set -- $client
  drive "http-ts-$1-$2" "node=$node_dir" node tests/e2e/node/ts_http_client.mjs "$1" "$2"
done

# The stdio suite again, through the stdio-to-HTTP bridge: the client starts
# `Rscript -e 'mcpserver::mcp_bridge(url)'`, which reaches the same fixture
# served over HTTP; the wire the client sees is validated as above.
# Starts the fixture serving HTTP (in this shell, so that it can be
# stopped) and sets http_fixture (its pid) and http_url (empty if it did
# not say where it listens).
start_http_fixture() { # log file
  E2E_TRANSPORT=http Rscript tests/e2e/server.R >/dev/null 2>"$1" &
  http_fixture=$!
  http_url=""
  for _ in $(seq 150); do
    http_url=$(grep -o 'http://[^ ]*' "$1" 2>/dev/null | head -n 1)
    [ -n "$http_url" ] && return
    sleep 0.2
  done
}
for mode in auto legacy 2026-07-28; do
  why=$(missing "python-mcp2=$py2")
  if [ -n "$why" ]; then
    cannot_run "bridge-python-mcp2-$mode" "$why"
    continue
  fi
  mkdir -p "$OUT/bridge-python-mcp2-$mode"
  start_http_fixture "$OUT/bridge-python-mcp2-$mode/http-server.txt"
  if [ -n "$http_url" ]; then
    E2E_BRIDGE_URL=$http_url drive "bridge-python-mcp2-$mode" "python-mcp2=$py2" "$py2" tests/e2e/python/mcp2_client.py "$mode"
  else
    report "bridge-python-mcp2-$mode" 0 1 0 "the HTTP fixture did not start"
  fi
  kill "$http_fixture" 2>/dev/null
  wait "$http_fixture" 2>/dev/null
done

# The example servers, each listed, called with its sample arguments
# (examples.json) and its wire validated, by the mcp 2.x client.
if [ -n "$py2" ]; then
  began=$SECONDS
  mkdir -p "$OUT/examples"
  run_driver "$OUT/examples" 180 "$py2" tests/e2e/python/examples.py "$OUT/examples/wire"
  tally examples "$OUT/examples" "$began"
else
  cannot_run examples "$(missing "python-mcp2=$py2")"
fi

# Concurrent tools on future workers (tests/testthat/fixtures/workers.R):
# overlapping calls and relayed progress and logs, with the mcp 2.x client.
if [ -n "$py2" ]; then
  began=$SECONDS
  mkdir -p "$OUT/workers"
  run_driver "$OUT/workers" 180 "$py2" tests/e2e/python/workers.py "$OUT/workers/wire"
  tally workers "$OUT/workers" "$began"
else
  cannot_run workers "$(missing "python-mcp2=$py2")"
fi

# Asking the client (tests/testthat/fixtures/asking.R): forms of every field
# kind, sampling, roots and several requests in one round, answered by the
# mcp 2.x client's callbacks in legacy mode and on 2026-07-28.
if [ -n "$py2" ]; then
  began=$SECONDS
  mkdir -p "$OUT/asking"
  run_driver "$OUT/asking" 180 "$py2" tests/e2e/python/asking.py "$OUT/asking/wire"
  tally asking "$OUT/asking" "$began"
else
  cannot_run asking "$(missing "python-mcp2=$py2")"
fi

# MCP Apps (the io.modelcontextprotocol/ui extension) of the example server
# inst/examples/apps/server.R: its wire as the official SDK clients see it,
# with the extension declared and without; then a real host, Debian's
# Chromium driven by playwright-core (tests/e2e/apps/browser.mjs), whose
# screenshots are kept in .cache/e2e/apps-browser-<mode>/screenshots.
# Without Chromium the browser groups are not run (one skipped each).
apps_example=$ROOT/inst/examples/apps/server.R
for mode in legacy 2026-07-28; do
  E2E_SERVER=$apps_example drive "apps-python-$mode" "$py2" "$py2" tests/e2e/python/apps.py "$mode"
done
E2E_SERVER=$apps_example drive apps-ts-v1 "$node_dir" node tests/e2e/node/apps.mjs v1
for mode in legacy 2026-07-28; do
  E2E_SERVER=$apps_example drive "apps-ts-v2-$mode" "$node_dir" node tests/e2e/node/apps.mjs v2 "$mode"
done
chromium=${E2E_CHROMIUM:-/usr/bin/chromium}
# The plotly.js strict build the charts load from plotly's CDN, which the
# test serves (see browser.mjs): of the version R's plotly package uses.
plotly_version=$(Rscript -e 'd <- suppressMessages(suppressWarnings(htmltools::renderTags(plotly::plot_ly())$dependencies)); cat(Filter(function(x) x$name == "plotly-main", d)[[1]]$version)' 2>/dev/null)
plotly_strict=$(install plotly-strict tools/plotly-strict.sh "$plotly_version") || plotly_strict=""
for mode in legacy 2026-07-28; do
  if [ ! -x "$chromium" ]; then
    report "apps-browser-$mode" 0 0 1 "not run: $chromium is missing (tools/install-deps.sh installs Debian's chromium)"
    continue
  fi
  if [ -z "$plotly_strict" ]; then
    report "apps-browser-$mode" 0 1 0 "plotly.js $plotly_version (strict build) not fetched"
    continue
  fi
  E2E_CHROMIUM=$chromium E2E_SCREENSHOTS=$OUT/apps-browser-$mode/screenshots \
    E2E_PLOTLY_STRICT=$plotly_strict E2E_PLOTLY_VERSION=$plotly_version \
    drive "apps-browser-$mode" "$node_dir" node tests/e2e/apps/browser.mjs "$mode"
  grep '^screenshot:' "$OUT/apps-browser-$mode/checks.txt" 2>/dev/null | sed 's/^/    /'
done

finish
