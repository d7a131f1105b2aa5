"""MCP Apps with the official Python SDK 2.x `Client`.

    python apps.py legacy|2026-07-28

The example server inst/examples/apps/server.R (E2E_SERVER), started as a
client starts it (through capture.py), seen by a host that declares the
io.modelcontextprotocol/ui extension (the SDK's `advertise()`) and by a
client that does not, on the revision given. The extension's fields are
checked against its JSON Schema (tests/testthat/schemas/ext-apps, which
must be the very file of the npm package the TypeScript tests install):
tools' `_meta.ui` (McpUiToolMeta), the client's settings
(McpUiClientCapabilities) and the app document's `_meta.ui`
(McpUiResourceMeta). Prints PASS/FAIL lines.
"""

import json
import os
import re
import sys
from pathlib import Path

import anyio
import jsonschema
from mcp import Client, StdioServerParameters
from mcp.client.extension import advertise

from checks import E2E, LEGACY, MODERN, Report, describe, server_command, wire

ROOT = E2E.parents[1]
EXTENSION = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
SETTINGS = {"mimeTypes": [MIME]}
SCHEMA_FILE = ROOT / "tests" / "testthat" / "schemas" / "ext-apps" / "schema.json"
SCHEMA = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
APPS = {"ozone_chart": "ui://airquality/ozone.html", "dataset_table": "ui://datasets/table.html",
        "table_page": "ui://datasets/table.html"}


def ext_problems(name, value):
    """`value` checked as the extension's definition `name`."""
    # Each definition is a schema of its own (with its own `$schema` and `$defs`).
    validator = jsonschema.Draft202012Validator(SCHEMA["$defs"][name])
    return [f"{name} rejects {json.dumps(value)[:200]}: {e.message}" for e in validator.iter_errors(value)]


def same_schema_as_npm():
    """The vendored schema is the npm package's, byte for byte."""
    clients = os.environ.get("E2E_NODE_CLIENTS") or str(ROOT / ".cache" / "clients" / "node")
    npm = Path(clients) / "node_modules" / "@modelcontextprotocol" / "ext-apps" / "dist" / "src" / "generated" / "schema.json"
    if not npm.exists():
        return [f"{npm} is missing (tools/node-clients.sh installs it)"]
    return [] if npm.read_bytes() == SCHEMA_FILE.read_bytes() else [f"{SCHEMA_FILE} differs from {npm}"]


async def capabilities(client, mode):
    if mode == MODERN:
        return (await client.session.send_discover(MODERN)).get("capabilities", {})
    return wire(client.server_capabilities)


async def declared(client, mode):
    caps = await capabilities(client, mode)
    settings = caps.get("extensions", {}).get(EXTENSION)
    return [] if settings == {} else [f"capabilities.extensions is {caps.get('extensions')!r}"]


async def tools_with_ui(client):
    tools = {t["name"]: t for t in wire(await client.list_tools(cache_mode="bypass"))["tools"]}
    problems = []
    for name, uri in APPS.items():
        tool = tools.get(name)
        if tool is None:
            problems.append(f"{name} is not listed")
            continue
        ui = tool.get("_meta", {}).get("ui")
        if not ui or ui.get("resourceUri") != uri:
            problems.append(f"{name} has _meta {tool.get('_meta')!r}")
            continue
        problems += ext_problems("McpUiToolMeta", ui)
    if tools.get("table_page", {}).get("_meta", {}).get("ui", {}).get("visibility") != ["app"]:
        problems.append("table_page is not for the app only")
    return problems


async def plain_tools(client):
    tools = wire(await client.list_tools(cache_mode="bypass"))["tools"]
    names = sorted(t["name"] for t in tools)
    problems = [] if names == ["dataset_table", "ozone_chart"] else [f"tools are {names}"]
    for tool in tools:
        meta = tool.get("_meta", {})
        if "ui" in meta or "ui/resourceUri" in meta:
            problems.append(f"{tool['name']} has _meta {meta!r}")
    return problems


async def app_documents(client):
    problems = []
    for uri in sorted(set(APPS.values())):
        contents = wire(await client.read_resource(uri))["contents"]
        if len(contents) != 1:
            problems.append(f"{uri} has {len(contents)} contents")
            continue
        content = contents[0]
        if content.get("mimeType") != MIME or not content.get("text", "").startswith("<!DOCTYPE html>"):
            problems.append(f"{uri} is {content.get('mimeType')!r}: {content.get('text', '')[:60]!r}")
        ui = content.get("_meta", {}).get("ui")
        # Scripts from elsewhere only from origins the app's CSP declares
        # (plotly.js's strict build from plotly's CDN: R/app.R says why).
        allowed = set((ui or {}).get("csp", {}).get("resourceDomains", []))
        for src in re.findall(r'<script src="([^"]*)"', content.get("text", "")):
            origin = re.match(r"^[a-z][a-z0-9+.-]*://[^/]+", src)
            if not origin or origin.group(0) not in allowed:
                problems.append(f"{uri} loads {src}, from no origin its CSP declares ({sorted(allowed)})")
        if ui is not None:
            problems += ext_problems("McpUiResourceMeta", ui)
    listed = [r["uri"] for r in wire(await client.list_resources())["resources"]]
    if any(u.startswith("ui://") for u in listed):
        problems.append(f"resources/list shows the apps: {listed}")
    return problems


async def chart_call(client, shown):
    result = wire(await client.call_tool("ozone_chart", {"month": 7}))
    problems = [] if not result.get("isError") else [f"an error: {result}"]
    days = json.loads(result["content"][0]["text"])
    if len(days) != 31 or set(days[0]) != {"Day", "Ozone", "Temp"}:
        problems.append(f"the data are {str(days)[:100]}")
    view = result.get("_meta", {}).get("mcpserver/view")
    if shown and not (view and "plotly html-widget" in view["html"] and view["dependencies"] == []):
        problems.append(f"the view is {str(view)[:200]}")
    if not shown and view is not None:
        problems.append("a client without the extension got the view")
    return problems


async def session(report, mode, shown):
    command, args, env = server_command()
    params = StdioServerParameters(command=command, args=args, env=env)
    extensions = [advertise(EXTENSION, SETTINGS)] if shown else []
    suffix = "" if shown else "-without-extension"
    try:
        async with Client(params, mode=mode, read_timeout_seconds=60, extensions=extensions) as client:
            if shown:
                await report.check("apps-capabilities", declared, client, mode)
                await report.check("apps-tools-list", tools_with_ui, client)
                await report.check("apps-resources-read", app_documents, client)
            else:
                await report.check("apps-tools-list" + suffix, plain_tools, client)
            await report.check("apps-call" + suffix, chart_call, client, shown)
    except Exception as e:
        report.fail("apps-session" + suffix, describe(e))


async def main(mode):
    report = Report()
    await report.check("apps-client-settings", ext_problems, "McpUiClientCapabilities", SETTINGS)
    await report.check("apps-schema-is-the-npm-package", same_schema_as_npm)
    await session(report, mode, shown=True)
    await session(report, mode, shown=False)
    return 1 if report.failed else 0


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "legacy"
    if mode not in ("legacy", MODERN):
        sys.exit(f"usage: apps.py legacy|{MODERN}")
    sys.exit(anyio.run(main, mode))
