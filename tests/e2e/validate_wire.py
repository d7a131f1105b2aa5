"""Checks every message the server wrote during an end-to-end run.

    python validate_wire.py LOG_DIR

LOG_DIR holds the conn-*.jsonl files of capture.py, one per server process.
Prints one line per check, "PASS name", "FAIL name: why" or "SKIP name: why",
and exits non-zero if a check failed:

- wire-json: every line the server wrote is one UTF-8 JSON-RPC object
  (anything else, such as stray printing, breaks real clients);
- wire-schema: every message validates against the official schema.json of
  the revision in use for it (a missing schema is a failure);
- wire-answers: every request gets exactly one response, except a
  cancelled request, which gets nothing after its cancellation;
- wire-progress: progress notifications carry the token of a request still
  in flight, increase, and come before that request's response.

Results are checked as the type their request asks for: a task-augmented
`tools/call` (2025-11-25 `params.task`) as CreateTaskResult, `tasks/get` as
GetTaskResult, `tasks/result` as the result of the request that made the
task (with its related-task `_meta`), and so on. A 2026-07-28 result is
checked by its `resultType`: `input_required` as InputRequiredResult. The
server's own requests (elicitation/create, before 2026-07-28, which has
none) validate as JSONRPCRequest and their specific type (ElicitRequest).
Messages of the 2026-07-28 tasks extension (`resultType: "task"`, and the
answers to its `tasks/get`, `tasks/update`, `tasks/cancel`) are not in the
core schema: they validate as a Result (the envelope), and their
`resultType`, `taskId`, `status` and status-specific fields (`result`,
`error`, `inputRequests`) are checked by hand.

The revision of a response is the one its request used: the
`io.modelcontextprotocol/protocolVersion` in a 2026-07-28 request's `_meta`,
otherwise the version the connection's `initialize` negotiated. The
schemas are kept with the R tests, in
tests/testthat/schemas/<revision>/schema.json (see the README there).
Needs the jsonschema package (the mcp 2.x environment has it).
"""

import glob
import json
import os
import sys
from pathlib import Path

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
RELATED_TASK = "io.modelcontextprotocol/related-task"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
MODERN_ENVELOPES = "2025-11-25"  # JSONRPCResultResponse / JSONRPCErrorResponse from here on
CORE_TASKS = "2025-11-25"  # the one revision with tasks in the core protocol
TASK_STATUSES = {"working", "input_required", "completed", "failed", "cancelled"}
# Requests whose 2026-07-28 result may be `input_required` (SEP-2322).
INPUT_REQUIRED_METHODS = {"tools/call", "prompts/get", "resources/read"}

# The result each request method gets; anything else is checked as Result.
RESULT_TYPES = {
    "initialize": "InitializeResult",
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    # 2025-11-25 tasks; `tasks/result` is checked as its task's own request.
    "tasks/get": "GetTaskResult",
    "tasks/list": "ListTasksResult",
    "tasks/cancel": "CancelTaskResult",
}


# Every revision the server speaks; each must have its schema.
REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "testthat" / "schemas"


def missing_schemas():
    return [str(SCHEMA_DIR / rev / "schema.json") for rev in REVISIONS
            if not (SCHEMA_DIR / rev / "schema.json").is_file()]


