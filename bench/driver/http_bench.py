"""The HTTP leg of the benchmark: mcpserver's Streamable HTTP server against
the Python SDK's and the TypeScript SDK's, each serving the same tools
(bench/servers/*, started with `--http PORT`).

    python3 bench/driver/http_bench.py [--quick] [--r-lib .lib] [--out results.json] [--markdown section.md]

(Not named http.py: that would shadow the standard library's `http` package
for every script in this directory.)

Run alone it prints a table; bench/run.sh runs it after the stdio leg and
report.py puts its section into bench/README.md (`section()` below).

The client is a plain HTTP/1.1 client over asyncio streams (keep-alive, one
connection per client, Content-Length and chunked bodies): no SDK, so every
server is spoken to by the same bytes. "Handshake era" means protocol
2025-11-25 with a session (`initialize`, `notifications/initialized`, then
`Mcp-Session-Id` on every request) and plain JSON answers; mcpserver also
serves 2026-07-28 on the same endpoint, stateless (no session; `_meta` and
the `Mcp-Method`/`Mcp-Name` headers on every request), measured as a fourth
column.

Scenarios, each on a fresh server process, servers in rotating order:
- latency: one client, sequential `add` calls: p50/p99 round trip;
- concurrent: C clients, each its own connection and session, calling `add`
  back to back: calls/s over all of them;
- held: 100 clients at once, each opening its connection and session and
  calling `add`, all kept open until every one is answered: how many were
  answered and the time from the first connect to the last answer;
- idle sessions: RSS (VmRSS) of the server after N sessions are opened (and
  their connections closed) minus before, divided by N.
"""

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from summary import Record, fmt, med, percentile, ratio, rotations

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "bench"
LOGS = CACHE / "logs"
PYTHON = str(CACHE / "python" / "bin" / "python")
NODE_DIR = CACHE / "node"
HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"


# bench/run.sh installs the package into .cache/bench-lib; a run alone may
# name another library with --r-lib (e.g. the worktree's .lib).
R_LIB = ROOT / ".cache" / "bench-lib"


def r_env():
    return {**os.environ, "R_LIBS": str(R_LIB)}


def servers():
    return {
        "mcpserver": {"cmd": ["Rscript", "bench/servers/mcpserver.R"], "env": r_env()},
        "python-sdk": {"cmd": [PYTHON, "bench/servers/python-sdk.py"]},
        "ts-sdk": {"cmd": ["node", str(NODE_DIR / "ts-sdk.mjs")]},
    }


# Columns: a server and the protocol era its clients speak.
CASES = {
    "mcpserver": ("mcpserver", HANDSHAKE),
    "python-sdk": ("python-sdk", HANDSHAKE),
    "ts-sdk": ("ts-sdk", HANDSHAKE),
    "mcpserver (2026-07-28 stateless)": ("mcpserver", STATELESS),
}
PEERS = ["python-sdk", "ts-sdk"]

FULL = dict(rounds=3, latency_calls=2000, warmup=200, clients=8, calls_per_client=500,
            held=100, idle_sessions=200)
QUICK = dict(rounds=1, latency_calls=300, warmup=50, clients=4, calls_per_client=100,
             held=100, idle_sessions=50)


RECORD = Record("[bench http]")
log, failed, ERRORS = RECORD.log, RECORD.failed, RECORD.errors


