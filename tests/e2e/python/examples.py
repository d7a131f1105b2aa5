"""Checks every example server with the Python MCP SDK 2.x `Client` (legacy mode).

    python examples.py WIRE_DIR

For each inst/examples/<example>/server.R: starts it as a client would
(`Rscript server.R`, behind capture.py, recording to WIRE_DIR/<example>/),
lists its tools and checks that each has a description and a valid
inputSchema (and outputSchema, if any), calls every tool that
tests/e2e/examples.json gives sample arguments for and checks the call is
not an error, then validates the recorded wire with validate_wire.py.
An example without an entry in examples.json gets only the listing checks.
A server that declares resources has every listed resource read and its
templates listed; one that declares prompts has its prompts listed (each
with a description). Keys of examples.json with a prefix drive the rest:
"read:<uri>" reads a URI (say, of a template), "prompt:<name>" gets a
prompt with those arguments, "complete:<prompt>:<argument>" and
"complete-template:<uriTemplate>#<variable>" ask for completions of
{"value": ...} and check that {"expect": ...} is among them.
Prints PASS/FAIL lines named <example>/<check>.
"""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import anyio
import jsonschema
from mcp import Client, StdioServerParameters, types

from checks import E2E, Report, describe, text_of, wire

ROOT = E2E.parents[1]
EXAMPLES = Path(os.environ.get("E2E_EXAMPLES") or ROOT / "inst" / "examples")  # a folder of <example>/server.R
SAMPLES = json.loads((E2E / "examples.json").read_text(encoding="utf-8"))
SAMPLES.pop("_comment", None)
# logging/setLevel is deprecated from 2026-07-28 only; these sessions speak 2025-11-25.
warnings.filterwarnings("ignore", message=".*logging capability is deprecated.*")
# A schema without "$schema" is JSON Schema 2020-12 (MCP 2025-11-25).
DEFAULT_DIALECT = jsonschema.Draft202012Validator


def schema_problems(where, schema, root_object=True):
    """A tool's input or output schema: a valid JSON Schema with an object root."""
    if not isinstance(schema, dict):
        return [f"{where} is {json.dumps(schema)}, expected an object"]
    problems = []
    try:
        jsonschema.validators.validator_for(schema, default=DEFAULT_DIALECT).check_schema(schema)
    except jsonschema.SchemaError as e:
        problems.append(f"{where} is not a valid JSON Schema: {e.message[:200]}")
    if root_object and schema.get("type") != "object":
        problems.append(f"{where} has type {schema.get('type')!r}, expected 'object'")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        problems.append(f"{where}.properties is not an object")
    else:
        unknown = [r for r in schema.get("required", []) if r not in properties]
        if unknown:
            problems.append(f"{where}.required names {unknown}, which are not properties")
    return problems


def listing_problems(tools):
    if not tools:
        return ["the server lists no tools"]
    problems = []
    for tool in tools:
        name = tool.get("name")
        description = tool.get("description")
        if not isinstance(description, str) or not description.strip():
            problems.append(f"{name} has no description")
        problems += schema_problems(f"{name}.inputSchema", tool.get("inputSchema"))
        if "outputSchema" in tool:
            problems += schema_problems(f"{name}.outputSchema", tool["outputSchema"])
    return problems


def call_problems(tool, arguments, result):
    problems = []
    try:
        jsonschema.validators.validator_for(tool["inputSchema"], default=DEFAULT_DIALECT)(
            tool["inputSchema"]).validate(arguments)
    except jsonschema.ValidationError as e:
        problems.append(f"examples.json's arguments do not fit the inputSchema: {e.message[:200]}")
    except jsonschema.SchemaError:
        pass  # reported by the listing check
    if result.get("isError"):
        return problems + [f"isError is true: {text_of(result)[:300]!r}"]
    if not result.get("content") and "structuredContent" not in result:
        problems.append("the result has neither content nor structuredContent")
    if "outputSchema" in tool:
        if "structuredContent" not in result:
            problems.append("the tool has an outputSchema but the result has no structuredContent")
        else:
            validator = jsonschema.validators.validator_for(tool["outputSchema"], default=DEFAULT_DIALECT)
            errors = list(validator(tool["outputSchema"]).iter_errors(result["structuredContent"]))
            problems += [f"structuredContent does not fit the outputSchema: {e.message[:200]}" for e in errors[:3]]
    return problems


