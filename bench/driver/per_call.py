"""The per-call rows of `make bench` alone (sequential p50 and pipelined
calls with the server's CPU per call by thread), for two builds of
mcpserver side by side with the TypeScript SDK server and the pipe floor,
in one run whose order rotates every round (see bench/per-call.md).

  python3 bench/driver/per_call.py BEFORE_LIB AFTER_LIB [NODE_DIR]
  ROUNDS=5 CALLS=2000 PIPELINED=10000 python3 bench/driver/per_call.py ...

BEFORE_LIB and AFTER_LIB are R libraries holding an installed mcpserver;
NODE_DIR holds ts-sdk.mjs and its node_modules (default: bench/run.sh's
.cache/bench/node).
"""
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
import bench  # noqa: E402


def r_server(lib):
    return {"cmd": ["Rscript", "bench/servers/mcpserver.R"], "env": {**os.environ, "R_LIBS": lib}}


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    before, after = (str(Path(p).resolve()) for p in sys.argv[1:3])
    node_dir = Path(sys.argv[3]) if len(sys.argv) > 3 else bench.NODE_DIR
    rounds = int(os.environ.get("ROUNDS", "5"))
    calls = int(os.environ.get("CALLS", "2000"))
    pipelined = int(os.environ.get("PIPELINED", "10000"))
    bench.SERVERS = {
        "mcpserver before": r_server(before),
        "mcpserver after": r_server(after),
        "ts-sdk": {"cmd": ["node", str(node_dir / "ts-sdk.mjs")]},
    }
    print(f"load before: {load()}", flush=True)
    busy0, own0, t0 = bench.busy_seconds(), bench.own_seconds(), time.time()
    latency = bench.bench_latency(rounds, calls, 200)
    throughput = bench.bench_throughput(rounds, pipelined, 500)
    others = (bench.busy_seconds() - busy0) - (bench.own_seconds() - own0)
    share = max(others, 0) / ((time.time() - t0) * (os.cpu_count() or 1))
    print(f"load after: {load()}; other work's share of the CPU during the run: {share:.0%}")
    med = statistics.median
    print("| | p50 (us) | pipelined (calls/s) | server CPU per call (us) | by thread (us) |")
    print("|---|---|---|---|---|")
    for name in [*bench.SERVERS, bench.FLOOR_NAME]:
        lat, thr = latency.get(name, []), throughput.get(name, [])
        threads = sorted({t for r in thr for t in r["cpu_us_by_thread"]})
        by_thread = ", ".join(
            f"{t} {med([r['cpu_us_by_thread'].get(t, 0.0) for r in thr]):.1f}" for t in threads)
        p50 = med([r["p50_us"] for r in lat]) if lat else float("nan")
        rate = med([r["calls_per_s"] for r in thr]) if thr else float("nan")
        cpu = med([r["cpu_us_per_call"] for r in thr]) if thr else float("nan")
        print(f"| {name} | {p50:.0f} | {rate:,.0f} | {cpu:.1f} | {by_thread} |")
    if bench.ERRORS:
        print("errors:", bench.ERRORS)


if __name__ == "__main__":
    main()
