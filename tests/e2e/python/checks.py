"""What the Python drivers share: the fixture's expected answers, the command
a client starts, helpers over the capture log, and the PASS/FAIL report.

Checks look at results in their wire shape (camelCase dicts), so the same
code serves mcp 1.x and 2.x, whose Python objects differ.
"""

import inspect
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import anyio

E2E = Path(__file__).resolve().parents[1]
EXPECTED = json.loads((E2E / "expected.json").read_text(encoding="utf-8"))
CALLS = EXPECTED["calls"]
LEGACY, MODERN = "2025-11-25", "2026-07-28"
LOG_DIR = Path(os.environ.get("E2E_LOG_DIR") or tempfile.mkdtemp(prefix="e2e-wire-"))


def server_command():
    """The command, arguments and environment a client is configured with.

    The client starts capture.py, which starts `Rscript server.R` and records
    the conversation unchanged. Like a real client's `env` entry, only what
    the server needs is passed (the SDKs add a minimal PATH/HOME set).
    """
    rscript = os.environ.get("E2E_RSCRIPT", "Rscript")
    server = os.environ.get("E2E_SERVER", str(E2E / "server.R"))
    args = [str(E2E / "capture.py"), str(LOG_DIR), "--", rscript, server]
    bridge_url = os.environ.get("E2E_BRIDGE_URL")
    if bridge_url:
        # The same server over HTTP, reached through mcp_bridge() as a
        # client that only starts commands would be configured.
        args = args[:-1] + ["-e", f'mcpserver::mcp_bridge("{bridge_url}")']
    env = {k: os.environ[k] for k in ("R_LIBS", "MCPSERVER_TRACE") if k in os.environ}
    return sys.executable, args, env


def describe(error):
    """An exception as one line, looking inside anyio's exception groups."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"


def wire(model):
    """A pydantic result as the JSON the server sent."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


class Report:
    """Prints "PASS name" or "FAIL name: why" per check, as run.sh counts them."""

    def __init__(self):
        self.failed = 0

    def fail(self, name, why):
        self.failed += 1
        print(f"FAIL {name}: {why}", flush=True)

    async def check(self, name, fn, *args):
        """Runs `fn(*args)`, which returns (or awaits to) a list of problems."""
        try:
            problems = fn(*args)
            if inspect.isawaitable(problems):
                problems = await problems
        except Exception as e:  # a client exception is a finding, not a crash
            problems = [describe(e)]
        if problems:
            self.fail(name, "; ".join(str(p) for p in problems))
        else:
            print(f"PASS {name}", flush=True)
        return not problems

    def skip(self, names, why):
        """A check this client cannot run: counted as skipped, with the reason."""
        for name in names:
            print(f"SKIP {name}: {why}", flush=True)


# Results -------------------------------------------------------------------


def text_of(result):
    return "\n".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")


