"""Hostile clients over HTTP: does one client's idle or slow connections
keep another client waiting? mcpserver against the Python and TypeScript
SDK servers under the same attack (bench/servers/*, started with
`--http PORT`, as bench/driver/http_bench.py does; peers installed by a
first bench/run.sh).

    python3 bench/driver/http_attack.py [--r-lib .lib] [--idle 600] [--servers mcpserver,python-sdk,ts-sdk]

Scenarios, each on a fresh server process; the attacker runs in a
process of its own, so its connections do not slow the probing client:
- idle: N TCP connections opened and left silent (no byte of a request),
  then, once a second, a new client connects, opens a 2025-11-25 session
  and calls `tools/list`: the time from its connect to the answer of
  `tools/list` (five tries);
- churn: N idle connections, each reopened as soon as the server closes
  it, with the same client once a second (13 tries, 5 s each at most): how
  many of its tries were answered within 1 s, and the slowest;
- slow body: N connections that each send a complete head
  announcing `Content-Length: 100` and then 10 bytes of it, reopened as
  the server closes them, with the same client once a second (13 tries, 5
  s each at most); and how
  long the server keeps one such request before it answers or closes it
  (at most 60 s waited).

Prints one table (milliseconds unless said otherwise).
"""

import argparse
import asyncio
import json
import multiprocessing
import statistics
import sys
import time

import http_bench
from http_bench import HANDSHAKE, Client, Server

PROBES = 5
TRIES = 13


async def probe(port, timeout=60.0):
    """Connect, open a session and list the tools: the milliseconds it took,
    or None if not answered within `timeout`."""
    t0 = time.perf_counter()
    client = Client(port, HANDSHAKE)
    try:
        await asyncio.wait_for(probe_calls(client), timeout)
    except (asyncio.TimeoutError, OSError, RuntimeError, ConnectionError, ValueError, IndexError):
        return None
    finally:
        if hasattr(client, "writer"):
            client.close()
    return (time.perf_counter() - t0) * 1000


async def probe_calls(client):
    await client.open()
    status, headers, body = await client.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    answer = Client.message(status, headers, body, 1)
    if "result" not in answer:
        raise RuntimeError(f"tools/list: {answer}")


def attack(kind, port, n):
    """Runs in a process of its own, so that the probe's event loop is not
    the attacker's, until it is terminated: n connections of `kind`, each
    reopened when the server closes it ("idle": nothing sent; "stalled": a
    head announcing a 100-byte body, then 10 bytes of it; "idle-once":
    idle, not reopened)."""
    asyncio.run(attack_loop(kind, port, n))


async def attack_loop(kind, port, n):
    stop = time.perf_counter() + 3600
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"")

    async def hold():
        while time.perf_counter() < stop:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                if kind == "stalled":
                    writer.write(head.encode())
                    await writer.drain()
            except OSError:
                await asyncio.sleep(0.05)
                continue
            try:
                await asyncio.wait_for(reader.read(1), max(0.01, stop - time.perf_counter()))
                if kind == "idle-once":
                    await asyncio.sleep(max(0, stop - time.perf_counter()))
            except (asyncio.TimeoutError, OSError):
                pass
            writer.close()

    await asyncio.gather(*(hold() for _ in range(n)), return_exceptions=True)


async def under_attack(kind, port, n, probes, timeout):
    """Probes once a second while an attacker process runs."""
    attacker = multiprocessing.Process(target=attack, args=(kind, port, n))
    attacker.start()
    await asyncio.sleep(1)
    times = []
    for _ in range(probes):
        times.append(await probe(port, timeout=timeout))
        await asyncio.sleep(1)
    attacker.terminate()
    attacker.join()
    return times


async def idle(port, n):
    return {"probes_ms": await under_attack("idle-once", port, n, PROBES, 60)}


async def churn(port, n):
    tries = await under_attack("idle", port, n, TRIES, 5)
    fast = sum(1 for t in tries if t is not None and t <= 1000)
    return {"tries": len(tries), "within_1s": fast, "probes_ms": tries}


async def slow_body(port, n):
    times = await under_attack("stalled", port, n, TRIES, 5)
    # How long one stalled body is kept.
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Content-Length: 100\r\n\r\n{\"jsonrpc\"")
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head.encode())
    t0 = time.perf_counter()
    first = b""
    try:
        first = await asyncio.wait_for(reader.readline(), 60)
    except (asyncio.TimeoutError, OSError):
        pass
    held = time.perf_counter() - t0
    writer.close()
    status = first.split()[1].decode() if len(first.split()) > 1 else "closed" if held < 60 else "still open"
    return {"probes_ms": times, "held_s": held, "answer": status}


def summary(times):
    done = [t for t in times if t is not None]
    if not done:
        return "none answered"
    text = f"median {statistics.median(done):,.0f}, worst {max(done):,.0f}"
    if len(done) < len(times):
        text += f"; {len(times) - len(done)} of {len(times)} unanswered"
    return text


async def measure(name, n):
    results = {}
    for scenario, run in (("idle", idle), ("churn", churn), ("slow body", slow_body)):
        server = Server(name, "attack-" + scenario.replace(" ", "-"), 0)
        try:
            # A first client, so the server is warm.
            await probe(server.port)
            results[scenario] = await run(server.port, n)
        finally:
            server.stop()
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--r-lib")
    ap.add_argument("--idle", type=int, default=600)
    ap.add_argument("--servers", default="mcpserver,python-sdk,ts-sdk")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.r_lib:
        http_bench.R_LIB = http_bench.ROOT / args.r_lib
    names = args.servers.split(",")
    results = {name: asyncio.run(measure(name, args.idle)) for name in names}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    rows = [
        (f"{args.idle} idle connections: a new client's session + tools/list (ms)",
         lambda r: summary(r["idle"]["probes_ms"])),
        (f"{args.idle} idle connections reopened as closed: tries answered within 1 s",
         lambda r: f'{r["churn"]["within_1s"]} of {r["churn"]["tries"]} ({summary(r["churn"]["probes_ms"])})'),
        (f"{args.idle} stalled bodies reopened as closed: a new client's session + tools/list (ms)",
         lambda r: summary(r["slow body"]["probes_ms"])),
        ("one stalled body: held for (s), then",
         lambda r: f'{r["slow body"]["held_s"]:.1f}, {r["slow body"]["answer"]}'),
    ]
    print("| Attack | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for label, cell in rows:
        print(f"| {label} | " + " | ".join(cell(results[n]) for n in names) + " |")


if __name__ == "__main__":
    sys.exit(main())