class Schemas:
    """Validators for the definitions of each revision's schema.json."""

    def __init__(self, folder):
        import jsonschema

        self.jsonschema = jsonschema
        self.folder = folder
        self.revisions = REVISIONS
        self.docs = {}
        self.validators = {}

    def doc(self, rev):
        if rev not in self.docs:
            self.docs[rev] = json.loads((self.folder / rev / "schema.json").read_text())
        return self.docs[rev]

    def defs(self, rev):
        doc = self.doc(rev)
        return doc.get("$defs") or doc.get("definitions")

    def has(self, rev, name):
        return name in self.defs(rev)

    def problems(self, rev, name, instance):
        key = (rev, name)
        if key not in self.validators:
            doc = self.doc(rev)
            where = "$defs" if "$defs" in doc else "definitions"
            # The whole document with a root $ref, so internal $refs resolve.
            root = dict(doc, **{"$ref": f"#/{where}/{name}"})
            cls = self.jsonschema.validators.validator_for(doc)
            self.validators[key] = cls(root)
        errors = sorted(self.validators[key].iter_errors(instance), key=lambda e: list(e.path))
        return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:200]}" for e in errors[:3]]

    def notification_type(self, rev, method):
        # e.g. notifications/progress -> ProgressNotification, found by the
        # method constant in the schema rather than a hand-written table.
        return self.message_type(rev, method, "Notification")

    def request_type(self, rev, method):
        # e.g. elicitation/create -> ElicitRequest
        return self.message_type(rev, method, "Request")

    def message_type(self, rev, method, suffix):
        for name, spec in self.defs(rev).items():
            const = spec.get("properties", {}).get("method", {}).get("const")
            if const == method and name.endswith(suffix):
                return name
        return None


def read_log(path):
    entries = []
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        if raw.strip():
            entries.append(json.loads(raw))
    return entries


def id_key(value):
    # 1 and "1" are different JSON-RPC ids.
    return json.dumps(value)