async def ignore_progress(progress, total, message):
    pass


async def ignore_log(params):
    pass


def sample_answer(schema):
    """An accepting answer to an elicitation, filled from its schema."""
    samples = {"string": "example", "number": 1.5, "integer": 2, "boolean": True}
    content = {}
    for name, prop in schema.get("properties", {}).items():
        content[name] = prop["enum"][0] if "enum" in prop else samples.get(prop.get("type"), "example")
    return content


async def answer_questions(context, request):
    return types.ElicitResult(action="accept", content=sample_answer(wire(request)["requestedSchema"]))


def is_tool_sample(key):
    return not key.startswith(("read:", "prompt:", "complete:", "complete-template:"))


def contents_problems(result):
    contents = result.get("contents") or []
    if not contents:
        return ["the read returned no contents"]
    return [f"contents[{i}] has neither text nor blob" for i, c in enumerate(contents)
            if "text" not in c and "blob" not in c]


def prompt_problems(result):
    messages = result.get("messages") or []
    if not messages:
        return ["the prompt returned no messages"]
    return [f"messages[{i}] has role {m.get('role')!r}" for i, m in enumerate(messages)
            if m.get("role") not in ("user", "assistant")]


async def check_catalog(report, name, client, samples, served=None):
    """Resources, templates, prompts and completions, as declared (or, where
    the session learnt no capabilities, as `served` says)."""
    caps = client.server_capabilities
    resources, prompts = served or (caps.resources is not None, caps.prompts is not None)
    if resources:
        listed = wire(await client.list_resources()).get("resources", [])
        # MCP Apps' documents are served but left out of resources/list (the
        # extension allows it: hosts find them through the tools), so a
        # server of apps alone lists none; its samples read them instead.
        apps_only = any(key.startswith("read:ui://") for key in samples)
        await report.check(f"{name}/resources-list",
                           lambda: [] if listed or apps_only else ["no resources listed"])
        for resource in listed:
            async def read(uri=resource["uri"]):
                return contents_problems(wire(await client.read_resource(uri)))

            await report.check(f"{name}/read-{resource['uri']}", read)
        templates = wire(await client.list_resource_templates()).get("resourceTemplates", [])
        await report.check(f"{name}/templates-list", lambda: [
            f"{t.get('uriTemplate')} has no name" for t in templates if not t.get("name")])
    if prompts:
        prompts = wire(await client.list_prompts()).get("prompts", [])
        await report.check(f"{name}/prompts-list", lambda: ["no prompts listed"] if not prompts else [
            f"{p['name']} has no description" for p in prompts if not p.get("description")])
    for key, sample in samples.items():
        kind, _, target = key.partition(":")
        if kind == "read":
            async def read_sample(uri=target):
                return contents_problems(wire(await client.read_resource(uri)))

            await report.check(f"{name}/read-{target}", read_sample)
        elif kind == "prompt":
            async def get(prompt=target, arguments=sample):
                return prompt_problems(wire(await client.get_prompt(prompt, arguments)))

            await report.check(f"{name}/prompt-{target}", get)
        elif kind in ("complete", "complete-template"):
            if kind == "complete":
                owner, _, argument = target.partition(":")
                ref = types.PromptReference(type="ref/prompt", name=owner)
            else:
                owner, _, argument = target.rpartition("#")
                ref = types.ResourceTemplateReference(type="ref/resource", uri=owner)

            async def complete(ref=ref, argument=argument, sample=sample):
                result = wire(await client.complete(ref, {"name": argument, "value": sample["value"]}))
                values = result.get("completion", {}).get("values", [])
                return [] if sample["expect"] in values else [f"{sample['expect']!r} not in {values}"]

            await report.check(f"{name}/{kind}-{owner}-{argument}", complete)


