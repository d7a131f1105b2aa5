"""End-to-end checks with the Python MCP SDK 1.x (`ClientSession`).

    python mcp1_client.py

mcp 1.x speaks only the handshake era (it offers 2025-11-25). One server
process for all checks, started through capture.py. Prints PASS/FAIL lines.
"""

import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

from checks import (
    CALLS, EXPECTED, LEGACY, Report, call_problems, cancellation_problems, describe,
    progress_problems, server_command, text_of, timed, tools_problems, wait_for_request, wire,
)


async def main():
    report = Report()
    command, args, env = server_command()
    params = StdioServerParameters(command=command, args=args, env=env)
    connected = False
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            connected = True
            await report.check("connect", lambda: [] if init.protocolVersion == LEGACY
                               else [f"negotiated {init.protocolVersion}, expected {LEGACY}"])
            got = {"name": init.serverInfo.name, "version": init.serverInfo.version, "instructions": init.instructions}
            await report.check("server-info", lambda: [
                f"{k} is {got[k]!r}, expected {v!r}" for k, v in EXPECTED["server"].items() if got[k] != v])

            async def listed():
                return tools_problems(wire(await session.list_tools()), False)

            await report.check("tools-list", listed)

            async def call(name, key=None):
                result = await session.call_tool(name, CALLS[key or name].get("arguments", {}))
                return call_problems(key or name, wire(result), False)

            await report.check("call-text", call, "echo")
            await report.check("call-typed-arguments", call, "typed")
            await report.check("call-invalid-arguments", call, "typed", "typed_invalid")
            await report.check("call-structured-object", call, "stats")
            await report.check("call-structured-array", call, "squares")
            await report.check("call-content-types", call, "everything")
            await report.check("call-r-error", call, "fail")
            await report.check("call-stdout-noise", call, "noisy")
            await report.check("call-unknown-tool", unknown_tool, session)
            await report.check("progress", progress, session)
            await cancellation(report, session)
    except Exception as e:
        report.fail("session" if connected else "connect", describe(e))
    return 1 if report.failed else 0


async def unknown_tool(session):
    try:
        result = await session.call_tool("no_such_tool", {})
    except McpError as e:
        return [] if e.error.code == -32602 else [f"error code {e.error.code}, expected -32602"]
    return [f"a result instead of error -32602: {wire(result)}"]


async def progress(session):
    events, state = [], {"done": False}

    async def on_progress(value, total, message):
        events.append((value, total, message, state["done"]))

    result = await session.call_tool("progress", CALLS["progress"]["arguments"], progress_callback=on_progress)
    state["done"] = True
    await anyio.sleep(0.2)
    return progress_problems(events, wire(result))


async def cancellation(report, session):
    """Cancel the 30-second tool: no result for it; the next call runs at once.

    mcp 1.x does not send notifications/cancelled when a call is abandoned,
    so send it through the public notification API, as an application
    would, with the request id the server received (from the capture).
    """
    outcome = {}

    async def slow():
        outcome["result"] = await session.call_tool("slow", {})

    async with anyio.create_task_group() as tg:
        tg.start_soon(slow)
        request_id = await wait_for_request("slow")
        await anyio.sleep(0.5)

        async def ping_while_busy():
            await timed(session.send_ping(), 3)  # keepalives must not wait for R
            return []

        await report.check("answers-while-busy", ping_while_busy)
        await session.send_notification(types.ClientNotification(types.CancelledNotification(
            params=types.CancelledNotificationParams(requestId=request_id, reason="e2e cancel"))))
        tg.cancel_scope.cancel()

    async def next_call():
        if "result" in outcome:
            return [f"the cancelled call returned {text_of(wire(outcome['result']))!r}"]
        result, seconds = await timed(session.call_tool("echo", CALLS["echo"]["arguments"]), 10)
        problems = call_problems("echo", wire(result), False)
        if seconds > 5:
            problems.append(f"the next call took {seconds:.1f}s: the R code was not interrupted")
        return problems

    await report.check("cancel-next-call", next_call)
    await anyio.sleep(0.2)
    await report.check("cancel-no-response", cancellation_problems, request_id)


if __name__ == "__main__":
    sys.exit(anyio.run(main))