class Connection:
    """Replays one server process's conversation and checks it."""

    def __init__(self, name, entries, schemas):
        self.name = name
        self.entries = entries
        self.schemas = schemas
        self.legacy_rev = None  # what `initialize` negotiated on this process
        self.requests = {}  # id key -> {"method", "rev", "answered", "cancelled", "requested"}
        self.tokens = {}  # progress token key -> request id key
        self.progress = {}  # token key -> last progress value
        self.counted = 0  # server messages checked
        self.lines = 0  # server lines seen
        self.progress_sent = 0
        self.tasks = {}  # task id -> {"method": request that made it, "dialect": "core" | "extension"}
        self.kinds = {}  # what was seen, for the summary: "elicitation requests" -> count, ...
        self.failures = {"wire-json": [], "wire-schema": [], "wire-answers": [], "wire-progress": []}

    def fail(self, check, message):
        self.failures[check].append(f"{self.name}: {message}")

    def saw(self, kind):
        self.kinds[kind] = self.kinds.get(kind, 0) + 1

    def newest(self, legacy_only=False):
        return [r for r in self.schemas.revisions if not legacy_only or r <= MODERN_ENVELOPES][-1]

    def known(self, rev):
        return rev if rev in self.schemas.revisions else self.newest()

    def run(self):
        for entry in self.entries:
            if entry["dir"] == "c2s":
                self.client_line(entry["line"])
            else:
                if entry.get("unterminated"):
                    self.fail("wire-json", f"the last line has no newline: {entry['line'][:120]!r}")
                self.server_line(entry["line"])
        for key, req in self.requests.items():
            if not req["answered"] and not req["cancelled"]:
                self.fail("wire-answers", f"request {key} ({req['method']}) was never answered")

    def client_line(self, line):
        try:
            msg = json.loads(line)
        except ValueError:
            return  # the clients' own output is not ours to judge
        for m in msg if isinstance(msg, list) else [msg]:
            if not isinstance(m, dict) or "method" not in m:
                continue
            params = m.get("params") or {}
            meta = params.get("_meta") or {}
            if "id" in m:
                modern = meta.get(VERSION_KEY)
                if m["method"] == "initialize":
                    rev = None  # settled by the response
                elif modern:
                    rev = self.known(modern)
                else:
                    rev = self.legacy_rev or self.newest(legacy_only=True)
                caps = meta.get(CAPABILITIES_KEY) or {}
                self.requests[id_key(m["id"])] = {
                    "method": m["method"], "rev": rev, "answered": False, "cancelled": False,
                    "requested": params.get("protocolVersion"),
                    "task": params.get("task"),  # 2025-11-25 task augmentation
                    "task_id": params.get("taskId"),
                    "tasks_extension": TASKS_EXTENSION in ((caps.get("extensions") or {}) if isinstance(caps, dict) else {}),
                }
                if "progressToken" in meta:
                    self.tokens[id_key(meta["progressToken"])] = id_key(m["id"])
            elif m["method"] == "notifications/cancelled":
                req = self.requests.get(id_key(params.get("requestId")))
                if req is not None and not req["answered"]:
                    req["cancelled"] = True

    def server_line(self, line):
        self.lines += 1
        try:
            line.encode("utf-8")
            msg = json.loads(line)
        except (UnicodeEncodeError, ValueError):
            self.fail("wire-json", f"not a JSON message: {line[:120]!r}")
            return
        if not isinstance(msg, dict):
            # A batch answer is only legal on 2025-03-26, which no client here negotiates.
            self.fail("wire-json", f"not a single JSON-RPC object: {line[:120]}")
            return
        self.counted += 1
        if "id" in msg and ("result" in msg or "error" in msg):
            self.response(msg, line)
        elif "method" in msg and "id" in msg:
            self.server_request(msg, line)
        elif "method" in msg:
            self.notification(msg, line)
        else:
            self.fail("wire-json", f"neither a response nor a notification: {line[:120]}")

    def response(self, msg, line):
        key = id_key(msg["id"])
        req = self.requests.get(key)
        if msg["id"] is None:
            req = None  # an error for a message whose id could not be read
        elif req is None:
            self.fail("wire-answers", f"response to unknown request id {key}")
        elif req["cancelled"]:
            self.fail("wire-answers", f"response to cancelled request {key} ({req['method']})")
        elif req["answered"]:
            self.fail("wire-answers", f"second response to request {key}")
        if req is not None:
            req["answered"] = True
            if req["method"] == "initialize":
                answer = (msg.get("result") or {}).get("protocolVersion")
                self.legacy_rev = self.known(answer or req["requested"] or self.newest(legacy_only=True))
                req["rev"] = self.legacy_rev
        rev = req["rev"] if req else (self.legacy_rev or self.newest())
        modern = rev >= MODERN_ENVELOPES
        if "error" in msg:
            if msg["id"] is None:
                if not modern:
                    return  # `"id": null` (JSON-RPC's parse-error id) has no schema before 2025-11-25
                # From 2025-11-25 the id may be left out; check the rest.
                msg = {k: v for k, v in msg.items() if k != "id"}
            self.validate(rev, "JSONRPCErrorResponse" if modern else "JSONRPCError", msg, line)
        else:
            self.validate(rev, "JSONRPCResultResponse" if modern else "JSONRPCResponse", msg, line)
            self.result(req, rev, msg["result"], line)

    def result(self, req, rev, result, line):
        """Validates a result as what its request asked for."""
        method = req["method"] if req else ""
        if not isinstance(result, dict):
            return self.validate(rev, "Result", result, line)  # the schema says why
        if rev > CORE_TASKS:
            return self.modern_result(req, rev, result, line)
        if rev == CORE_TASKS and method == "tools/call" and req.get("task") is not None:
            self.saw("tasks created")
            self.validate(rev, "CreateTaskResult", result, line)
            task_id = (result.get("task") or {}).get("taskId")
            if isinstance(task_id, str):
                self.tasks[task_id] = {"method": method, "dialect": "core"}
            return
        if rev == CORE_TASKS and method in ("tasks/get", "tasks/cancel", "tasks/result"):
            task = self.tasks.get(req["task_id"])
            if method == "tasks/result":
                # The result of the request that made the task, tied to it.
                self.validate(rev, RESULT_TYPES.get(task["method"] if task else "", "Result"), result, line)
                related = ((result.get("_meta") or {}).get(RELATED_TASK) or {}).get("taskId")
                if related != req["task_id"]:
                    self.fail("wire-schema", f"tasks/result for {req['task_id']} has related-task "
                                             f"{related!r} in its _meta: {line[:160]}")
                return
            if result.get("taskId") != req["task_id"]:
                self.fail("wire-schema", f"{method} for {req['task_id']} answered with task "
                                         f"{result.get('taskId')!r}: {line[:160]}")
        self.validate(rev, RESULT_TYPES.get(method, "Result"), result, line)

    def modern_result(self, req, rev, result, line):
        """A 2026-07-28 result: by its `resultType`, or as a tasks-extension message."""
        method = req["method"] if req else ""
        kind = result.get("resultType")
        if kind == "input_required":
            self.saw("input_required results")
            if method not in INPUT_REQUIRED_METHODS:
                self.fail("wire-schema", f"{method} answered with input_required: {line[:160]}")
            if not result.get("inputRequests") and not isinstance(result.get("requestState"), str):
                self.fail("wire-schema", f"input_required without inputRequests or requestState: {line[:160]}")
            return self.validate(rev, "InputRequiredResult", result, line)
        if kind == "task":
            # The tasks extension's CreateTaskResult: not in the core schema.
            self.saw("extension tasks created")
            if method != "tools/call" or not req.get("tasks_extension"):
                self.fail("wire-schema", f"resultType \"task\" for a {method or 'unknown'} request that did not "
                                         f"declare the {TASKS_EXTENSION} extension: {line[:160]}")
            self.validate(rev, "Result", result, line)
            self.check_extension_task(result, line, None)
            if isinstance(result.get("taskId"), str):
                self.tasks[result["taskId"]] = {"method": method, "dialect": "extension"}
            return
        if method in ("tasks/get", "tasks/update", "tasks/cancel"):
            # The extension's methods (2026-07-28 has no core tasks).
            self.saw("extension task messages")
            self.validate(rev, "Result", result, line)
            if kind != "complete":
                self.fail("wire-schema", f"{method} answered with resultType {kind!r}, expected \"complete\": {line[:160]}")
            if method == "tasks/get":
                self.check_extension_task(result, line, req["task_id"])
            return
        if kind != "complete":
            self.fail("wire-schema", f"{method or 'a request'} answered with resultType {kind!r}: {line[:160]}")
        self.validate(rev, RESULT_TYPES.get(method, "Result"), result, line)

    def check_extension_task(self, task, line, task_id):
        """The hand checks of a tasks-extension Task (a creation or a tasks/get answer)."""
        def bad(why):
            self.fail("wire-schema", f"tasks extension: {why}: {line[:160]}")

        if not isinstance(task.get("taskId"), str) or not task["taskId"]:
            return bad("taskId is not a non-empty string")
        if task_id is not None and task["taskId"] != task_id:
            bad(f"tasks/get for {task_id} answered with task {task['taskId']}")
        status = task.get("status")
        if status not in TASK_STATUSES:
            return bad(f"status {status!r} is not one of {sorted(TASK_STATUSES)}")
        for key in ("ttlMs", "pollIntervalMs"):
            if key in task and not (isinstance(task[key], int) and task[key] >= 0):
                bad(f"{key} is {task[key]!r}, expected a non-negative integer")
        for key in ("createdAt", "lastUpdatedAt", "statusMessage"):
            if key in task and not isinstance(task[key], str):
                bad(f"{key} is not a string")
        if task_id is None:
            return  # the creation carries no outcome
        rev = self.newest()
        if status == "completed":
            origin = self.tasks.get(task_id, {}).get("method", "tools/call")
            if not isinstance(task.get("result"), dict):
                bad("a completed task has no result")
            else:
                self.validate(rev, RESULT_TYPES.get(origin, "Result"), task["result"], line)
        elif status == "failed":
            error = task.get("error")
            if not (isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str)):
                bad("a failed task has no error with an integer code and a message")
        elif status == "input_required":
            if not task.get("inputRequests"):
                bad("an input_required task lists no inputRequests")
            else:
                self.validate(rev, "InputRequests", task["inputRequests"], line)

    def server_request(self, msg, line):
        """A request of the server's own (elicitation/create before 2026-07-28)."""
        rev = self.legacy_rev or self.newest()
        self.saw(f"{msg['method']} requests")
        if not self.schemas.has(rev, "ServerRequest"):
            return self.fail("wire-schema", f"{rev} has no server-to-client requests: {line[:120]}")
        self.validate(rev, "JSONRPCRequest", msg, line)
        specific = self.schemas.request_type(rev, msg["method"])
        if specific:
            self.validate(rev, specific, msg, line)
        else:
            self.fail("wire-schema", f"{rev} has no request {msg['method']}: {line[:120]}")

    def notification(self, msg, line):
        params = msg.get("params") or {}
        rev = self.legacy_rev or self.newest()
        if msg["method"] == "notifications/progress":
            self.progress_sent += 1
            token = id_key(params.get("progressToken"))
            req = self.requests.get(self.tokens.get(token, ""))
            if req is None:
                self.fail("wire-progress", f"progress for unknown token {token}")
            else:
                rev = req["rev"] or rev
                if req["answered"]:
                    self.fail("wire-progress", f"progress for token {token} after its response")
                if req["cancelled"]:
                    self.fail("wire-answers", f"progress for cancelled request (token {token})")
                last = self.progress.get(token)
                value = params.get("progress")
                if isinstance(value, (int, float)) and last is not None and value <= last:
                    self.fail("wire-progress", f"progress went from {last} to {value} (token {token})")
                self.progress[token] = value
        self.validate(rev, "JSONRPCNotification", msg, line)
        specific = self.schemas.notification_type(rev, msg["method"])
        if specific:
            self.validate(rev, specific, msg, line)
        else:
            self.fail("wire-schema", f"{rev} has no notification {msg['method']}: {line[:120]}")

    def validate(self, rev, name, instance, line):
        if not self.schemas.has(rev, name):
            self.fail("wire-schema", f"{rev} schema has no {name} (for {line[:120]})")
            return
        for problem in self.schemas.problems(rev, name, instance):
            self.fail("wire-schema", f"{rev} {name} rejects {line[:160]}\n      {problem}")