async def check_catalog_modern(report, name, params, samples, served):
    """Resources, prompts and completions again, in a 2026-07-28 session
    (which learns no capabilities: `served` says what the legacy one did)."""
    async with Client(params, mode="2026-07-28", read_timeout_seconds=60, logging_callback=ignore_log,
                      elicitation_callback=answer_questions) as client:
        await check_catalog(report, f"{name}/2026-07-28", client, samples, served)


async def check_example(report, name, server, wire_dir):
    rscript = os.environ.get("E2E_RSCRIPT", "Rscript")
    env = {k: os.environ[k] for k in ("R_LIBS", "MCPSERVER_TRACE") if k in os.environ}
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(E2E / "capture.py"), str(wire_dir), "--", rscript, str(server)],
        env=env,
    )
    samples = SAMPLES.get(name, {})
    connected = False
    served = (False, False)
    try:
        with anyio.fail_after(90):
            async with Client(params, mode="legacy", read_timeout_seconds=60, logging_callback=ignore_log,
                              elicitation_callback=answer_questions) as client:
                connected = True
                await report.check(f"{name}/connect", lambda: [] if client.server_info and client.server_info.name
                                   else ["the server sent no serverInfo name"])
                if client.server_capabilities.logging is not None:
                    # So that tools' log messages travel, and are validated, too.
                    await client.set_logging_level("debug")
                tools = {t["name"]: t for t in wire(await client.list_tools()).get("tools", [])}
                await report.check(f"{name}/tools-list", listing_problems, list(tools.values()))
                for tool in [t for t in tools if t not in samples]:
                    print(f"NOTE {name}/{tool}: no sample arguments in examples.json, not called", flush=True)
                await check_catalog(report, name, client, samples)
                for tool, arguments in [(k, v) for k, v in samples.items() if is_tool_sample(k)]:
                    async def call(tool=tool, arguments=arguments):
                        if tool not in tools:
                            return [f"examples.json names {tool}, which the server does not list"]
                        # With a progress token, so that progress reports travel, and are validated, too.
                        result = await client.call_tool(tool, arguments, progress_callback=ignore_progress)
                        return call_problems(tools[tool], arguments, wire(result))

                    await report.check(f"{name}/call-{tool}", call)
                caps = client.server_capabilities
                served = (caps.resources is not None, caps.prompts is not None)
            if any(served):
                with anyio.fail_after(90):
                    await check_catalog_modern(report, name, params, samples, served)
    except Exception as e:
        report.fail(f"{name}/{'session' if connected else 'connect'}", describe(e))
    validated = subprocess.run(
        [sys.executable, str(E2E / "validate_wire.py"), str(wire_dir)],
        capture_output=True, text=True, timeout=60,
    )
    for line in validated.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        print(f"{kind} {name}/{rest}" if kind in ("PASS", "FAIL", "SKIP") else line, flush=True)
        report.failed += kind == "FAIL"
    if validated.returncode != 0 and "FAIL" not in validated.stdout:
        report.fail(f"{name}/wire-validation", f"validate_wire.py exited with {validated.returncode}: "
                                               f"{validated.stderr.strip()[-300:]}")


async def main(wire_root):
    report = Report()
    servers = sorted(EXAMPLES.glob("*/server.R"))
    await report.check("examples-found", lambda: [] if servers else [f"no {EXAMPLES}/*/server.R"])
    names = {s.parent.name for s in servers}
    await report.check("examples-table", lambda: [
        f"examples.json has sample arguments for {n}, which is not an example" for n in SAMPLES if n not in names])
    for server in servers:
        await check_example(report, server.parent.name, server, Path(wire_root) / server.parent.name)
    return 1 if report.failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: examples.py WIRE_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(anyio.run(main, sys.argv[1]))
