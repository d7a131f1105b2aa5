"""CPU time per call of each server thread, for installed builds side by side.

Each run starts a fresh server, warms it up with 300 sequential `add` calls,
then writes a burst of N `add` calls at once and reads every answer; the CPU
time each thread spent during the burst (from /proc/<pid>/task/<tid>/stat),
divided by N, is that thread's cost per call. CPU time, unlike wall clock,
holds up better than wall clock on a machine other work is loading. The
order of the builds alternates every round; medians and ranges are over
rounds. Each build after the first is also compared with the first round by
round (the runs of one round are seconds apart, so they share the load of
the moment): the median of those ratios is steadier than a ratio of medians.

  python3 bench/driver/threads.py LIB_A LIB_B [...]   # R libraries, one build each
  ROUNDS=6 CALLS=10000 python3 bench/driver/threads.py ...
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import mcppipe as m  # noqa: E402


def one_run(lib, calls):
    p = m.Proc(["Rscript", "bench/servers/mcpserver.R"], env={**os.environ, "R_LIBS": lib})
    p.handshake()
    for i in range(300):
        p.send(m.call(i, "add", {"x": 1, "y": 2}))
        p.response(i)
    burst = b"".join(m.call(100000 + i, "add", {"x": i, "y": 2}) for i in range(calls))
    before = p.thread_cpu_s()
    started = time.perf_counter()
    p.send(burst)
    p.read_lines(calls)
    elapsed = time.perf_counter() - started
    after = p.thread_cpu_s()
    p.close()
    per_call = {t: (after[t] - before.get(t, 0.0)) / calls * 1e6 for t in after}
    return calls / elapsed, per_call


def main():
    libs = sys.argv[1:]
    if not libs:
        sys.exit(__doc__)
    rounds = int(os.environ.get("ROUNDS", "6"))
    calls = int(os.environ.get("CALLS", "10000"))
    runs = {lib: [] for lib in libs}
    for r in range(rounds):
        for lib in libs if r % 2 == 0 else libs[::-1]:
            runs[lib].append(one_run(lib, calls))
    for lib in libs:
        rows = runs[lib]
        rate = statistics.median(rate for rate, _ in rows)
        print(f"{lib}: {rate:,.0f} calls/s (median of {len(rows)})")
        for thread in sorted({t for _, cpu in rows for t in cpu}):
            values = sorted(cpu.get(thread, 0.0) for _, cpu in rows)
            print(f"  {thread:<12} {statistics.median(values):6.1f} us/call"
                  f"  (range {values[0]:.1f}-{values[-1]:.1f})")
    first = libs[0]
    for lib in libs[1:]:
        ratios = sorted(
            b[1]["R"] / a[1]["R"]
            for a, b in zip(runs[first], runs[lib])
            if a[1].get("R") and "R" in b[1]
        )
        if ratios:
            print(f"R's thread, {lib} / {first}, round by round: median "
                  f"{statistics.median(ratios):.3f} (range {ratios[0]:.3f}-{ratios[-1]:.3f})")


if __name__ == "__main__":
    main()