def main():
    if len(sys.argv) != 2:
        print("usage: validate_wire.py LOG_DIR", file=sys.stderr)
        return 2
    logs = sorted(glob.glob(os.path.join(sys.argv[1], "conn-*.jsonl")))
    missing = missing_schemas()
    if missing:
        print(f"FAIL wire-schema: the wire schemas are missing: {', '.join(missing)}")
        return 1
    schemas = Schemas(SCHEMA_DIR)
    connections = [Connection(os.path.basename(p), read_log(p), schemas) for p in logs]
    for c in connections:
        c.run()
    requests = [r for c in connections for r in c.requests.values()]
    revisions = ", ".join(sorted({r["rev"] for r in requests if r["rev"]})) or "none"
    kinds = {}
    for c in connections:
        for kind, n in c.kinds.items():
            kinds[kind] = kinds.get(kind, 0) + n
    summaries = {
        "wire-json": f"{sum(c.lines for c in connections)} lines from {len(logs)} server process(es)",
        "wire-schema": f"{sum(c.counted for c in connections)} messages; revisions {revisions}"
                       + "".join(f"; {n} {kind}" for kind, n in sorted(kinds.items())),
        "wire-answers": f"{sum(r['answered'] for r in requests)} requests answered, "
                        f"{sum(r['cancelled'] for r in requests)} cancelled",
        "wire-progress": f"{sum(c.progress_sent for c in connections)} progress notifications",
    }
    failed = False
    for check, summary in summaries.items():
        problems = [p for c in connections for p in c.failures[check]]
        if not logs:
            print(f"FAIL {check}: no captured conversation in {sys.argv[1]}")
            failed = True
        elif problems:
            failed = True
            print(f"FAIL {check}: {len(problems)} problem(s)")
            for p in problems[:10]:
                print(f"    {p}")
        else:
            print(f"PASS {check} ({summary})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
