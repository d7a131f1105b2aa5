"""Checks every message the server wrote during an end-to-end run.

    python validate_wire.py LOG_DIR

LOG_DIR holds the conn-*.jsonl files of capture.py, one per server process.
Prints one line per check, "PASS name", "FAIL name: why" or "SKIP name: why",
and exits non-zero if a check failed:

- wire-json: every line the server wrote is one UTF-8 JSON-RPC object
  (anything else, such as stray printing, breaks real clients);
- wire-schema: every message validates against the official schema.json of
  the revision in use for it (skipped, never passed, without the schemas);
- wire-answers: every request gets exactly one response, except a
  cancelled request, which gets nothing after its cancellation;
- wire-progress: progress notifications carry the token of a request still
  in flight, increase, and come before that request's response.

The revision of a response is the one its request used: the
`io.modelcontextprotocol/protocolVersion` in a 2026-07-28 request's `_meta`,
otherwise the version the connection's `initialize` negotiated. Schemas
come from $MCP_SCHEMA_DIR or ../shared/mcp-schema next to the project root.
Needs the jsonschema package (the mcp 2.x environment has it).
"""

import glob
import json
import os
import sys
from pathlib import Path

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
MODERN_ENVELOPES = "2025-11-25"  # JSONRPCResultResponse / JSONRPCErrorResponse from here on

# The result each request method gets; anything else is checked as Result.
RESULT_TYPES = {
    "initialize": "InitializeResult",
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
}


def schema_dir():
    env = os.environ.get("MCP_SCHEMA_DIR")
    if env and os.path.isdir(env):
        return Path(env)
    root = Path(__file__).resolve().parents[2]  # tests/e2e -> project root
    candidate = root.parent / "shared" / "mcp-schema"
    return candidate if candidate.is_dir() else None


class Schemas:
    """Validators for the definitions of each revision's schema.json."""

    def __init__(self, folder):
        import jsonschema

        self.jsonschema = jsonschema
        self.folder = folder
        self.revisions = sorted(p.parent.name for p in folder.glob("*/schema.json"))
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
        for name, spec in self.defs(rev).items():
            const = spec.get("properties", {}).get("method", {}).get("const")
            if const == method and name.endswith("Notification"):
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
        self.failures = {"wire-json": [], "wire-schema": [], "wire-answers": [], "wire-progress": []}

    def fail(self, check, message):
        self.failures[check].append(f"{self.name}: {message}")

    def newest(self, legacy_only=False):
        revs = self.schemas.revisions if self.schemas else [MODERN_ENVELOPES]
        return [r for r in revs if not legacy_only or r <= MODERN_ENVELOPES][-1]

    def known(self, rev):
        return rev if self.schemas is None or rev in self.schemas.revisions else self.newest()

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
                self.requests[id_key(m["id"])] = {
                    "method": m["method"], "rev": rev, "answered": False, "cancelled": False,
                    "requested": params.get("protocolVersion"),
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
            self.validate(self.legacy_rev or self.newest(), "JSONRPCRequest", msg, line)
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
            result_type = RESULT_TYPES.get(req["method"] if req else "", "Result")
            self.validate(rev, result_type, msg["result"], line)

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
        if self.schemas:
            specific = self.schemas.notification_type(rev, msg["method"])
            if specific:
                self.validate(rev, specific, msg, line)
            else:
                self.fail("wire-schema", f"{rev} has no notification {msg['method']}: {line[:120]}")

    def validate(self, rev, name, instance, line):
        if self.schemas is None:
            return
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
    folder = schema_dir()
    schemas = Schemas(folder) if folder else None
    connections = [Connection(os.path.basename(p), read_log(p), schemas) for p in logs]
    for c in connections:
        c.run()
    requests = [r for c in connections for r in c.requests.values()]
    revisions = ", ".join(sorted({r["rev"] for r in requests if r["rev"]})) or "none"
    summaries = {
        "wire-json": f"{sum(c.lines for c in connections)} lines from {len(logs)} server process(es)",
        "wire-schema": f"{sum(c.counted for c in connections)} messages; revisions {revisions}",
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
        elif check == "wire-schema" and schemas is None:
            print(f"SKIP {check}: MCP schemas not found (set MCP_SCHEMA_DIR or add ../shared/mcp-schema)")
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
