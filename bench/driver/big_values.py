"""Big values over stdio: a 100,000-row table as structured content (with
and without an output schema) and big arguments (millions of small
numbers, strings or objects), each against the pipe floor and the SDK
servers. Used by bench.py (the `make bench` rows) and on its own:

    R_LIBS=.lib python3 bench/driver/big_values.py [--servers mcpserver,pipe floor]
        [--cases table,table_open,numbers,decimals,strings,objects] [--rounds 2]
        [--peers .cache/bench]  # the SDK servers as make bench installed them
        [--lib before=/other/lib --servers before,mcpserver,...]  # A/B in one run

Each case runs in a fresh server process: a warm-up call (which builds the
table, so the timed calls measure serialising and sending only), then the
timed calls. Figures per case:

- ms: median time from writing the request to reading the whole answer;
- peak_mb: the server's peak resident memory during the first timed call
  above its resident memory just before it (the peak is reset through
  /proc/PID/clear_refs), i.e. what the call itself costs (later calls may
  also hold the garbage R has not collected yet);
- bytes: the size of the message (arguments) or of the answer (tables);
- ping_ms: a `ping` written right behind a big argument message: how long
  its answer took (the reader must not wait for the big line's parsing).
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mcppipe import Proc, encode  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
MB = 1e6

# The argument messages, built as text (json.dumps of millions of items
# would dominate the run). Sizes as in issue 25.
ARGUMENTS = {
    "numbers": ("count_numbers", lambda: "[" + ",".join(["0"] * 3_000_000) + "]", 3_000_000),
    # One-decimal numbers, the shortest text a non-whole double has; 9.6 MB,
    # under the TypeScript SDK's default limit on a message (10 MiB).
    "decimals": ("count_numbers", lambda: "[" + ",".join(["0.1", "0.5", "0.9"] * 800_000) + "]", 2_400_000),
    "strings": ("count_strings", lambda: "[" + ",".join(['"a"'] * 1_000_000) + "]", 1_000_000),
    "objects": ("count_objects", lambda: "[" + ",".join(['{"x":1}'] * 300_000) + "]", 300_000),
}
TABLES = {"table": "big_table", "table_open": "big_table_open"}
CASES = [*TABLES, *ARGUMENTS]


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def reset_peak(pid):
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def call_text(id_, name, values_json):
    return (f'{{"jsonrpc":"2.0","id":{id_},"method":"tools/call","params":'
            f'{{"name":"{name}","arguments":{{"values":{values_json}}}}}}}\n').encode()


def table_call(id_, name):
    return encode({"jsonrpc": "2.0", "id": id_, "method": "tools/call",
                   "params": {"name": name, "arguments": {}}})


def check_answer(line, case, expected, floor):
    if floor:
        return
    msg = json.loads(line)
    result = msg.get("result")
    if result is None or result.get("isError"):
        raise RuntimeError(f"{case}: error answer {line[:300]!r}")
    if case in TABLES:
        rows = result.get("structuredContent", {}).get("result")
        if not isinstance(rows, list) or len(rows) != 100000 or len(rows[0]) != 10:
            raise RuntimeError(f"{case}: unexpected answer {line[:300]!r}")
    elif result["content"][0]["text"].strip() != str(expected):
        raise RuntimeError(f"{case}: counted {result['content'][0]['text'][:50]!r}, not {expected}")


def run_case(proc, case, calls, floor):
    """Times `calls` calls of `case` on a started (and handshaken) server."""
    pid = proc.p.pid
    if case in TABLES:
        name = TABLES[case]
        proc.send(table_call(5, name))  # builds the table
        check_answer(proc.read_line(300), case, None, floor)
        requests = [table_call(10 + i, name) for i in range(calls)]
        expected, size = None, None
    else:
        name, make, expected = ARGUMENTS[case]
        values = make()
        proc.send(call_text(5, name, "[0]" if case in ("numbers", "decimals") else "[]"))  # warm-up
        proc.read_line(60)
        requests = [call_text(10 + i, name, values) for i in range(calls)]
        size = len(requests[0])
    time.sleep(0.3)
    before = status_kb(pid, "VmRSS")
    peak_ok = reset_peak(pid)
    times, pings = [], []
    for i, request in enumerate(requests):
        t0 = time.perf_counter()
        proc.send(request)
        if case in ARGUMENTS:
            proc.send(encode({"jsonrpc": "2.0", "id": 900 + i, "method": "ping"}))
        got_ping, line = None, None
        while line is None or (case in ARGUMENTS and got_ping is None):
            text = proc.read_line(600)
            if len(text) < 200 and b'"id":%d' % (900 + i) in text.replace(b" ", b""):
                got_ping = time.perf_counter() - t0
                continue
            line = text
            times.append(time.perf_counter() - t0)
        if got_ping is not None:
            pings.append(got_ping * 1e3)
        if i == 0:
            peak = status_kb(pid, "VmHWM") if peak_ok else float("nan")
        check_answer(line, case, expected, floor)
        if size is None:
            size = len(line) + 1
    return {"ms": statistics.median(times) * 1e3, "times_ms": [t * 1e3 for t in times],
            "peak_mb": (peak - before) / 1024, "bytes": size,
            "ping_ms": max(pings) if pings else None}


def measure(spawn, servers, cases, rounds, calls, log=print):
    """{case: {server: [result per round]}}; `spawn(name, case, round)`
    gives a started Proc, handshaken unless it is the pipe floor."""
    out = {}
    for r in range(rounds):
        for case in cases:
            order = servers[r % len(servers):] + servers[:r % len(servers)]
            for name in order:
                proc = spawn(name, case, r)
                try:
                    res = run_case(proc, case, calls, floor=(name == "pipe floor"))
                    out.setdefault(case, {}).setdefault(name, []).append(res)
                    log(f"big values {case} {name}: {res['ms']:.0f} ms, peak +{res['peak_mb']:.0f} MB "
                        f"for {res['bytes'] / MB:.1f} MB" +
                        (f", ping {res['ping_ms']:.1f} ms" if res["ping_ms"] is not None else ""))
                except Exception as e:  # noqa: BLE001 - reported, the run goes on
                    log(f"big values {case} {name}: FAILED {e}")
                    out.setdefault(case, {}).setdefault(name, []).append({"error": str(e)})
                finally:
                    proc.kill()
    return out


def summary(results):
    """Median over rounds of each figure, per case and server."""
    table = {}
    for case, by_server in results.items():
        for name, runs in by_server.items():
            ok = [r for r in runs if "error" not in r]
            if not ok:
                continue
            med = lambda k: statistics.median(r[k] for r in ok)  # noqa: E731
            table.setdefault(case, {})[name] = {
                "ms": med("ms"), "peak_mb": med("peak_mb"), "bytes": med("bytes"),
                "ping_ms": max((r["ping_ms"] for r in ok if r["ping_ms"] is not None), default=None)}
    return table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", default="mcpserver,pipe floor")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--calls", type=int, default=2)
    ap.add_argument("--out")
    ap.add_argument("--peers", default=os.path.join(ROOT, ".cache", "bench"),
                    help="where make bench installed the SDK servers (python/, node/)")
    ap.add_argument("--lib", action="append", default=[], metavar="NAME=DIR",
                    help="also a server NAME: mcpserver installed in DIR (before/after in one run)")
    opts = ap.parse_args()
    cache = opts.peers
    commands = {
        "mcpserver": ["Rscript", "bench/servers/mcpserver.R"],
        "python-sdk": [os.path.join(cache, "python", "bin", "python"), "bench/servers/python-sdk.py"],
        "ts-sdk": ["node", os.path.join(cache, "node", "ts-sdk.mjs")],
        "pipe floor": ["perl", "bench/servers/pipe-floor.pl"],
    }

    libs = dict(spec.split("=", 1) for spec in opts.lib)
    for name in libs:
        commands[name] = commands["mcpserver"]

    def spawn(name, case, r):
        env = dict(os.environ, R_LIBS=os.path.abspath(libs[name])) if name in libs else None
        proc = Proc(commands[name], cwd=ROOT, env=env)
        if name != "pipe floor":
            proc.handshake()
        return proc

    results = measure(spawn, opts.servers.split(","), opts.cases.split(","), opts.rounds, opts.calls,
                      log=lambda m: print(m, file=sys.stderr, flush=True))
    table = summary(results)
    if opts.out:
        with open(opts.out, "w") as f:
            json.dump({"runs": results, "summary": table}, f, indent=1)
    for case, by_server in table.items():
        floor = by_server.get("pipe floor")
        for name, s in by_server.items():
            ratio = f", {s['ms'] / floor['ms']:.2f}x the floor" if floor and name != "pipe floor" else ""
            print(f"{case:11s} {name:11s} {s['ms']:8.0f} ms{ratio}; peak +{s['peak_mb']:.0f} MB = "
                  f"{s['peak_mb'] * 1.048576 / (s['bytes'] / MB):.1f}x of {s['bytes'] / MB:.1f} MB"
                  + (f"; ping {s['ping_ms']:.1f} ms" if s["ping_ms"] is not None else ""))


if __name__ == "__main__":
    main()