def missing(expected, actual, where="result"):
    """Where `actual` lacks or changes something `expected` has (extra fields are fine)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where} is {json.dumps(actual)}, expected an object"]
        return [p for k, v in expected.items() for p in missing(v, actual.get(k), f"{where}.{k}")]
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where} is {json.dumps(actual)}, expected {json.dumps(expected)}"]
        return [p for i, v in enumerate(expected) for p in missing(v, actual[i], f"{where}[{i}]")]
    return [] if expected == actual else [f"{where} is {json.dumps(actual)}, expected {json.dumps(expected)}"]


def tools_problems(listed, modern):
    tools = {t["name"]: t for t in listed.get("tools", [])}
    names = [t["name"] for t in listed.get("tools", [])]
    if names != EXPECTED["tools"]:
        return [f"tools are {names}, expected {EXPECTED['tools']}"]
    problems = missing(
        {
            "numbers": {"type": "array", "items": {"type": "number"}},
            "count": {"type": "integer"},
            "flag": {"type": "boolean"},
            "unit": {"enum": ["cm", "in"]},
            "options": {"type": "object", "properties": {"label": {"type": "string"}, "scale": {"type": "number"}}},
        },
        tools["typed"]["inputSchema"].get("properties"),
        "typed.inputSchema.properties",
    )
    problems += missing(
        {"type": "object", "properties": {"mean": {"type": "number"}, "n": {"type": "integer"}}},
        tools["stats"].get("outputSchema"),
        "stats.outputSchema",
    )
    # An array-rooted output schema exists only from 2026-07-28; before, the
    # server wraps it in an object with one `result` property.
    array = {"type": "array", "items": {"type": "number"}}
    squares = array if modern else {"type": "object", "properties": {"result": array}}
    problems += missing(squares, tools["squares"].get("outputSchema"), "squares.outputSchema")
    # Argument-less tools need "properties": {} for strict clients.
    problems += missing({"type": "object", "properties": {}}, tools["fail"]["inputSchema"], "fail.inputSchema")
    return problems


def call_problems(name, result, modern):
    """What is wrong with the result of calling fixture tool `name`."""
    spec = CALLS[name]
    text = text_of(result)
    if name == "typed_invalid" or name == "fail":
        problems = [] if result.get("isError") is True else [f"isError is {result.get('isError')}, expected true"]
        wanted = spec.get("error_mentions", [spec.get("error_text")])
        return problems + [f"error text {text!r} does not mention {w!r}" for w in wanted if w not in text]
    problems = [] if not result.get("isError") else [f"isError is true: {text!r}"]
    if "text" in spec and text != spec["text"]:
        problems.append(f"text is {text!r}, expected {spec['text']!r}")
    if name == "stats":
        problems += missing(spec["structured"], result.get("structuredContent"), "structuredContent")
        problems += missing(spec["structured"], json.loads(text), "text copy of structuredContent")
    if name == "squares":
        want = spec["structured_modern"] if modern else spec["structured_legacy"]
        problems += missing(want, result.get("structuredContent"), "structuredContent")
        problems += missing(spec["structured_modern"], json.loads(text), "text copy of the array")
    if name == "everything":
        problems += missing(spec["content"], result.get("content"), "content")
    return problems


def progress_problems(events, result):
    """events: (progress, total, message, arrived_after_result) per callback."""
    spec = CALLS["progress"]
    problems = []
    if len(events) < spec["min_notifications"]:
        hint = f" (tool said: {text_of(result)!r})" if result else ""
        problems.append(f"{len(events)} progress callbacks, expected at least {spec['min_notifications']}{hint}")
    values = [e[0] for e in events]
    if any(b <= a for a, b in zip(values, values[1:])):
        problems.append(f"progress values do not increase: {values}")
    if any(e[1] != spec["arguments"]["steps"] for e in events):
        problems.append(f"totals are {[e[1] for e in events]}, expected {spec['arguments']['steps']}")
    if any(e[3] for e in events):
        problems.append("a progress callback came after the result")
    if result is not None and text_of(result) != spec["text"]:
        problems.append(f"result text is {text_of(result)!r}, expected {spec['text']!r}")
    return problems


# The capture log -----------------------------------------------------------


def wire_mark():
    """Where each capture file ends now: pass to captured() for what came after."""
    return {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in LOG_DIR.glob("conn-*.jsonl")}


def captured(since=None):
    """(direction, message) for every line captured so far, all processes
    (only those after the wire_mark() `since`, if given)."""
    out = []
    for path in sorted(LOG_DIR.glob("conn-*.jsonl")):
        skip = (since or {}).get(path.name, 0)
        for raw in path.read_text(encoding="utf-8").splitlines()[skip:]:
            entry = json.loads(raw)
            try:
                out.append((entry["dir"], json.loads(entry["line"])))
            except ValueError:
                pass  # not JSON: validate_wire.py reports it
    return out


def request_id_of(tool):
    """The JSON-RPC id of the latest tools/call of `tool` the server received."""
    ids = [
        m["id"] for d, m in captured()
        if d == "c2s" and isinstance(m, dict) and m.get("method") == "tools/call"
        and (m.get("params") or {}).get("name") == tool
    ]
    return ids[-1] if ids else None


async def wait_for_request(tool, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = request_id_of(tool)
        if found is not None:
            return found
        await anyio.sleep(0.05)
    raise TimeoutError(f"the server never received the {tool} call")


def cancellation_problems(request_id):
    """The capture shows a cancellation of `request_id` and no response to it."""
    msgs = [(d, m) for d, m in captured() if isinstance(m, dict)]
    cancels = [
        m for d, m in msgs
        if d == "c2s" and m.get("method") == "notifications/cancelled"
        and (m.get("params") or {}).get("requestId") == request_id
    ]
    if not cancels:
        return [f"the client sent no notifications/cancelled for request {request_id}"]
    answers = [m for d, m in msgs if d == "s2c" and "method" not in m and m.get("id") == request_id]
    return [f"the server still answered the cancelled request: {json.dumps(a)[:200]}" for a in answers]


async def timed(coro, limit):
    """Awaits `coro`; returns (value, seconds) or raises TimeoutError after `limit`."""
    start = time.monotonic()
    try:
        with anyio.fail_after(limit):
            value = await coro
    except TimeoutError:
        raise TimeoutError(f"no answer within {limit}s") from None
    return value, time.monotonic() - start


# Asking the user (elicitation) ---------------------------------------------

GREET = CALLS["greet"]
# The checks of tasks, for clients that cannot make them to skip by name.
TASK_CHECKS = ["task-call", "task-required", "task-elicit", "task-cancel"]


class User:
    """The person at the client: answers each elicitation request with the
    planned action (and GREET's answer when accepting), and records what
    was asked, as wire-shaped params."""

    def __init__(self):
        self.action = "accept"
        self.asked = []

    def answer(self, params):
        self.asked.append(params)
        return self.action, (GREET["answer"] if self.action == "accept" else None)


def elicitation_problems(user, asked_before, result, action, wire_since, modern, task_id=None):
    """The greet tool asked once, got `action` back and said so; and the wire
    shows the revision's way of asking: an `elicitation/create` request of
    the server's before 2026-07-28 (and in a task), an `input_required`
    result and a retry carrying the answer and the echoed state on 2026-07-28."""
    problems = []
    asked = user.asked[asked_before:]
    if len(asked) != 1:
        problems.append(f"the user was asked {len(asked)} times, expected once")
    for params in asked[:1]:
        if params.get("message") != GREET["message"]:
            problems.append(f"the question was {params.get('message')!r}, expected {GREET['message']!r}")
        prop = ((params.get("requestedSchema") or {}).get("properties") or {}).get("name")
        if not isinstance(prop, dict) or prop.get("type") != "string":
            problems.append(f"requestedSchema is {json.dumps(params.get('requestedSchema'))}, expected a string `name`")
        if task_id is not None:
            related = ((params.get("_meta") or {}).get("io.modelcontextprotocol/related-task") or {}).get("taskId")
            if related != task_id:
                problems.append(f"the question's related-task is {related!r}, expected {task_id!r}")
    if result is not None:
        want = GREET["text_accept"] if action == "accept" else GREET["text_decline"]
        if result.get("isError"):
            problems.append(f"isError is true: {text_of(result)!r}")
        elif text_of(result) != want:
            problems.append(f"text is {text_of(result)!r}, expected {want!r}")
    return problems + elicitation_wire_problems(wire_since, action, modern and task_id is None)


def elicitation_wire_problems(since, action, retried):
    msgs = [(d, m) for d, m in captured(since) if isinstance(m, dict)]
    asks = [m for d, m in msgs if d == "s2c" and m.get("method") == "elicitation/create" and "id" in m]
    rounds = [m["result"] for d, m in msgs if d == "s2c" and "id" in m
              and isinstance(m.get("result"), dict) and m["result"].get("resultType") == "input_required"]
    if not retried:
        if len(asks) != 1 or rounds:
            return [f"expected one elicitation/create request and no input_required result, "
                    f"saw {len(asks)} and {len(rounds)}"]
        answers = [m for d, m in msgs if d == "c2s" and "method" not in m and m.get("id") == asks[0]["id"]]
        got = answers and (answers[0].get("result") or {}).get("action")
        return [] if got == action else [f"the client answered the elicitation/create with {json.dumps(answers)[:200]}"]
    if asks or len(rounds) != 1:
        return [f"expected one input_required result and no elicitation/create request, saw {len(rounds)} and {len(asks)}"]
    state, keys = rounds[0].get("requestState"), set(rounds[0].get("inputRequests") or {})
    retries = [m["params"] for d, m in msgs if d == "c2s" and m.get("method") == "tools/call"
               and (m.get("params") or {}).get("requestState") is not None]
    if len(retries) != 1:
        return [f"expected one retry with requestState, saw {len(retries)}"]
    retry = retries[0]
    problems = [] if retry["requestState"] == state else ["the retry did not echo requestState byte for byte"]
    responses = retry.get("inputResponses") or {}
    if set(responses) != keys:
        problems.append(f"the retry answers {sorted(responses)}, the server asked {sorted(keys)}")
    elif any(r.get("action") != action for r in responses.values()):
        problems.append(f"the retry carries {json.dumps(responses)[:200]}, expected action {action!r}")
    return problems


# Tasks ---------------------------------------------------------------------


def task_result_problems(name, result):
    """The final result of a task of the fixture tool `name` (background or task_only)."""
    spec = CALLS[name]
    problems = [] if not result.get("isError") else [f"isError is true: {text_of(result)!r}"]
    if "structured" in spec:
        problems += missing(spec["structured"], result.get("structuredContent"), "structuredContent")
    if "text" in spec and text_of(result) != spec["text"]:
        problems.append(f"text is {text_of(result)!r}, expected {spec['text']!r}")
    return problems


def task_wire_problems(since, tool):
    """The task-augmented call of `tool` went out with `params.task`, was answered
    with a task handle, and tasks/get was polled."""
    msgs = [(d, m) for d, m in captured(since) if isinstance(m, dict)]
    calls = [m for d, m in msgs if d == "c2s" and m.get("method") == "tools/call"
             and (m.get("params") or {}).get("name") == tool]
    if len(calls) != 1 or "task" not in calls[0]["params"]:
        return [f"expected one tools/call of {tool} with params.task, saw {[c.get('params') for c in calls]}"]
    answer = [m for d, m in msgs if d == "s2c" and m.get("id") == calls[0]["id"] and "method" not in m]
    task = answer and (answer[0].get("result") or {}).get("task")
    if not task:
        return [f"the call was not answered with a task: {json.dumps(answer)[:200]}"]
    gets = [m for d, m in msgs if d == "c2s" and m.get("method") == "tasks/get"]
    return [] if gets else ["the client never polled tasks/get"]
