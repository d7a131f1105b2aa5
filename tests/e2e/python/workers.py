"""Concurrent tools with the Python MCP SDK 2.x `Client` (legacy mode).

    python workers.py WIRE_DIR

Starts tests/testthat/fixtures/workers.R (tools with `concurrent = TRUE`
on two workers) behind capture.py, sends two calls of a 1-s tool at
once and checks, from the start and end times the tool reports, that they
ran at the same time in different processes; checks that progress and log
messages from a worker reach the client; that a tool on a worker asks the
user through the client's elicitation callback (an `elicitation/create`
request in legacy mode, `input_required` rounds on 2026-07-28) while
another call runs; then validates the recorded wire. Prints PASS/FAIL
lines as run.sh counts them.
"""

import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters, types

from checks import E2E, Report, describe, wire

FIXTURE = E2E.parents[0] / "testthat" / "fixtures" / "workers.R"


async def main(wire_dir):
    report = Report()
    rscript = os.environ.get("E2E_RSCRIPT", "Rscript")
    env = {k: os.environ[k] for k in ("R_LIBS", "MCPSERVER_TRACE") if k in os.environ}
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(E2E / "capture.py"), str(wire_dir), "--", rscript, str(FIXTURE)],
        env=env,
    )
    logs, progress = [], []

    async def on_log(params):
        logs.append(wire(params).get("data"))

    async def on_progress(value, total, message):
        progress.append(value)

    try:
        with anyio.fail_after(120):
            async with Client(params, mode="legacy", read_timeout_seconds=60, logging_callback=on_log) as client:
                results = {}

                async def nap(key):
                    results[key] = wire(await client.call_tool("nap", {"seconds": 1}))

                async with anyio.create_task_group() as group:
                    group.start_soon(nap, "a")
                    group.start_soon(nap, "b")

                def overlap():
                    a, b = (results[k].get("structuredContent", {}) for k in ("a", "b"))
                    problems = [f"{k}: {results[k]}" for k in ("a", "b") if results[k].get("isError")]
                    if problems:
                        return problems
                    if not (a["start"] < b["end"] and b["start"] < a["end"]):
                        problems.append(f"the calls did not overlap: {a} {b}")
                    if a["pid"] == b["pid"]:
                        problems.append(f"both ran in process {a['pid']}")
                    return problems

                await report.check("workers/parallel-calls-overlap", overlap)

                await client.set_logging_level("info")
                result = wire(await client.call_tool("chatty", {"n": 3}, progress_callback=on_progress))

                def relayed():
                    problems = []
                    if result.get("isError"):
                        problems.append(f"the call failed: {result}")
                    expected = ["message 1", "log 1", "message 2", "log 2", "message 3", "log 3", "careful"]
                    if logs != expected:
                        problems.append(f"log messages {logs}, expected {expected}")
                    if not progress or progress[-1] != 3 or progress != sorted(set(progress)):
                        problems.append(f"progress {progress}, expected increasing values ending at 3")
                    return problems

                await report.check("workers/progress-and-logs-relayed", relayed)
    except Exception as e:
        report.fail("workers/session", describe(e))
    await elicitation_checks(report, params)
    validated = subprocess.run(
        [sys.executable, str(E2E / "validate_wire.py"), str(wire_dir)],
        capture_output=True, text=True, timeout=60,
    )
    for line in validated.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        print(f"{kind} workers/{rest}" if kind in ("PASS", "FAIL", "SKIP") else line, flush=True)
        report.failed += kind == "FAIL"
    if validated.returncode != 0 and not report.failed:
        report.fail("workers/wire-validation", f"validate_wire.py exited with {validated.returncode}")
    return 1 if report.failed else 0


async def elicitation_checks(report, params):
    """mcp_elicit() in a worker, answered by the client's callback: in a
    legacy session while a second call runs beside it, and in 2026-07-28
    mode, where the client answers two input_required rounds."""
    asked = []

    async def on_elicit(context, request):
        asked.append(wire(request))
        # The user takes a moment; the server goes on meanwhile.
        await anyio.sleep(0.3)
        if wire(request).get("message") == "Pick a colour":
            return types.ElicitResult(action="accept", content={"colour": "blue"})
        if wire(request).get("message") == "How many?":
            return types.ElicitResult(action="accept", content={"n": 2, "sure": True})
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    for mode, key in (("legacy", "legacy"), ("2026-07-28", "modern")):
        asked.clear()
        try:
            with anyio.fail_after(120):
                async with Client(params, mode=mode, read_timeout_seconds=60, elicitation_callback=on_elicit) as client:
                    results = {}

                    async def call(name, arguments):
                        results[name] = wire(await client.call_tool(name, arguments))

                    async with anyio.create_task_group() as group:
                        group.start_soon(call, "ask", {})
                        group.start_soon(call, "nap", {"seconds": 0.5})
                    await call("ask_twice", {})

                    def answered():
                        problems = [f"{name}: {r}" for name, r in results.items() if r.get("isError")]
                        texts = {name: (r.get("content") or [{}])[0].get("text") for name, r in results.items()}
                        expected = {"ask": "Hello, Ada!", "ask_twice": "blue 2 TRUE"}
                        for name, text in expected.items():
                            if texts.get(name) != text:
                                problems.append(f"{name} answered {texts.get(name)!r}, expected {text!r}")
                        messages = [a.get("message") for a in asked]
                        wanted = ["What is your name?", "Pick a colour", "How many?"]
                        if sorted(messages) != sorted(wanted):
                            problems.append(f"the user was asked {messages}, expected {wanted}")
                        return problems

                    await report.check(f"workers/elicit-in-worker-{key}", answered)
        except Exception as e:
            report.fail(f"workers/elicit-session-{key}", describe(e))


if __name__ == "__main__":
    sys.exit(anyio.run(main, Path(sys.argv[1])))
