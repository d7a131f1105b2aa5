"""Runs every benchmark scenario against every peer and writes the raw
results as JSON. Started by bench/run.sh, which installs the peers first.

    python3 bench/driver/bench.py --out results.json [--quick]

Each scenario starts a fresh server process per run, so each run's peak RSS
belongs to that scenario alone. Runs alternate between servers (the order
rotates every round) so that drift in the machine's state spreads evenly.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import big_values
from mcppipe import Proc, call, encode
from middleware import bench_middleware
from summary import Record, percentile, rotations

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "bench"
RLIB = ROOT / ".cache" / "bench-lib"
LOGS = CACHE / "logs"
PYTHON = str(CACHE / "python" / "bin" / "python")
NODE_DIR = CACHE / "node"

R_ENV = {**os.environ, "R_LIBS": str(RLIB)}

SERVERS = {
    "mcpserver": {"cmd": ["Rscript", "bench/servers/mcpserver.R"], "env": R_ENV},
    "python-sdk": {"cmd": [PYTHON, "bench/servers/python-sdk.py"]},
    "ts-sdk": {"cmd": ["node", str(NODE_DIR / "ts-sdk.mjs")]},
    "plain-r": {"cmd": ["Rscript", "bench/servers/plain-r.R"], "env": R_ENV},
}

# The floor under a round trip: the driver, two pipes and a process that
# answers every line at once with a canned result (bench/servers/pipe-floor.pl).
# What a server adds on top of it is the server's own cost.
FLOOR_NAME = "pipe floor"
FLOOR = {"cmd": ["perl", "bench/servers/pipe-floor.pl"]}

# What each runtime costs before any MCP code runs, and with the MCP
# library loaded, so start-up can be split into its shares. Each prints an
# empty line as its last act: the time to that line is comparable with a
# server's time to its first answer (neither includes tearing down), the
# time to exit is what `Rscript -e 'q()'` alone would show.
BARE = {
    "bare Rscript": {"cmd": ["Rscript", "-e", "cat('\\n'); q()"]},
    "Rscript + library(mcpserver)": {"cmd": ["Rscript", "-e", "library(mcpserver); cat('\\n')"], "env": R_ENV},
    "bare python": {"cmd": [PYTHON, "-c", "print()"]},
    "python + import mcp.server": {"cmd": [PYTHON, "-c", "from mcp.server import MCPServer; print()"]},
    "bare node": {"cmd": ["node", "-e", "console.log()"]},
    "node + import SDK": {"cmd": ["node", "--input-type=module", "-e",
                                  'import "@modelcontextprotocol/sdk/server/mcp.js";'
                                  'import "@modelcontextprotocol/sdk/server/stdio.js"; console.log()'],
                          "cwd": str(NODE_DIR)},
}

FULL = dict(startup_runs=10, latency_rounds=5, latency_calls=2000, latency_warmup=200,
            throughput_rounds=5, pipelined=10000, throughput_warmup=500,
            large_rounds=3, large_calls=2, big_rounds=2, big_calls=2, ping_rounds=2, sleep_s=5.0, micro_reps=3,
            middleware_rounds=5, middleware_calls=5000,
            r_call_iterations=200000, result_path_reps=5)
QUICK = dict(startup_runs=2, latency_rounds=1, latency_calls=300, latency_warmup=50,
             throughput_rounds=1, pipelined=2000, throughput_warmup=100,
             large_rounds=1, large_calls=1, big_rounds=1, big_calls=1, ping_rounds=1, sleep_s=2.0, micro_reps=1,
             middleware_rounds=1, middleware_calls=2000,
             r_call_iterations=20000, result_path_reps=1)


# A run that fails (a server crashes, an answer is wrong) is recorded and
# reported rather than ending the whole benchmark.
RECORD = Record("[bench]")
log, failed, ERRORS = RECORD.log, RECORD.failed, RECORD.errors


def spawn(label, spec, scenario, r):
    LOGS.mkdir(parents=True, exist_ok=True)
    return Proc(spec["cmd"], env=spec.get("env"), cwd=spec.get("cwd", str(ROOT)),
                log_path=LOGS / f"{label}.{scenario}.{r}.log")


# -- scenarios -----------------------------------------------------------------

def bench_startup(n):
    """Launch -> answer to tools/list (after initialize), and bare runtimes."""
    out = {name: {"ms": [], "exit_ms": [], "peak_rss_mb": []} for name in [*SERVERS, *BARE]}
    everything = {**SERVERS, **BARE}
    for r, order in rotations(everything, n):
        for name in order:
            spec = everything[name]
            if name in BARE:
                t0 = time.perf_counter()
                p = subprocess.Popen(spec["cmd"], env=spec.get("env"), cwd=spec.get("cwd", str(ROOT)),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
                p.stdout.readline()
                out[name]["ms"].append((time.perf_counter() - t0) * 1e3)
                if p.wait() != 0:
                    raise RuntimeError(f"{name} exited with {p.returncode}")
                out[name]["exit_ms"].append((time.perf_counter() - t0) * 1e3)
                p.stdout.close()
                continue
            proc = spawn(name, spec, "startup", r)
            try:
                out[name]["ms"].append(proc.handshake() * 1e3)
                out[name]["peak_rss_mb"].append(proc.close())
            except Exception as e:  # noqa: BLE001 - recorded, reported
                failed("startup", name, e)
            finally:
                proc.kill()
        log(f"startup round {r + 1}/{n} done")
    return out


def bench_latency(rounds, calls, warmup):
    """Sequential tools/call round trips on add."""
    out = {}
    specs = {**SERVERS, FLOOR_NAME: FLOOR}
    for r, order in rotations(specs, rounds):
        for name in order:
            proc = spawn(name, specs[name], "latency", r)
            try:
                if name in SERVERS:
                    proc.handshake()
                reqs = [call(100 + i, "add", {"x": i, "y": 0.5}) for i in range(warmup + calls)]
                times, lines = [], []
                for i, req in enumerate(reqs):
                    t0 = time.perf_counter()
                    proc.send(req)
                    line = proc.read_line()
                    if i >= warmup:
                        times.append(time.perf_counter() - t0)
                        lines.append(line)
                for i, line in enumerate(lines):  # checked off the clock
                    msg = json.loads(line)
                    if msg.get("id") != 100 + warmup + i or "error" in msg or msg["result"].get("isError"):
                        raise RuntimeError(f"{name}: unexpected answer {line[:200]!r}")
                us = [t * 1e6 for t in times]
                res = {"p50_us": statistics.median(us), "p99_us": percentile(us, 99),
                       "mean_us": statistics.fmean(us), "peak_rss_mb": proc.close()}
                out.setdefault(name, []).append(res)
                log(f"latency {name}: p50 {res['p50_us']:.0f} us, p99 {res['p99_us']:.0f} us")
            except Exception as e:  # noqa: BLE001 - recorded, reported
                failed("latency", name, e)
            finally:
                proc.kill()
    return out


def bench_throughput(rounds, n, warmup):
    """n tools/call written at once; calls per second until the last answer."""
    out = {}
    specs = {**SERVERS, FLOOR_NAME: FLOOR}
    for r, order in rotations(specs, rounds):
        for name in order:
            proc = spawn(name, specs[name], "throughput", r)
            try:
                if name in SERVERS:
                    proc.handshake()
                for batch, first in ((warmup, 10), (n, 10 + warmup)):
                    blob = b"".join(call(first + i, "add", {"x": i, "y": 0.5}) for i in range(batch))
                    # A writer thread, so that a server answering while we
                    # still write can never fill both pipes and deadlock.
                    writer = threading.Thread(target=proc.send, args=(blob,))
                    cpu0 = proc.thread_cpu_s()
                    t0 = time.perf_counter()
                    writer.start()
                    lines = proc.read_lines(batch, timeout=600)
                    seconds = time.perf_counter() - t0
                    cpu1 = proc.thread_cpu_s()
                    writer.join()
                # The server's CPU per call, by thread: where the time goes
                # when calls queue up (1 tick = 10 ms, fine over 10,000 calls).
                cpu_us = {t: (cpu1[t] - cpu0.get(t, 0.0)) / n * 1e6 for t in cpu1}
                ids = set()
                for line in lines:  # checked off the clock
                    msg = json.loads(line)
                    if "error" in msg or msg["result"].get("isError"):
                        raise RuntimeError(f"{name}: error answer {line[:200]!r}")
                    ids.add(msg["id"])
                if ids != set(range(10 + warmup, 10 + warmup + n)):
                    raise RuntimeError(f"{name}: answers do not match the requests")
                res = {"calls_per_s": n / seconds, "seconds": seconds, "cpu_us_per_call": sum(cpu_us.values()),
                       "cpu_us_by_thread": {t: v for t, v in cpu_us.items() if v >= 0.5},
                       "peak_rss_mb": proc.close()}
                out.setdefault(name, []).append(res)
                log(f"throughput {name}: {res['calls_per_s']:.0f} calls/s, "
                    f"{res['cpu_us_per_call']:.0f} us CPU per call")
            except Exception as e:  # noqa: BLE001 - recorded, reported
                failed("throughput", name, e)
            finally:
                proc.kill()
    return out


def check_table(msg):
    result = msg["result"]
    rows = result.get("structuredContent", {}).get("result")
    if result.get("isError") or not isinstance(rows, list) or len(rows) != 100000 or len(rows[0]) != 10:
        raise RuntimeError(f"unexpected big_table answer: {str(msg)[:300]}")


def pings_until(proc, answer_id, interval, timeout):
    """Sends pings one after another (interval apart) until the answer to
    request answer_id has arrived; returns the ping round trips in ms.
    Lines over 1 MB are taken for the awaited answer unparsed (the SDKs put
    "id" at different ends of the line)."""
    pings, done, pid = [], False, 1000
    while not done:
        t0 = time.perf_counter()
        proc.send(encode({"jsonrpc": "2.0", "id": pid, "method": "ping"}))
        while True:
            line = proc.read_line(timeout)
            msg = None if len(line) > 1 << 20 else json.loads(line)
            mid = answer_id if msg is None else msg.get("id")
            if mid == answer_id:
                done = True
            elif mid == pid:
                break
        if "error" in msg:
            raise RuntimeError(f"ping failed: {msg}")
        pings.append((time.perf_counter() - t0) * 1e3)
        pid += 1
        if not done:
            time.sleep(interval)
    return pings


def bench_large(rounds, calls):
    """The 100,000-row table as structured content: time to the answer and
    bytes received. The first call builds the table and is reported apart.
    A last call is made with pings running beside it: how long the control
    plane is held up while a large result is produced and sent."""
    out = {}
    specs = {**SERVERS, FLOOR_NAME: FLOOR}
    for r, order in rotations(specs, rounds):
        for name in order:
            proc = spawn(name, specs[name], "large", r)
            try:
                if name in SERVERS:
                    proc.handshake()
                t0 = time.perf_counter()
                proc.send(call(10, "big_table", {}))
                line = proc.read_line(timeout=300)
                first = time.perf_counter() - t0
                if name in SERVERS:
                    check_table(json.loads(line))
                times = []
                for i in range(calls):
                    t0 = time.perf_counter()
                    proc.send(call(11 + i, "big_table", {}))
                    line = proc.read_line(timeout=300)
                    times.append(time.perf_counter() - t0)
                proc.send(call(99, "big_table", {}))
                time.sleep(0.002)
                pings = pings_until(proc, 99, 0.005, 300)
                res = {"first_call_s": first, "times_s": times, "bytes": len(line) + 1,
                       "pings_ms": pings, "peak_rss_mb": proc.close()}
                out.setdefault(name, []).append(res)
                log(f"large {name}: {statistics.median(times):.3f} s, {res['bytes'] / 1e6:.1f} MB, "
                    f"ping max {max(pings):.0f} ms")
            except Exception as e:  # noqa: BLE001 - recorded, reported
                failed("large", name, e)
            finally:
                proc.kill()
    return out


def bench_big_values(rounds, calls):
    """Big values (bench/driver/big_values.py): a 3,000,000-number
    argument, a 2,400,000-decimal one, and the table with and without an output schema, against the
    SDK servers and the pipe floor (plain-r does not serve these tools)."""
    specs = {**SERVERS, FLOOR_NAME: FLOOR}

    def start(name, case, r):
        proc = spawn(name, specs[name], f"big-{case}", r)
        if name != FLOOR_NAME:
            proc.handshake()
        return proc

    runs = big_values.measure(start, ["mcpserver", "python-sdk", "ts-sdk", FLOOR_NAME],
                              ["numbers", "decimals", "table", "table_open"], rounds, calls, log)
    for case, by_server in runs.items():
        for name, results in by_server.items():
            for res in results:
                if "error" in res:
                    ERRORS.append({"scenario": f"big {case}", "server": name, "error": res["error"]})
    return big_values.summary(runs)


PING_CASES = {
    "mcpserver": ("mcpserver", "slow"),
    "python-sdk": ("python-sdk", "slow"),
    "ts-sdk": ("ts-sdk", "slow"),
    "ts-sdk (async sleep)": ("ts-sdk", "slow_async"),
    "plain-r": ("plain-r", "slow"),
}


def bench_ping(rounds, sleep_s):
    """ping round trips, one after another, while a sleep_s-second tool runs."""
    out = {}
    for r, order in rotations(PING_CASES, rounds):
        for label in order:
            server, tool = PING_CASES[label]
            proc = spawn(server, SERVERS[server], "ping", r)
            try:
                proc.handshake()
                t_call = time.perf_counter()
                proc.send(call(10, tool, {"seconds": sleep_s}))
                time.sleep(0.2)  # let the tool start
                pings = pings_until(proc, 10, 0.1, sleep_s + 60)
                res = {"pings_ms": pings, "tool_s": time.perf_counter() - t_call,
                       "peak_rss_mb": proc.close()}
                out.setdefault(label, []).append(res)
                log(f"ping {label}: median {statistics.median(pings):.2f} ms, "
                    f"max {max(pings):.1f} ms over {len(pings)} pings")
            except Exception as e:  # noqa: BLE001 - recorded, reported
                failed("ping", label, e)
            finally:
                proc.kill()
    return out


def run_r_json(args):
    res = subprocess.run(["Rscript", *args], env=R_ENV, cwd=ROOT, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"Rscript {' '.join(args)} failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def bench_micro(reps, iterations, path_reps):
    """R -> JSON mapping, mcpserver's mapper against jsonlite, each pair in
    fresh processes, alternating which encoder goes first."""
    out = {"r_call": run_r_json(["bench/micro/r-call.R", str(iterations)]), "json": [],
           "result_path": {step: run_r_json(["bench/micro/result-path.R", step, str(path_reps)])
                           for step in ("encode", "render", "validate")}}
    for k, obj in enumerate(["data_frame", "numeric", "nested"]):
        encoders = ["mcpserver", "jsonlite"][::(-1) ** k]
        for enc in encoders:
            res = run_r_json(["bench/micro/json-map.R", obj, enc, str(reps)])
            out["json"].append(res)
            log(f"micro {obj} {enc}: {res['median_s'] * 1e3:.1f} ms, peak +{res['peak_extra_mb']:.0f} MB")
    return out


# -- the machine ---------------------------------------------------------------

def first_line(cmd, **kw):
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, **kw)
        return (res.stdout or res.stderr).strip().splitlines()[0]
    except Exception as e:  # noqa: BLE001 - reported, not fatal
        return f"unknown ({e})"


def machine():
    info = {}
    for line in open("/proc/cpuinfo"):
        if ":" in line:
            key, value = (x.strip() for x in line.split(":", 1))
            info.setdefault(key, value)  # the first core's
    cpu = (f"{info.get('model name', '?')} (family {info.get('cpu family', '?')}, model "
           f"{info.get('model', '?')}, {float(info.get('cpu MHz', 'nan')):.0f} MHz, "
           f"{info.get('cache size', '?')} cache)")
    mem_kb = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal"))
    git = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip()
    r_pkgs = subprocess.run(
        ["Rscript", "-e", 'cat(format(packageVersion("mcpserver")), format(packageVersion("jsonlite")))'],
        env=R_ENV, capture_output=True, text=True).stdout.split()
    return {
        "cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem_kb / 1024 ** 2, 1),
        "os": first_line(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]),
        "kernel": platform.release(),
        "r": first_line(["Rscript", "--version"]),
        "python": first_line([PYTHON, "--version"]),
        "node": first_line(["node", "--version"]),
        "mcp_python": first_line([PYTHON, "-c", "import importlib.metadata as m; print(m.version('mcp'))"]),
        "mcp_ts": json.load(open(NODE_DIR / "node_modules/@modelcontextprotocol/sdk/package.json"))["version"],
        "zod": json.load(open(NODE_DIR / "node_modules/zod/package.json"))["version"],
        "mcpserver": r_pkgs[0] if r_pkgs else "?", "jsonlite": r_pkgs[1] if len(r_pkgs) > 1 else "?",
        "git": git,
    }


def busy_seconds():
    """CPU seconds the whole machine has spent busy since boot."""
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:8]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def own_seconds():
    """CPU seconds of this driver and every server it started and reaped."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def cpu_busy(seconds=1.0):
    """Fraction of all cores busy over `seconds` (from /proc/stat): what
    else is running on the machine."""
    def sample():
        fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
        idle = fields[3] + fields[4]  # idle + iowait
        return sum(fields) - idle, sum(fields)
    b0, t0 = sample()
    time.sleep(seconds)
    b1, t1 = sample()
    return (b1 - b0) / max(t1 - t0, 1)


