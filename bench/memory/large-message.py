#!/usr/bin/env python3
"""What one large tools/call costs the server: time to answer, peak and
settled resident memory, and how long a ping sent right behind it waits.

Usage: R_LIB=/path/to/lib bench/memory/large-message.py [--quick]

Each case starts a fresh server (bench/memory/sum-values.R), warms it with a
small call, then sends one large call followed at once by a ping. Figures:

- answer: seconds from the last byte of the call to its answer;
- ping: seconds from the ping's last byte to its answer (the ping is
  written right after the call, so it measures whether the reader thread
  answers pings while the big line is being parsed and validated);
- peak: the process's VmHWM minus its RSS before the call (the peak is
  reset through /proc/PID/clear_refs first, where allowed);
- settled: VmRSS one second after the answer, minus the RSS before the call.

The aims (reported, never asserted): peak under 10x the message size,
settled within 20 MB.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "driver"))
from mcppipe import Proc, encode  # noqa: E402

MB = 1024 * 1024


def status_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def reset_peak(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def start(lib: str) -> Proc:
    env = dict(os.environ, R_LIBS=lib)
    server = Proc(["Rscript", os.path.join(HERE, "sum-values.R")], env=env)
    server.request(0, "initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "large-message", "version": "1"}})
    server.send(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    return server


def call_line(id_: int, values_json: str) -> bytes:
    # Built as text: json.dumps of millions of lists would dominate the run.
    return (f'{{"jsonrpc":"2.0","id":{id_},"method":"tools/call","params":'
            f'{{"name":"sum_values","arguments":{{"values":{values_json}}}}}}}\n').encode()


def answer_of(server: Proc, id_: int, timeout: float) -> dict:
    while True:
        msg = json.loads(server.read_line(timeout))
        if msg.get("id") == id_:
            return msg


def run_case(lib: str, label: str, values_json: str) -> dict:
    server = start(lib)
    try:
        server.send(call_line(1, "[1,2,3]"))
        warm = answer_of(server, 1, 60)
        assert warm["result"]["content"][0]["text"] == "6", warm
        time.sleep(0.5)
        pid = server.p.pid
        before = status_kb(pid, "VmRSS")
        peak_reset = reset_peak(pid)
        line = call_line(2, values_json)
        ping = encode({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        server.send(line)
        sent = time.perf_counter()
        server.send(ping)
        ping_sent = time.perf_counter()
        got = {}
        while len(got) < 2:
            msg = json.loads(server.read_line(600))
            if msg.get("id") in (2, 3):
                got[msg["id"]] = (time.perf_counter(), msg)
        peak = status_kb(pid, "VmHWM")
        time.sleep(1.0)
        settled = status_kb(pid, "VmRSS")
        result = got[2][1].get("result", {})
        text = result.get("content", [{}])[0].get("text", "")
        return {
            "case": label,
            "message_mb": len(line) / MB,
            "answer_s": got[2][0] - sent,
            "ping_s": got[3][0] - ping_sent,
            "ping_first": got[3][0] < got[2][0],
            "peak_mb": (peak - before) / 1024 if peak_reset else float("nan"),
            "settled_mb": (settled - before) / 1024,
            "answer": (("error: " if result.get("isError") else "") + text)[:70],
        }
    finally:
        server.close()


def main() -> None:
    lib = os.environ.get("R_LIB", os.path.join(HERE, "..", "..", ".lib"))
    quick = "--quick" in sys.argv
    n_small = 200_000 if quick else 2_000_000
    n_large = 1_000_000 if quick else 10_000_000
    n_numbers = 100_000 if quick else 1_000_000
    cases = [
        (f"{n_small:,} empty arrays", "[" + ",".join(["[]"] * n_small) + "]"),
        (f"{n_large:,} empty arrays", "[" + ",".join(["[]"] * n_large) + "]"),
        (f"{n_numbers:,} numbers", "[" + ",".join(["1.5"] * n_numbers) + "]"),
    ]
    print(f"{'case':<24} {'MB':>6} {'answer s':>9} {'ping s':>8} {'ping 1st':>8} "
          f"{'peak MB':>8} {'peak/msg':>8} {'settled MB':>10}  answer")
    for label, values in cases:
        r = run_case(lib, label, values)
        print(f"{r['case']:<24} {r['message_mb']:6.1f} {r['answer_s']:9.2f} {r['ping_s']:8.3f} "
              f"{str(r['ping_first']):>8} {r['peak_mb']:8.0f} {r['peak_mb'] / r['message_mb']:8.1f} "
              f"{r['settled_mb']:10.1f}  {r['answer']}", flush=True)


if __name__ == "__main__":
    main()