# -- the server process ---------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server process listening on a port of its own; ready once a TCP
    connection is accepted."""

    def __init__(self, name, scenario, r):
        spec = servers()[name]
        LOGS.mkdir(parents=True, exist_ok=True)
        self.log = open(LOGS / f"http-{name}.{scenario}.{r}.log", "ab")
        self.port = free_port()
        self.p = subprocess.Popen([*spec["cmd"], "--http", str(self.port)], env=spec.get("env"),
                                  cwd=str(ROOT), stdin=subprocess.DEVNULL, stdout=self.log,
                                  stderr=self.log)
        deadline = time.time() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.p.poll() is not None:
                    raise RuntimeError(f"{name} exited with {self.p.returncode} (see {self.log.name})")
                if time.time() > deadline:
                    raise TimeoutError(f"{name} did not listen on {self.port}")
                time.sleep(0.05)

    def status_kb(self, key):
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        return float("nan")

    def rss_mb(self):
        return self.status_kb("VmRSS") / 1024

    def peak_rss_mb(self):
        return self.status_kb("VmHWM") / 1024

    def cpu_s(self):
        """CPU seconds (user + system) the server has used so far, all threads."""
        with open(f"/proc/{self.p.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()


# -- a minimal HTTP/1.1 client ----------------------------------------------------

class Client:
    """One MCP client: one keep-alive connection, and its session (handshake
    era) or the per-request metadata (2026-07-28)."""

    def __init__(self, port, era):
        self.port, self.era = port, era
        self.session = None
        self.next_id = 0

    async def connect(self):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        sock = self.writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self):
        self.writer.close()

    async def post(self, msg, headers=()):
        body = json.dumps(msg, separators=(",", ":")).encode()
        head = [f"POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{self.port}",
                "Content-Type: application/json", "Accept: application/json, text/event-stream",
                f"Content-Length: {len(body)}", *headers]
        if self.session:
            head.append(f"Mcp-Session-Id: {self.session}")
        if self.era != STATELESS and self.session:
            head.append(f"MCP-Protocol-Version: {HANDSHAKE}")
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        return await self.response()

    async def response(self):
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("the server closed the connection")
        status = int(status_line.split()[1])
        headers = {}
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            k, _, v = line.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int((await self.reader.readline()).split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                body += chunk[:-2]
        else:
            body = b""
        return status, headers, body

    @staticmethod
    def message(status, headers, body, want_id):
        """The JSON-RPC answer in a JSON body or in an event stream."""
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {body[:200]!r}")
        if headers.get("content-type", "").startswith("text/event-stream"):
            for line in body.split(b"\n"):
                if line.startswith(b"data:"):
                    msg = json.loads(line[5:])
                    if msg.get("id") == want_id:
                        return msg
            raise RuntimeError(f"no answer to {want_id} in the event stream")
        return json.loads(body)

    async def open(self):
        """Connect and, in the handshake era, open a session."""
        await self.connect()
        if self.era == STATELESS:
            return
        status, headers, body = await self.post({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": HANDSHAKE, "capabilities": {},
                       "clientInfo": {"name": "mcpserver-bench", "version": "1"}}})
        init = self.message(status, headers, body, 0)
        if init.get("result", {}).get("protocolVersion") != HANDSHAKE:
            raise RuntimeError(f"initialize: {init}")
        self.session = headers.get("mcp-session-id")
        if not self.session:
            raise RuntimeError("initialize: no Mcp-Session-Id")
        status, _, body = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if status not in (200, 202):
            raise RuntimeError(f"notifications/initialized: HTTP {status} {body[:200]!r}")

    def add_request(self, x):
        self.next_id += 1
        params = {"name": "add", "arguments": {"x": x, "y": 0.5}}
        headers = ()
        if self.era == STATELESS:
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": STATELESS,
                               "io.modelcontextprotocol/clientCapabilities": {}}
            headers = (f"MCP-Protocol-Version: {STATELESS}", "Mcp-Method: tools/call", "Mcp-Name: add")
        return {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params}, headers

    async def call_add(self, x):
        """One tools/call of add; raises unless the answer is right."""
        msg, headers = self.add_request(x)
        status, rheaders, body = await self.post(msg, headers)
        answer = self.message(status, rheaders, body, msg["id"])
        result = answer.get("result")
        if not result or result.get("isError") or result["content"][0]["text"] not in (str(x + 0.5), repr(x + 0.5)):
            raise RuntimeError(f"unexpected answer to add({x}, 0.5): {answer}")


# -- scenarios ----------------------------------------------------------------------

async def latency(port, era, calls, warmup):
    client = Client(port, era)
    await client.open()
    times = []
    for i in range(warmup + calls):
        t0 = time.perf_counter()
        await client.call_add(i)
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e6)
    client.close()
    return {"p50_us": statistics.median(times), "p99_us": percentile(times, 99)}


def own_cpu_s():
    t = os.times()
    return t.user + t.system


async def concurrent(server, era, clients, calls, warmup):
    """Also the CPU per call of the server (all its threads) and of this
    driver: on 2 cores they compete, so the driver's share is a ceiling."""
    port = server.port
    opened = [Client(port, era) for _ in range(clients)]
    await asyncio.gather(*(c.open() for c in opened))

    async def run(c, n):
        for i in range(n):
            await c.call_add(i)

    await asyncio.gather(*(run(c, warmup // clients + 1) for c in opened))
    server_cpu0, own_cpu0 = server.cpu_s(), own_cpu_s()
    t0 = time.perf_counter()
    await asyncio.gather(*(run(c, calls) for c in opened))
    seconds = time.perf_counter() - t0
    n = clients * calls
    server_us, driver_us = (server.cpu_s() - server_cpu0) / n * 1e6, (own_cpu_s() - own_cpu0) / n * 1e6
    for c in opened:
        c.close()
    return {"calls_per_s": n / seconds, "seconds": seconds, "server_cpu_us_per_call": server_us,
            "driver_cpu_us_per_call": driver_us}


async def held(port, era, n):
    """n clients at once: connect, open a session, call add; every
    connection stays open until all have their answer."""
    clients = [Client(port, era) for _ in range(n)]

    async def one(c):
        await c.open()
        await c.call_add(1)

    t0 = time.perf_counter()
    outcomes = await asyncio.wait_for(asyncio.gather(*(one(c) for c in clients), return_exceptions=True), 120)
    seconds = time.perf_counter() - t0
    errors = [repr(e) for e in outcomes if isinstance(e, BaseException)]
    for c in clients:
        if hasattr(c, "writer"):
            c.close()
    return {"answered": n - len(errors), "clients": n, "seconds": seconds, "errors": errors[:3]}


async def idle_sessions(server, n):
    """RSS per idle session: one session opened and used first (so code
    paths are warm), then n more opened and their connections closed."""
    warm = Client(server.port, HANDSHAKE)
    await warm.open()
    await warm.call_add(1)
    warm.close()
    await asyncio.sleep(0.5)
    before = server.rss_mb()
    for i in range(0, n, 20):  # in groups of 20, as clients arrive
        group = [Client(server.port, HANDSHAKE) for _ in range(min(20, n - i))]
        await asyncio.gather(*(c.open() for c in group))
        for c in group:
            c.close()
    await asyncio.sleep(0.5)
    after = server.rss_mb()
    return {"before_mb": before, "after_mb": after, "sessions": n, "kb_per_session": (after - before) * 1024 / n}


def measure(scenario, rounds, labels, body):
    """Runs `body(server, era)` for each label on a fresh server per run."""
    out = {}
    for r, order in rotations(labels, rounds):
        for label in order:
            name, era = CASES[label] if label in CASES else (label, HANDSHAKE)
            try:
                server = Server(name, scenario, r)
            except Exception as e:  # noqa: BLE001 - recorded, reported
                failed(scenario, label, e)
                continue
            try:
                res = asyncio.run(body(server, era))
                res["peak_rss_mb"] = server.peak_rss_mb()
                out.setdefault(label, []).append(res)
                log(scenario, label, {k: (round(v, 1) if isinstance(v, float) else v)
                                      for k, v in res.items() if k != "errors"})
            except Exception as e:  # noqa: BLE001 - recorded, reported
                failed(scenario, label, e)
            finally:
                server.stop()
    return out


def load_average():
    return open("/proc/loadavg").read().split()[:3]


def run(n):
    results = {"counts": n, "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
               "loadavg_before": load_average()}
    t0 = time.time()
    results["latency"] = measure("latency", n["rounds"], CASES,
                                 lambda s, era: latency(s.port, era, n["latency_calls"], n["warmup"]))
    results["concurrent"] = measure("concurrent", n["rounds"], CASES,
                                    lambda s, era: concurrent(s, era, n["clients"], n["calls_per_client"],
                                                              n["warmup"]))
    results["held"] = measure("held", n["rounds"], CASES, lambda s, era: held(s.port, era, n["held"]))
    results["idle"] = measure("idle", n["rounds"], ["mcpserver", *PEERS],
                              lambda s, era: idle_sessions(s, n["idle_sessions"]))
    results["duration_s"] = time.time() - t0
    results["loadavg_after"] = load_average()
    results["errors"] = ERRORS
    return results


# -- the report ----------------------------------------------------------------------

def rows(res):
    def per(scenario, key):
        return {label: med([r[key] for r in runs]) for label, runs in res[scenario].items()}

    held = res["held"]
    all_answered = {label: min(r["answered"] for r in runs) for label, runs in held.items()}
    return [
        ("Round trip of `add`, one client, p50 (µs)", per("latency", "p50_us"), "lower", 0),
        ("Round trip of `add`, one client, p99 (µs)", per("latency", "p99_us"), "lower", 0),
        (f"{res['counts']['clients']} concurrent clients: calls/s", per("concurrent", "calls_per_s"), "higher", 0),
        (f"{res['counts']['clients']} concurrent clients: server CPU per call, all threads (µs)",
         per("concurrent", "server_cpu_us_per_call"), "lower", 0),
        (f"{res['counts']['clients']} concurrent clients: the driver's CPU per call (µs)",
         per("concurrent", "driver_cpu_us_per_call"), "lower", 0),
        (f"{res['counts']['held']} clients at once: answered (fewest over rounds)", all_answered, "higher", 0),
        (f"{res['counts']['held']} clients at once: time until all answered (ms)",
         {k: v * 1e3 for k, v in per("held", "seconds").items()}, "lower", 0),
        (f"Memory per idle session, {res['counts']['idle_sessions']} sessions (KB)",
         per("idle", "kb_per_session"), "lower", 0),
        ("Peak RSS, 100 clients at once (MB)", per("held", "peak_rss_mb"), "lower", 0),
    ]


def table(res):
    cols = list(CASES)
    head = ["Measurement", *cols, *[f"mcpserver / {p}" for p in PEERS],
            *[f"stateless / {p}" for p in PEERS]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    stateless = "mcpserver (2026-07-28 stateless)"
    for label, values, _, digits in rows(res):
        cells = [label, *[fmt(values.get(c), digits) for c in cols]]
        # The driver's own cost is context, not something a server wins.
        comparable = "driver" not in label
        cells += [fmt(ratio(values.get("mcpserver"), values.get(p)), 2) if comparable else "" for p in PEERS]
        cells += [fmt(ratio(values.get(stateless), values.get(p)), 2) if comparable else "" for p in PEERS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def section(res):
    """The README section of the HTTP leg."""
    n = res["counts"]
    load = " / ".join(res["loadavg_before"]) + " before, " + " / ".join(res["loadavg_after"]) + " after"
    loaded = max(float(x) for x in res["loadavg_before"][:1] + res["loadavg_after"][:1]) > 1.0
    caution = ("\n> **The machine was loaded** (load average above 1 on 2 cores): other work "
               "competed with every server, so absolute numbers are slower and noisier than on an "
               "idle machine; runs alternate, so ratios suffer less.\n" if loaded else "")
    errors = res.get("errors", [])
    failures = ("\n\n**Runs that failed** (left out of the medians):\n\n" +
                "\n".join(f"- {e['scenario']}, {e['server']}: `{e['error']}`" for e in errors)) if errors else ""
    return f"""## Over HTTP (Streamable HTTP, [`driver/http_bench.py`](driver/http_bench.py))

Run on {res['started']} ({res['duration_s'] / 60:.1f} minutes); load average
(1/5/15 min) {load}.
{caution}
The same peers and tools, each started with `--http PORT`: mcpserver's
`mcp_server(transport = "http")`; the Python SDK's `streamable_http_app(json_response = TRUE)`
under uvicorn (without its per-request access log); the TypeScript SDK's
`StreamableHTTPServerTransport` (`enableJsonResponse`) on Node's `http`
module, one `McpServer` per session. The driver is a plain HTTP/1.1 client
on asyncio (keep-alive, `TCP_NODELAY`, one connection per client, no SDK).
Handshake-era clients speak {HANDSHAKE} with a session and get plain JSON
answers; the last column is mcpserver with stateless {STATELESS} clients
(no session; `_meta`, `Mcp-Method` and `Mcp-Name` on every request). Values
are medians over {n['rounds']} rounds, a fresh server per run, servers in
rotating order. Ratios are mcpserver ÷ peer (below 1 is mcpserver ahead for
times and memory, above 1 for calls/s and clients answered).

{table(res)}

Counts: one client makes {n['latency_calls']:,} sequential `add` calls after
{n['warmup']} warm-up; {n['clients']} clients make {n['calls_per_client']} calls each,
back to back, each on its own connection and session; {n['held']} clients
connect at once, each opening its session (none for stateless) and calling
`add`, every connection held open until all are answered; idle sessions:
VmRSS after opening {n['idle_sessions']} more sessions (connections then closed)
minus before, once one session has been used.{failures}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="tiny counts, to try the harness")
    ap.add_argument("--out", help="raw results (JSON); default .cache/bench/results/http-<time>.json")
    ap.add_argument("--markdown", help="also write the README section to this file")
    ap.add_argument("--r-lib", help="the R library mcpserver is loaded from (default .cache/bench-lib)")
    opts = ap.parse_args()
    if opts.r_lib:
        global R_LIB
        R_LIB = Path(opts.r_lib).resolve()
    if not Path(PYTHON).exists() or not (NODE_DIR / "node_modules").exists():
        sys.exit("bench http: the peers are not installed; run bench/run.sh once (or its install steps)")
    # Node resolves the SDK next to the script (bench/run.sh copies it too).
    (NODE_DIR / "ts-sdk.mjs").write_bytes((ROOT / "bench/servers/ts-sdk.mjs").read_bytes())
    res = run(QUICK if opts.quick else FULL)
    out = Path(opts.out) if opts.out else CACHE / "results" / f"http-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    text = section(res)
    print(text)
    if opts.markdown:
        Path(opts.markdown).write_text(text)
    log(f"raw results in {out}")


if __name__ == "__main__":
    main()
