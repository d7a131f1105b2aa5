"""End-to-end checks of Streamable HTTP with the Python MCP SDK 2.x `Client`.

    python http_client.py auto|legacy|2026-07-28

Starts tests/e2e/server.R serving HTTP on a free port (E2E_TRANSPORT=http),
reads the URL it prints on stderr, and connects to it by URL as a remote
client would, through http_capture.py when E2E_LOG_DIR is set (run.sh then
checks the recorded messages with validate_wire.py). Prints PASS/FAIL lines.
"""

import os
import re
import subprocess
import sys
import time

import anyio
from mcp import Client, types

from checks import CALLS, EXPECTED, LEGACY, MODERN, GREET, Report, User, call_problems, describe, text_of, wire

E2E = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def capture(url):
    """The recording proxy in front of `url` (see http_capture.py), or none."""
    log_dir = os.environ.get("E2E_LOG_DIR")
    if not log_dir:
        return None, url
    proxy = subprocess.Popen([sys.executable, os.path.join(E2E, "http_capture.py"), log_dir, url],
                             stdout=subprocess.PIPE, text=True)
    return proxy, proxy.stdout.readline().strip()


def start_server():
    """`Rscript server.R` serving HTTP; returns the process and its URL."""
    rscript = os.environ.get("E2E_RSCRIPT", "Rscript")
    env = dict(os.environ, E2E_TRANSPORT="http")
    proc = subprocess.Popen([rscript, os.path.join(E2E, "server.R")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    said = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        said.append(line)
        found = re.search(r"http://\S+", line)
        if found:
            return proc, found.group(0)
    proc.kill()
    raise RuntimeError("the server did not say where it listens: " + "".join(said))


async def main(mode):
    report = Report()
    version = LEGACY if mode == "legacy" else MODERN
    modern = version == MODERN
    proc, url = start_server()
    proxy, url = capture(url)
    user = User()

    async def on_elicit(context, request):
        action, content = user.answer(wire(request))
        return types.ElicitResult(action=action, content=content)

    try:
        async with Client(url, mode=mode, read_timeout_seconds=20, elicitation_callback=on_elicit) as client:
            await report.check("http-connect", lambda: [] if client.protocol_version == version
                               else [f"negotiated {client.protocol_version}, expected {version}"])

            async def listed():
                tools = await client.list_tools()
                names = [t.name for t in tools.tools]
                return [] if names == EXPECTED["tools"] else [f"tools are {names}"]

            await report.check("http-tools-list", listed)

            async def call(name):
                spec = CALLS[name]
                result = await client.call_tool(name, spec.get("arguments", {}))
                return call_problems(name, wire(result), modern)

            await report.check("http-call-text", call, "echo")
            await report.check("http-call-structured", call, "stats")
            await report.check("http-call-r-error", call, "fail")

            async def progress():
                events = []

                async def on_progress(progress, total, message):
                    events.append(progress)

                spec = CALLS["progress"]
                result = await client.call_tool("progress", spec["arguments"], progress_callback=on_progress)
                problems = [] if text_of(wire(result)) == spec["text"] else [f"text {text_of(wire(result))!r}"]
                if len(events) < spec["min_notifications"]:
                    problems.append(f"{len(events)} progress callbacks over HTTP, expected {spec['min_notifications']}")
                return problems

            await report.check("http-progress", progress)

            async def greet():
                user.action = "accept"
                result = await client.call_tool("greet", {})
                text = text_of(wire(result))
                return [] if text == GREET["text_accept"] else [f"greeting is {text!r}"]

            await report.check("http-elicitation", greet)

            async def concurrent():
                # Several calls at once on one connection, answered each to its own.
                results = {}

                async def one(n):
                    r = await client.call_tool("echo", {"text": f"call {n}"})
                    results[n] = text_of(wire(r))

                async with anyio.create_task_group() as tg:
                    for n in range(5):
                        tg.start_soon(one, n)
                return [f"call {n} got {results.get(n)!r}" for n in range(5) if results.get(n) != f"echo: call {n}"]

            await report.check("http-concurrent-calls", concurrent)
    except Exception as e:
        report.fail("http-session", describe(e))
    finally:
        if proxy:
            proxy.terminate()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    return report.failed


if __name__ == "__main__":
    sys.exit(1 if anyio.run(main, sys.argv[1]) else 0)
