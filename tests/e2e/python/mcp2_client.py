"""End-to-end checks with the Python MCP SDK 2.x `Client`.

    python mcp2_client.py auto|legacy|2026-07-28

One server process for all checks: the client starts it as a user's client
would (through capture.py, which records the wire). Prints PASS/FAIL lines,
and SKIP lines for the task checks: mcp 2.x has no tasks API (the 2025-11-25
task types are types-only, and the 2026-07-28 tasks extension is not shipped).
"""

import sys

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError

from checks import (
    CALLS, EXPECTED, LEGACY, MODERN, TASK_CHECKS, Report, User, call_problems, cancellation_problems, describe,
    elicitation_problems, progress_problems, server_command, task_result_problems, text_of, timed,
    tools_problems, wait_for_request, wire, wire_mark,
)

NO_TASKS = ("mcp 2.3.0 has no tasks API: the 2025-11-25 task requests are types-only "
            "(excluded from ClientRequest) and no io.modelcontextprotocol/tasks extension ships")


async def main(mode):
    report = Report()
    version = LEGACY if mode == "legacy" else MODERN
    modern = version == MODERN
    command, args, env = server_command()
    params = StdioServerParameters(command=command, args=args, env=env)
    connected = False
    user = User()

    async def on_elicit(context, request):
        # The SDK's form-mode params object, as the wire JSON the server sent.
        action, content = user.answer(wire(request))
        return types.ElicitResult(action=action, content=content)

    try:
        async with Client(params, mode=mode, read_timeout_seconds=20, elicitation_callback=on_elicit) as client:
            connected = True
            await report.check("connect", lambda: [] if client.protocol_version == version
                               else [f"negotiated {client.protocol_version}, expected {version}"])
            await report.check("server-info", server_info, client, mode)
            await report.check("tools-list", listed_problems, client, modern)

            async def call(name, key=None):
                spec = CALLS[key or name]
                result = await client.call_tool(name, spec.get("arguments", {}))
                return call_problems(key or name, wire(result), modern)

            await report.check("call-text", call, "echo")
            await report.check("call-typed-arguments", call, "typed")
            await report.check("call-invalid-arguments", call, "typed", "typed_invalid")
            await report.check("call-structured-object", call, "stats")
            await report.check("call-structured-array", call, "squares")
            await report.check("call-content-types", call, "everything")
            await report.check("call-r-error", call, "fail")
            await report.check("call-stdout-noise", call, "noisy")
            await report.check("call-unknown-tool", unknown_tool, client)
            await report.check("progress", progress, client)
            await cancellation(report, client, modern)
            await report.check("elicit-accept", elicit, client, user, "accept", modern)
            await report.check("elicit-decline", elicit, client, user, "decline", modern)
            await report.check("task-direct", direct_call, client)
            await report.check("task-required-refused", task_required_refused, client, modern)
            report.skip(TASK_CHECKS, NO_TASKS)
    except Exception as e:
        report.fail("session" if connected else "connect", describe(e))
    return 1 if report.failed else 0


async def server_info(client, mode):
    if mode == MODERN:
        # A pinned client adopts the version without asking the server, so
        # it knows nothing about it: send server/discover explicitly.
        raw = await client.session.send_discover(MODERN)
        info = raw.get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {})
        got = {"name": info.get("name"), "version": info.get("version"), "instructions": raw.get("instructions")}
    else:
        info = client.server_info
        got = {"name": info and info.name, "version": info and info.version, "instructions": client.instructions}
    return [f"{k} is {got[k]!r}, expected {v!r}" for k, v in EXPECTED["server"].items() if got[k] != v]


async def listed_problems(client, modern):
    return tools_problems(wire(await client.list_tools()), modern)


async def unknown_tool(client):
    try:
        result = await client.call_tool("no_such_tool", {})
    except MCPError as e:
        return [] if e.error.code == -32602 else [f"error code {e.error.code}, expected -32602"]
    return [f"a result instead of error -32602: {wire(result)}"]


async def progress(client):
    events, state = [], {"done": False}

    async def on_progress(value, total, message):
        events.append((value, total, message, state["done"]))

    result = await client.call_tool("progress", CALLS["progress"]["arguments"], progress_callback=on_progress)
    state["done"] = True
    await anyio.sleep(0.2)  # let a late notification show up as such
    return progress_problems(events, wire(result))


async def while_busy(client, modern):
    """While R runs a tool, the server's own threads still answer: ping
    (keepalives) before 2026-07-28, where ping no longer exists tools/list."""
    if modern:
        await timed(client.list_tools(cache_mode="bypass"), 3)
    else:
        await timed(client.session.send_ping(), 3)
    return []


async def cancellation(report, client, modern):
    """Cancel the 30-second tool: no result for it; the next call runs at once."""
    outcome = {}

    async def slow():
        outcome["result"] = await client.call_tool("slow", {})

    async with anyio.create_task_group() as tg:
        tg.start_soon(slow)
        request_id = await wait_for_request("slow")
        await anyio.sleep(0.5)  # R is inside Sys.sleep() by now
        await report.check("answers-while-busy", while_busy, client, modern)
        tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled

    async def next_call():
        if "result" in outcome:
            return [f"the cancelled call returned {text_of(wire(outcome['result']))!r}"]
        result, seconds = await timed(client.call_tool("echo", CALLS["echo"]["arguments"]), 10)
        problems = call_problems("echo", wire(result), False)
        if seconds > 5:
            problems.append(f"the next call took {seconds:.1f}s: the R code was not interrupted")
        return problems

    await report.check("cancel-next-call", next_call)
    await anyio.sleep(0.2)
    await report.check("cancel-no-response", cancellation_problems, request_id)


async def elicit(client, user, action, modern):
    """greet asks for a name: on 2026-07-28 (auto, pinned) Client.call_tool
    answers the input_required result through the elicitation callback and
    retries; in legacy mode the callback answers the server's request."""
    user.action, before, since = action, len(user.asked), wire_mark()
    result = await client.call_tool("greet", {})
    return elicitation_problems(user, before, wire(result), action, since, modern)


async def direct_call(client):
    """A tool that may run as a task runs directly when no task is asked for."""
    result = await client.call_tool("background", CALLS["background"]["arguments"])
    return task_result_problems("background", wire(result))


async def task_required_refused(client, modern):
    """A tool that runs only as a task: a call without one is refused with
    -32601 on 2025-11-25 and -32021 (missing client capability) on 2026-07-28."""
    want = -32021 if modern else -32601
    try:
        result = await client.call_tool("task_only", {})
    except MCPError as e:
        return [] if e.error.code == want else [f"error code {e.error.code}, expected {want}"]
    return [f"a result instead of error {want}: {wire(result)}"]


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1]))
