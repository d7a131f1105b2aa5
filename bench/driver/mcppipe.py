"""A server process spoken to over real pipes with raw newline-delimited
JSON-RPC. No MCP SDK is involved on the driver side: every byte the
benchmark times goes through the same os.write/os.read calls, whoever the
server is.
"""

import json
import os
import select
import subprocess
import time

PROTOCOL_VERSION = "2025-11-25"  # the newest handshake revision all peers speak


def encode(msg: dict) -> bytes:
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


def call(id_: int, name: str, arguments: dict) -> bytes:
    return encode({"jsonrpc": "2.0", "id": id_, "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}})


class ServerError(RuntimeError):
    pass


class Proc:
    """One server process. `started` is taken just before the fork, so
    start-up times include process creation."""

    def __init__(self, cmd, env=None, cwd=None, log_path=None):
        self.log = open(log_path, "ab") if log_path else subprocess.DEVNULL
        self.started = time.perf_counter()
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.log, env=env, cwd=cwd, bufsize=0)
        self.wfd = self.p.stdin.fileno()
        self.rfd = self.p.stdout.fileno()
        self.buf = bytearray()
        self.scanned = 0  # bytes of buf already known to hold no newline
        self.bytes_in = 0

    # -- raw I/O -------------------------------------------------------------
    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.wfd, view):]

    def _fill(self, deadline: float) -> None:
        remaining = deadline - time.perf_counter()
        if remaining <= 0 or not select.select([self.rfd], [], [], remaining)[0]:
            raise TimeoutError(f"no answer from pid {self.p.pid} in time")
        chunk = os.read(self.rfd, 1 << 20)
        if not chunk:
            raise ServerError(f"pid {self.p.pid} closed stdout (exit {self.p.poll()})")
        self.bytes_in += len(chunk)
        self.buf += chunk

    def read_line(self, timeout: float = 60.0) -> bytes:
        deadline = time.perf_counter() + timeout
        while True:
            i = self.buf.find(b"\n", self.scanned)
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[:i + 1]
                self.scanned = 0
                return line
            self.scanned = len(self.buf)
            self._fill(deadline)

    def read_lines(self, n: int, timeout: float = 120.0) -> list:
        """Reads n lines, counting newlines chunk by chunk (no parsing on the
        clock); returns them raw."""
        deadline = time.perf_counter() + timeout
        count = self.buf.count(b"\n")
        while count < n:
            before = len(self.buf)
            self._fill(deadline)
            count += self.buf.count(b"\n", before)
        lines = bytes(self.buf).split(b"\n")
        self.buf = bytearray(b"\n".join(lines[n:]))
        return lines[:n]

    # -- JSON-RPC ------------------------------------------------------------
    def response(self, id_, timeout: float = 60.0) -> dict:
        """The answer to request `id_`, skipping notifications and logs."""
        while True:
            msg = json.loads(self.read_line(timeout))
            if msg.get("id") == id_:
                if "error" in msg:
                    raise ServerError(f"error answer to {id_}: {msg['error']}")
                return msg

    def request(self, id_, method, params=None, timeout=60.0) -> dict:
        msg = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(encode(msg))
        return self.response(id_, timeout)

    def handshake(self) -> float:
        """initialize + notifications/initialized + tools/list; returns the
        seconds from launch to the tools/list answer."""
        init = self.request(0, "initialize", {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "mcpserver-bench", "version": "1.0.0"}}, timeout=60)
        version = init["result"].get("protocolVersion")
        if version != PROTOCOL_VERSION:
            raise ServerError(f"server chose protocol {version}")
        self.send(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        tools = self.request(1, "tools/list", timeout=60)["result"]["tools"]
        elapsed = time.perf_counter() - self.started
        names = {t["name"] for t in tools}
        if not {"add", "big_table", "slow"} <= names:
            raise ServerError(f"tools/list lacks a benchmark tool: {sorted(names)}")
        return elapsed

    # -- the process -----------------------------------------------------------
    def peak_rss_mb(self) -> float:
        """VmHWM: the process's peak resident set so far (it resets at exec,
        so Rscript's wrapper does not count)."""
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def thread_cpu_s(self) -> dict:
        """CPU seconds (user + system) used so far by each of the process's
        threads, summed by thread name."""
        tick = os.sysconf("SC_CLK_TCK")
        out = {}
        for tid in os.listdir(f"/proc/{self.p.pid}/task"):
            try:
                with open(f"/proc/{self.p.pid}/task/{tid}/comm") as f:
                    name = f.read().strip()
                with open(f"/proc/{self.p.pid}/task/{tid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except FileNotFoundError:  # a thread that just ended
                continue
            out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
        return out

    def close(self) -> float:
        """Reads the peak RSS, then closes stdin (how clients stop a stdio
        server) and waits for the exit."""
        peak = self.peak_rss_mb()
        self.p.stdin.close()
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.p.stdout.close()
        if self.log is not subprocess.DEVNULL:
            self.log.close()
        return peak

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
