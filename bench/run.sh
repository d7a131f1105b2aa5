#!/bin/sh
# `make bench`: mcpserver against the servers a user would pick instead,
# side by side in one run. Installs every peer pinned under .cache/bench,
# installs the package from the working tree into .cache/bench-lib, runs
# the measurements, prints the table and writes bench/README.md.
#   bench/run.sh           # the full run (under ~10 minutes on 2 cores)
#   bench/run.sh --quick   # tiny counts, to try the harness; README untouched
set -eu
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
started=$(date +%s)
cache=.cache/bench
mkdir -p "$cache/logs" "$cache/results"
rm -f "$cache"/logs/*.log # this run's server logs only

for tool in Rscript python3 node npm perl cargo; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is not on PATH" >&2; exit 1; }
done

# Reinstall a peer only when its pins change: the stamp names their checksum.
stamp_of() { cat "$@" | cksum | cut -d' ' -f1; }

echo "== Python SDK peer (bench/servers/requirements.txt)"
py_stamp="$cache/python/.installed-$(stamp_of bench/servers/requirements.txt)"
if [ ! -f "$py_stamp" ]; then
  rm -rf "$cache/python"
  python3 -m venv "$cache/python"
  "$cache/python/bin/pip" install --quiet --disable-pip-version-check -r bench/servers/requirements.txt
  touch "$py_stamp"
fi

echo "== TypeScript SDK peer (bench/servers/package-lock.json)"
node_stamp="$cache/node/.installed-$(stamp_of bench/servers/package.json bench/servers/package-lock.json)"
if [ ! -f "$node_stamp" ]; then
  rm -rf "$cache/node"
  mkdir -p "$cache/node"
  cp bench/servers/package.json bench/servers/package-lock.json "$cache/node/"
  (cd "$cache/node" && npm ci --no-audit --no-fund --loglevel=error)
  touch "$node_stamp"
fi
# Node resolves packages next to the script, so the server runs from there.
cp bench/servers/ts-sdk.mjs "$cache/node/ts-sdk.mjs"

echo "== mcpserver from the working tree into .cache/bench-lib"
# Built from a copy so that nothing is written into src/ while someone else
# builds there. The copy's Rust target directory lives on between runs
# (a symlink), so only the first run compiles everything.
src="$cache/src"
copy_tree() {
  rm -rf "$src"
  mkdir -p "$src" "$cache/target"
  # Tracked and untracked files git does not ignore (those deleted but not
  # committed left out); the vendored crates (committed) only if asked for.
  git ls-files --cached --others --exclude-standard -- . ':!bench' |
    { if [ "$1" = vendored ]; then cat; else grep -vx 'src/rust/vendor.tar.xz'; fi; } |
    while IFS= read -r f; do [ -f "$f" ] && echo "$f"; done | sort -u |
    tar -cf - -T - | tar -xf - -C "$src"
  ln -s "$PWD/$cache/target" "$src/src/rust/target"
}
install_copy() {
  MCPSERVER_KEEP_TARGET=1 R CMD INSTALL --no-test-load -l .cache/bench-lib "$src" \
    >>"$cache/logs/install.log" 2>&1
}
mkdir -p .cache/bench-lib
: >"$cache/logs/install.log"
# The vendored crates first (an offline build, as `make install` does). A
# tarball older than a dependency change fails that build; then the crates
# come from cargo's own cache, still offline (no registry is reachable).
copy_tree vendored
if ! install_copy; then
  echo "   (the build from the vendored crates failed, see the log; retrying with cargo's cache)"
  copy_tree plain
  if ! CARGO_NET_OFFLINE=true install_copy; then
    tail -30 "$cache/logs/install.log" >&2
    echo "bench: installing mcpserver failed; see $cache/logs/install.log" >&2
    exit 1
  fi
fi

echo "== measuring (progress on stderr; server logs in $cache/logs)"
results="$cache/results/$(date +%Y%m%d-%H%M%S).json"
python3 bench/driver/bench.py --out "$results" "$@"
echo "== measuring over HTTP (bench/driver/http_bench.py)"
http_results="$cache/results/http-$(date +%Y%m%d-%H%M%S).json"
python3 bench/driver/http_bench.py --out "$http_results" "$@" >/dev/null

echo "== concurrent tools on workers (bench/workers.R)"
workers_results="$cache/results/workers-$(date +%Y%m%d-%H%M%S).md"
workers_arg=""
if Rscript bench/workers.R .cache/bench-lib "$cache/python/bin/python" >"$workers_results" 2>"$cache/logs/workers.log"; then
  workers_arg="--workers $workers_results"
else
  echo "   (bench/workers.R failed, see $cache/logs/workers.log; its section is left out)"
fi

readme=bench/README.md
case " $* " in *" --quick "*) readme="$cache/README.quick.md" ;; esac
# shellcheck disable=SC2086 # empty, or the option and its file
python3 bench/driver/report.py "$results" --http "$http_results" $workers_arg --readme "$readme" \
  --total-seconds $(( $(date +%s) - started )) --command "bench/run.sh${*:+ $*}"
