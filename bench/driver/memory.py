"""Resident memory of an mcpserver process around bursts of pipelined
requests: how much a burst costs while it is queued, and how much of it the
process keeps once everything is answered.

Usage: R_LIBS=.lib python3 bench/driver/memory.py [server.R] [--count N]

Three scenarios, each on a fresh server process:

- drained: N `tools/list` requests written at once while a reader takes the
  answers; RSS after the burst drains (three bursts in a row).
- unread: N `tools/list` written while nobody reads stdout, for a few
  seconds; RSS while the answers are held, then after they are read.
- pings: as drained, with `ping`.
- calls: as drained, with `tools/call` of `add` (R runs each one).

Numbers are in MB (VmRSS from /proc), `start` being the idle server after
`initialize`. Linux only.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_SERVER = os.path.join(ROOT, "tests", "testthat", "fixtures", "everything.R")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def line(msg: dict) -> bytes:
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


class Server:
    def __init__(self, script: str):
        self.p = subprocess.Popen(
            ["Rscript", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, bufsize=0)
        self.buf = b""
        self.send(line({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "memory", "version": "1"}}}))
        self.read_lines(1)
        time.sleep(0.5)

    def send(self, data: bytes) -> None:
        self.p.stdin.write(data)

    def read_lines(self, n: int) -> None:
        got = 0
        while got < n:
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                raise RuntimeError("the server closed stdout")
            got += chunk.count(b"\n")

    def send_in_background(self, data: bytes) -> threading.Thread:
        t = threading.Thread(target=self.send, args=(data,), daemon=True)
        t.start()
        return t

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(timeout=30)


CALL_PARAMS = {"name": "add", "arguments": {"x": 1, "y": 2}}


def burst(method: str, count: int, first_id: int) -> bytes:
    def request(id_: int) -> dict:
        msg = {"jsonrpc": "2.0", "id": id_, "method": method}
        if method == "tools/call":
            msg["params"] = CALL_PARAMS
        return msg
    return b"".join(line(request(first_id + i)) for i in range(count))


def drained(script: str, method: str, count: int) -> dict:
    s = Server(script)
    out = {"start": rss_mb(s.p.pid)}
    for round_ in range(1, 4):
        writer = s.send_in_background(burst(method, count, round_ * count))
        s.read_lines(count)
        writer.join()
        time.sleep(1.0)
        out[f"after burst {round_}"] = rss_mb(s.p.pid)
    s.close()
    return out


def unread(script: str, count: int, hold: float) -> dict:
    s = Server(script)
    out = {"start": rss_mb(s.p.pid)}
    writer = s.send_in_background(burst("tools/list", count, 1))
    peak = 0.0
    deadline = time.time() + hold
    while time.time() < deadline:
        peak = max(peak, rss_mb(s.p.pid))
        time.sleep(0.1)
    out[f"peak, {hold:.0f} s unread"] = peak
    out["requests taken in"] = "all" if not writer.is_alive() else "some (writer blocked)"
    s.read_lines(count)
    writer.join()
    time.sleep(1.0)
    out["after reading all"] = rss_mb(s.p.pid)
    s.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("server", nargs="?", default=DEFAULT_SERVER)
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--hold", type=float, default=5.0)
    args = ap.parse_args()
    for name, result in [
        (f"drained: {args.count} tools/list x3", drained(args.server, "tools/list", args.count)),
        (f"unread: {args.count} tools/list", unread(args.server, args.count, args.hold)),
        (f"pings: {args.count} ping x3", drained(args.server, "ping", args.count)),
        (f"calls: {args.count} tools/call x3", drained(args.server, "tools/call", args.count)),
    ]:
        cells = ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}"
                          for k, v in result.items())
        print(f"{name}: {cells}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