def wait_for_quiet(limit_s=60):
    """Other work on the machine (a compiler, a test run) skews every
    number, so wait a while for it to end; measure anyway after limit_s."""
    t0 = time.time()
    busy = cpu_busy()
    while busy > 0.25 and time.time() - t0 < limit_s:
        log(f"machine {busy:.0%} busy with other work; waiting for it to settle")
        time.sleep(5)
        busy = cpu_busy()
    return busy


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="tiny counts, to try the harness")
    opts = ap.parse_args()
    n = QUICK if opts.quick else FULL
    results = {"counts": n, "quick": opts.quick, "machine": machine(),
               "busy_before": wait_for_quiet(),
               "started": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    t0 = time.time()
    busy0, own0 = busy_seconds(), own_seconds()
    results["startup"] = bench_startup(n["startup_runs"])
    results["latency"] = bench_latency(n["latency_rounds"], n["latency_calls"], n["latency_warmup"])
    results["throughput"] = bench_throughput(n["throughput_rounds"], n["pipelined"], n["throughput_warmup"])
    results["large"] = bench_large(n["large_rounds"], n["large_calls"])
    results["big_values"] = bench_big_values(n["big_rounds"], n["big_calls"])
    results["ping"] = bench_ping(n["ping_rounds"], n["sleep_s"])
    try:
        results["middleware"] = bench_middleware(str(RLIB), n["middleware_rounds"], n["middleware_calls"],
                                                 log=log, logs_dir=LOGS)
    except Exception as e:  # noqa: BLE001 - recorded, reported
        failed("middleware", "mcpserver", e)
    results["micro"] = bench_micro(n["micro_reps"], n["r_call_iterations"], n["result_path_reps"])
    results["duration_s"] = time.time() - t0
    # Whatever else ran during the measurements (another build, a test
    # run) competed for the same 2 cores: reported beside the numbers.
    others = (busy_seconds() - busy0) - (own_seconds() - own0)
    results["others_cpu_share"] = max(others, 0) / (results["duration_s"] * (os.cpu_count() or 1))
    results["errors"] = ERRORS
    results["busy_after"] = cpu_busy()
    results["loadavg_after"] = open("/proc/loadavg").read().split()[:3]
    Path(opts.out).write_text(json.dumps(results, indent=1))
    log(f"measurements took {results['duration_s']:.0f} s; raw results in {opts.out}")


if __name__ == "__main__":
    main()
