"""What middleware costs per request: mcpserver's stdio peer without
middleware and with one trivial middleware (`function(request, call_next)
call_next(request)`, MCPSERVER_BENCH_MIDDLEWARE=1 in bench/servers/mcpserver.R),
side by side in one run, the order alternating every round.

Each run starts a fresh server, warms it up, then writes a burst of N
requests at once (`tools/call` of `add`, then `tools/list`) and reads every
answer. The measure is the server's CPU time per request, all threads
summed (from /proc/<pid>/task/*/stat): CPU time holds up on a loaded
machine where wall clock does not. Ratios are taken round by round (the
two runs of a round are seconds apart and share the load of the moment)
and their median reported.

  python3 bench/driver/middleware.py [--r-lib LIB] [--rounds 5] [--calls 5000]

As a scenario of bench/driver/bench.py, `bench_middleware()` returns the
same numbers as a dict for bench/driver/report.py.
"""
import argparse
import json
import os
import statistics
import threading
import time
from pathlib import Path

from mcppipe import Proc, call, encode

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ("none", "trivial")


def list_request(id_):
    return encode({"jsonrpc": "2.0", "id": id_, "method": "tools/list"})


def burst(proc, requests, n):
    """CPU seconds per request (all threads) and requests per second."""
    writer = threading.Thread(target=proc.send, args=(b"".join(requests),))
    cpu0 = proc.thread_cpu_s()
    t0 = time.perf_counter()
    writer.start()
    lines = proc.read_lines(n, timeout=600)
    seconds = time.perf_counter() - t0
    cpu1 = proc.thread_cpu_s()
    writer.join()
    for line in lines:  # checked off the clock
        msg = json.loads(line)
        if "error" in msg or msg["result"].get("isError"):
            raise RuntimeError(f"error answer {line[:200]!r}")
    cpu = sum(cpu1[t] - cpu0.get(t, 0.0) for t in cpu1)
    return cpu / n * 1e6, n / seconds


def one_run(lib, variant, calls, log_path=None):
    env = {**os.environ, "R_LIBS": lib}
    if variant == "trivial":
        env["MCPSERVER_BENCH_MIDDLEWARE"] = "1"
    else:
        env.pop("MCPSERVER_BENCH_MIDDLEWARE", None)
    proc = Proc(["Rscript", "bench/servers/mcpserver.R"], env=env, cwd=str(ROOT), log_path=log_path)
    try:
        proc.handshake()
        burst(proc, [call(10 + i, "add", {"x": i, "y": 1}) for i in range(300)], 300)
        first = 1000
        call_us, call_rate = burst(proc, [call(first + i, "add", {"x": i, "y": 1}) for i in range(calls)], calls)
        first += calls
        list_us, list_rate = burst(proc, [list_request(first + i) for i in range(calls)], calls)
        proc.close()
        return {"call_cpu_us": call_us, "call_per_s": call_rate, "list_cpu_us": list_us, "list_per_s": list_rate}
    finally:
        proc.kill()


def bench_middleware(lib, rounds, calls, log=print, logs_dir=None):
    runs = {v: [] for v in VARIANTS}
    for r in range(rounds):
        for variant in VARIANTS if r % 2 == 0 else VARIANTS[::-1]:
            log_path = Path(logs_dir) / f"middleware-{variant}.{r}.log" if logs_dir else None
            runs[variant].append(one_run(lib, variant, calls, log_path))
        log(f"middleware round {r + 1}/{rounds}: call CPU {runs['none'][-1]['call_cpu_us']:.0f} us without, "
            f"{runs['trivial'][-1]['call_cpu_us']:.0f} us with a trivial middleware")
    out = {"rounds": rounds, "calls": calls, "runs": runs}
    for key in ("call_cpu_us", "list_cpu_us", "call_per_s", "list_per_s"):
        out[key] = {v: statistics.median(run[key] for run in runs[v]) for v in VARIANTS}
    for key in ("call_cpu_us", "list_cpu_us"):
        # 1 tick is 10 ms: a burst too short to show is left out of the ratio.
        ratios = [b[key] / a[key] for a, b in zip(runs["none"], runs["trivial"]) if a[key] > 0]
        out[key.replace("_us", "_ratio")] = statistics.median(ratios) if ratios else float("nan")
        added = [b[key] - a[key] for a, b in zip(runs["none"], runs["trivial"])]
        out[key.replace("_us", "_added_us")] = statistics.median(added)
    return out


def table(res):
    """The report's rows (bench/driver/report.py)."""
    c, lst = res["call_cpu_us"], res["list_cpu_us"]
    return "\n".join([
        "| Server CPU per request, all threads (µs) | no middleware | one trivial middleware | added | ratio |",
        "|---|---|---|---|---|",
        f"| `tools/call` of `add` | {c['none']:.0f} | {c['trivial']:.0f} | {res['call_cpu_added_us']:.0f} "
        f"| {res['call_cpu_ratio']:.2f} |",
        f"| `tools/list` (answered in Rust without middleware, in R with it) | {lst['none']:.0f} "
        f"| {lst['trivial']:.0f} | {res['list_cpu_added_us']:.0f} | {res['list_cpu_ratio']:.2f} |",
        "",
        f"Bursts of {res['calls']:,} requests, median of {res['rounds']} rounds (ratios and added µs "
        f"round by round). Pipelined calls per second: {res['call_per_s']['none']:,.0f} without, "
        f"{res['call_per_s']['trivial']:,.0f} with; lists per second: {res['list_per_s']['none']:,.0f} "
        f"without, {res['list_per_s']['trivial']:,.0f} with.",
    ])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--r-lib", default=str(ROOT / ".cache" / "bench-lib"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--out")
    opts = ap.parse_args()
    res = bench_middleware(os.path.abspath(opts.r_lib), opts.rounds, opts.calls)
    if opts.out:
        Path(opts.out).write_text(json.dumps(res, indent=1))
    print(table(res))


if __name__ == "__main__":
    main()
