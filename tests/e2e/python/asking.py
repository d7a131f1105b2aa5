"""Asking the client with the Python MCP SDK 2.x `Client`: forms, sampling, roots.

    python asking.py WIRE_DIR

Starts tests/testthat/fixtures/asking.R behind capture.py twice, once in
`legacy` mode (2025-11-25: the server sends `elicitation/create`,
`sampling/createMessage` and `roots/list` while the tool waits) and once
pinned to 2026-07-28 (the server answers `input_required` and the SDK
retries with the answers). The client's elicitation, sampling and roots
callbacks answer; each check compares the tool's text, which says what R
received, and what the callbacks were asked. Then validates the recorded
wire. Prints PASS/FAIL lines as run.sh counts them.
"""

import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters, types

from checks import E2E, Report, describe, wire

FIXTURE = E2E.parents[0] / "testthat" / "fixtures" / "asking.R"
EXAMPLE = E2E.parents[1] / "inst" / "examples" / "asking" / "server.R"

FORM_ANSWERS = {
    "Check your details": {"name": "Ada", "age": 36, "score": 99.5, "status": "pending", "verified": False},
    "Choose": {"untitled": "b", "titled": "v1", "legacy": "y", "several": ["q", "r"], "several_titled": ["s2"]},
    "What is your name?": {"name": "Ada"},
    "Your pizza": {"size": "l", "toppings": ["olives", "chili"], "name": "Ada", "extra_cheese": True},
}

# What the example's tools answer, given the callbacks' answers.
EXAMPLE_CALLS = {
    "order_pizza": "Order for Ada: a large pizza with olives, chili and extra cheese.",
    "describe_dataset": "Hello",
    "workspace_files": "0 R and data files in /test/root: ",
    "welcome": "Hello Welcome, Ada!",
}


def captured_lines(wire_dir):
    """Every message the server wrote so far, parsed."""
    import json
    out = []
    for path in sorted(Path(wire_dir).glob("conn-*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(raw)
            if entry["dir"] == "s2c":
                try:
                    out.append(json.loads(entry["line"]))
                except ValueError:
                    pass
    return out


def server_params(wire_dir, script):
    rscript = os.environ.get("E2E_RSCRIPT", "Rscript")
    env = {k: os.environ[k] for k in ("R_LIBS", "MCPSERVER_TRACE") if k in os.environ}
    return StdioServerParameters(
        command=sys.executable,
        args=[str(E2E / "capture.py"), str(wire_dir), "--", rscript, str(script)],
        env=env,
    )


def callbacks(asked):
    """The client's elicitation, sampling and roots callbacks, recording what they were asked."""

    async def on_elicit(context, request):
        request = wire(request)
        asked["forms"].append(request)
        return types.ElicitResult(action="accept", content=FORM_ANSWERS[request["message"]])

    async def on_sample(context, request):
        request = wire(request)
        asked["samples"].append(request)
        text = "The capital of France is Paris." if "capital" in str(request) else "Hello"
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=text),
            model="test-model", stop_reason="endTurn",
        )

    async def on_roots(context):
        asked["roots"] += 1
        return types.ListRootsResult(roots=[types.Root(uri="file:///test/root", name="Test Root")])

    return {"elicitation_callback": on_elicit, "sampling_callback": on_sample, "list_roots_callback": on_roots}


async def example_session(report, mode, wire_dir):
    """inst/examples/asking/server.R: every tool, answered by the callbacks."""
    asked = {"forms": [], "samples": [], "roots": 0}
    with anyio.fail_after(120):
        async with Client(server_params(wire_dir, EXAMPLE), mode=mode, read_timeout_seconds=30,
                          **callbacks(asked)) as client:
            for tool, expected in EXAMPLE_CALLS.items():
                async def check(tool=tool, expected=expected):
                    result = wire(await client.call_tool(tool, {}))
                    text = result["content"][0].get("text")
                    return [] if not result.get("isError") and text == expected else [f"got {result}"]
                await report.check(f"asking-example-{mode}/{tool}", check)


