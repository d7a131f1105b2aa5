"""End-to-end checks with the Python MCP SDK 1.x (`ClientSession`).

    python mcp1_client.py

mcp 1.x speaks only the handshake era (it offers 2025-11-25). One server
process for all checks, started through capture.py. Prints PASS/FAIL lines.
Tasks go through its experimental (deprecated) 2025-11-25 tasks API,
`session.experimental`.
"""

import sys
import warnings

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

from checks import (
    CALLS, EXPECTED, LEGACY, Report, User, call_problems, cancellation_problems, describe,
    elicitation_problems, progress_problems, server_command, task_result_problems, task_wire_problems,
    text_of, timed, tools_problems, wait_for_request, wire, wire_mark,
)

# The tasks API warns that it is deprecated (tasks left the core protocol
# in 2026-07-28); 2025-11-25 servers still have them.
warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*tasks.*")


async def main():
    report = Report()
    command, args, env = server_command()
    params = StdioServerParameters(command=command, args=args, env=env)
    connected = False
    user = User()

    async def on_elicit(context, request):
        action, content = user.answer(wire(request))
        return types.ElicitResult(action=action, content=content)

    try:
        async with stdio_client(params) as (read, write), \
                ClientSession(read, write, elicitation_callback=on_elicit) as session:
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
            await report.check("elicit-accept", elicit, session, user, "accept")
            await report.check("elicit-decline", elicit, session, user, "decline")
            await report.check("task-direct", direct_call, session)
            await report.check("task-required-refused", task_required_refused, session)
            await report.check("task-call", task_call, session)
            await report.check("task-required", task_required, session)
            await report.check("task-elicit", task_elicit, session, user)
            await report.check("task-cancel", task_cancel, session)
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


async def elicit(session, user, action):
    """greet asks for a name: the server sends elicitation/create, the callback answers."""
    user.action, before, since = action, len(user.asked), wire_mark()
    result = await session.call_tool("greet", {})
    return elicitation_problems(user, before, wire(result), action, since, False)


async def direct_call(session):
    """A tool that may run as a task runs directly when no task is asked for."""
    result = await session.call_tool("background", CALLS["background"]["arguments"])
    return task_result_problems("background", wire(result))


async def task_required_refused(session):
    """A tool that runs only as a task: a call without one gets -32601."""
    try:
        result = await session.call_tool("task_only", {})
    except McpError as e:
        return [] if e.error.code == -32601 else [f"error code {e.error.code}, expected -32601"]
    return [f"a result instead of error -32601: {wire(result)}"]


async def run_task(session, name, arguments):
    """Calls `name` as a task and polls it to the end: (task id, statuses, result or None)."""
    created = await session.experimental.call_tool_as_task(name, arguments, ttl=60000)
    task_id = created.task.taskId
    statuses = [created.task.status]
    async for status in session.experimental.poll_task(task_id):
        if status.taskId != task_id:
            raise AssertionError(f"tasks/get for {task_id} answered for {status.taskId}")
        statuses.append(status.status)
    result = None
    if statuses[-1] == "completed":
        result = await session.experimental.get_task_result(task_id, types.CallToolResult)
    return task_id, statuses, result


def run_problems(name, task_id, statuses, result):
    problems = [] if statuses[0] == "working" else [f"the task was created {statuses[0]}, expected working"]
    if statuses[-1] != "completed" or result is None:
        return problems + [f"the task went {' -> '.join(statuses)}, expected to complete"]
    related = (wire(result).get("_meta") or {}).get("io.modelcontextprotocol/related-task", {}).get("taskId")
    if related != task_id:
        problems.append(f"tasks/result carries related-task {related!r}, expected {task_id!r}")
    return problems + task_result_problems(name, wire(result))


async def task_call(session):
    """background as a task: created at once, polled with tasks/get, its
    result fetched with tasks/result, and listed by tasks/list."""
    since = wire_mark()
    task_id, statuses, result = await run_task(session, "background", CALLS["background"]["arguments"])
    problems = run_problems("background", task_id, statuses, result)
    listed = await session.experimental.list_tasks()
    found = [t for t in listed.tasks if t.taskId == task_id]
    if not found or found[0].status != "completed":
        problems.append(f"tasks/list shows {[(t.taskId, t.status) for t in listed.tasks]}, expected {task_id} completed")
    return problems + task_wire_problems(since, "background")


async def task_required(session):
    """task_only, which runs only as a task, runs as one."""
    task_id, statuses, result = await run_task(session, "task_only", {})
    return run_problems("task_only", task_id, statuses, result)


async def task_elicit(session, user):
    """greet as a task: its question reaches the elicitation callback, tied
    to the task, and the task completes with the answer."""
    user.action, before, since = "accept", len(user.asked), wire_mark()
    task_id, statuses, result = await run_task(session, "greet", {})
    problems = run_problems("greet", task_id, statuses, None) if result is None else []
    return problems + elicitation_problems(user, before, result and wire(result), "accept", since, False, task_id)


async def task_cancel(session):
    """A 30-second task is cancelled: tasks/cancel reports it cancelled,
    tasks/get agrees, tasks/result has no result, and the next call runs at once."""
    created = await session.experimental.call_tool_as_task("background", CALLS["background"]["cancel_arguments"])
    task_id = created.task.taskId
    await anyio.sleep(0.5)  # R is inside Sys.sleep() by now
    cancelled = await session.experimental.cancel_task(task_id)
    problems = [] if cancelled.status == "cancelled" else [f"tasks/cancel answered {cancelled.status}"]
    status = await session.experimental.get_task(task_id)
    if status.status != "cancelled":
        problems.append(f"tasks/get says {status.status} after the cancel")
    try:
        result = await session.experimental.get_task_result(task_id, types.CallToolResult)
        problems.append(f"tasks/result of the cancelled task answered {wire(result)}")
    except McpError:
        pass
    result, seconds = await timed(session.call_tool("echo", CALLS["echo"]["arguments"]), 10)
    problems += call_problems("echo", wire(result), False)
    if seconds > 5:
        problems.append(f"the next call took {seconds:.1f}s: the task's R code was not interrupted")
    return problems


if __name__ == "__main__":
    sys.exit(anyio.run(main))
