"""The benchmark's Python peer: the official SDK's high-level MCPServer
(FastMCP before mcp 2.x) over stdio, serving the same three tools. With
`--http PORT` it serves the SDK's Streamable HTTP app on 127.0.0.1:PORT/mcp
instead (sessions, JSON answers), run by uvicorn as the SDK's own
`run("streamable-http")` does, but without uvicorn's per-request access log
(bench/driver/http_bench.py).

Tools are written the way the SDK's documentation writes them: plain `def`
functions with type hints. MCPServer runs a sync tool on a worker thread
(anyio.to_thread), so the event loop keeps answering while `slow` sleeps.
"""

import json
import math
import sys
import time

# pydantic needs typing_extensions' TypedDict on Python < 3.12.
from typing_extensions import TypedDict

from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent

server = MCPServer("bench-python-sdk")


@server.tool(description="Add two numbers", structured_output=False)
def add(x: float, y: float) -> float:
    return x + y


class Row(TypedDict):
    id: int
    x1: float
    x2: float
    x3: float
    x4: float
    x5: float
    x6: float
    x7: float
    x8: float
    label: str


# Same values as the R peers; built on the first call and kept, so start-up
# does not pay for it and the timed calls measure serialisation only.
_table: list[Row] = []


def _make_table(n: int = 100_000) -> list[Row]:
    return [
        {
            "id": i, "x1": i / 3, "x2": i / 7, "x3": math.sqrt(i), "x4": i * 0.001,
            "x5": (i % 97) / 97, "x6": i * 1.5, "x7": 1 / i, "x8": math.log(i),
            "label": f"row-{i}",
        }
        for i in range(1, n + 1)
    ]


# The list return type gives an output schema; the SDK wraps the list as
# {"result": [...]} in structuredContent and adds a JSON text copy.
@server.tool(description="A 100,000-row table")
def big_table() -> list[Row]:
    if not _table:
        _table.extend(_make_table())
    return _table


# The same table without an output schema: a CallToolResult returned as
# it is, its structured content unchecked, with a compact JSON text copy
# (as the other peers send).
@server.tool(description="The same table, no output schema")
def big_table_open() -> CallToolResult:
    if not _table:
        _table.extend(_make_table())
    out = {"result": _table}
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(out, separators=(",", ":")))],
                          structured_content=out)


class Point(TypedDict):
    x: float


# Big arguments, each answered with the count it was sent.
@server.tool(description="Count numbers", structured_output=False)
def count_numbers(values: list[float]) -> int:
    return len(values)


@server.tool(description="Count strings", structured_output=False)
def count_strings(values: list[str]) -> int:
    return len(values)


@server.tool(description="Count objects", structured_output=False)
def count_objects(values: list[Point]) -> int:
    return len(values)


# Blocking, like the R tool; the SDK moves it off the event loop.
@server.tool(description="Sleep for a number of seconds", structured_output=False)
def slow(seconds: float) -> str:
    time.sleep(seconds)
    return "done"


def serve_http(port: int) -> None:
    import uvicorn

    # json_response: plain JSON answers, as mcpserver and the TypeScript
    # peer give for a quick call. More sessions than the default: the bench
    # holds 100 clients and opens a few hundred idle sessions.
    app = server.streamable_http_app(json_response=True, max_sessions=1000)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        serve_http(int(sys.argv[2]))
    else:
        server.run("stdio")