async def session(report, mode, wire_dir):
    asked = {"forms": [], "samples": [], "roots": 0}
    name = f"asking-{mode}"
    with anyio.fail_after(120):
        async with Client(server_params(wire_dir, FIXTURE), mode=mode, read_timeout_seconds=30,
                          **callbacks(asked)) as client:

            async def text_of(tool):
                result = wire(await client.call_tool(tool, {}))
                if result.get("isError"):
                    raise AssertionError(f"{tool} failed: {result}")
                return result["content"][0]["text"]

            async def defaults():
                text = await text_of("form_defaults")
                fields = asked["forms"][-1]["requestedSchema"]["properties"]
                problems = []
                want = {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}
                got = {k: fields[k].get("default") for k in want}
                if got != want:
                    problems.append(f"defaults {got}, expected {want}")
                expected = ("name=Ada<character> age=36<integer> score=99.5<numeric> "
                            "status=pending<character> verified=FALSE<logical>")
                if text != expected:
                    problems.append(f"R received {text!r}, expected {expected!r}")
                return problems

            async def choices():
                text = await text_of("form_choices")
                fields = asked["forms"][-1]["requestedSchema"]["properties"]
                problems = []
                if [o["title"] for o in fields["titled"].get("oneOf", [])] != ["First", "Second"]:
                    problems.append(f"titled choice {fields['titled']}")
                if fields["several_titled"].get("items", {}).get("anyOf") is None:
                    problems.append(f"titled several choices {fields['several_titled']}")
                if fields["legacy"].get("enumNames") != ["Ex", "Why"]:
                    problems.append(f"legacy choice {fields['legacy']}")
                expected = ("untitled=b<character> titled=v1<character> legacy=y<character> "
                            "several=q+r<character> several_titled=s2<character>")
                if text != expected:
                    problems.append(f"R received {text!r}, expected {expected!r}")
                return problems

            async def sampling():
                text = await text_of("capital")
                sent = asked["samples"][-1]
                problems = []
                if sent.get("maxTokens") != 100 or sent.get("systemPrompt") != "Be brief":
                    problems.append(f"the request was {sent}")
                expected = "LLM response: The capital of France is Paris. (test-model, endTurn)"
                if text != expected:
                    problems.append(f"R received {text!r}, expected {expected!r}")
                return problems

            async def roots():
                text = await text_of("roots")
                expected = "1 roots: file:///test/root Test Root"
                return [] if text == expected else [f"R received {text!r}, expected {expected!r}"]

            async def multiple():
                before = len(captured_lines(wire_dir))
                text = await text_of("multiple")
                problems = []
                if text != "Hello Ada - roots: 1":
                    problems.append(f"R received {text!r}")
                if mode == "2026-07-28":
                    rounds = [m["result"] for m in captured_lines(wire_dir)[before:]
                              if m.get("result", {}).get("resultType") == "input_required"]
                    keys = [sorted(r.get("inputRequests", {})) for r in rounds]
                    if keys != [["client_roots", "greeting", "user_name"]]:
                        problems.append(f"input_required rounds asked {keys}, expected one round of three keys")
                return problems

            await report.check(f"{name}/form-defaults", defaults)
            await report.check(f"{name}/form-choices", choices)
            await report.check(f"{name}/sampling", sampling)
            await report.check(f"{name}/roots", roots)
            await report.check(f"{name}/several-at-once", multiple)


async def main(wire_dir):
    report = Report()
    for mode in ("legacy", "2026-07-28"):
        try:
            await session(report, mode, wire_dir)
        except Exception as e:
            report.fail(f"asking-{mode}/session", describe(e))
        try:
            await example_session(report, mode, wire_dir)
        except Exception as e:
            report.fail(f"asking-example-{mode}/session", describe(e))
    validated = subprocess.run(
        [sys.executable, str(E2E / "validate_wire.py"), str(wire_dir)],
        capture_output=True, text=True, timeout=60,
    )
    for line in validated.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        print(f"{kind} asking/{rest}" if kind in ("PASS", "FAIL", "SKIP") else line, flush=True)
        report.failed += kind == "FAIL"
    if validated.returncode != 0 and not report.failed:
        report.fail("asking/wire-validation", f"validate_wire.py exited with {validated.returncode}")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, Path(sys.argv[1])))
