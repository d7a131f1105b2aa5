"""A/B of two installed builds of mcpserver on this machine, same driver:
median p50 of 2,000 sequential `add` calls, and calls/s and server CPU per
call for 10,000 calls written at once; 4 rounds, the order alternating.

  python3 bench/driver/ab.py OLD_LIB NEW_LIB   # R libraries holding each build
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import mcppipe as m  # noqa: E402


def one_run(lib):
    env = {**os.environ, "R_LIBS": lib}
    p = m.Proc(["Rscript", "bench/servers/mcpserver.R"], env=env)
    p.handshake()
    for i in range(200):  # warm-up
        p.send(m.call(i, "add", {"x": 1, "y": 2}))
        p.response(i)
    times = []
    for i in range(1000, 3000):
        t = time.perf_counter()
        p.send(m.call(i, "add", {"x": 1, "y": 2}))
        p.response(i)
        times.append(time.perf_counter() - t)
    n = 10000
    burst = b"".join(m.call(100000 + i, "add", {"x": i, "y": 2}) for i in range(n))
    cpu0 = sum(p.thread_cpu_s().values())
    t = time.perf_counter()
    p.send(burst)
    p.read_lines(n)
    elapsed = time.perf_counter() - t
    cpu1 = sum(p.thread_cpu_s().values())
    p.close()
    return statistics.median(times) * 1e6, n / elapsed, (cpu1 - cpu0) / n * 1e6


def main():
    libs = {"A": sys.argv[1], "B": sys.argv[2]}
    runs = {k: [] for k in libs}
    for rnd in range(4):
        for k in (["A", "B"] if rnd % 2 == 0 else ["B", "A"]):
            runs[k].append(one_run(libs[k]))
    for k, rows in runs.items():
        p50, tput, cpu = (statistics.median(col) for col in zip(*rows))
        print(f"{k} ({libs[k]}): p50 {p50:.0f} us, {tput:,.0f} calls/s, {cpu:.1f} us CPU per call")


if __name__ == "__main__":
    main()
