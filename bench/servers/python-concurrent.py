"""The Python peer of bench/workers.R: the official SDK's MCPServer over
stdio with an async tool that sleeps 1 s, as that SDK's documentation
writes a tool that waits. The event loop serves concurrent calls of it at
once, so 8 calls sent together are answered after about 1 s: the mark a
server with concurrent R workers is measured against.
"""

import anyio

from mcp.server import MCPServer

server = MCPServer("bench-python-concurrent")


@server.tool(name="sleep_worker", description="Sleep 1 s", structured_output=False)
async def sleep_worker() -> str:
    await anyio.sleep(1)
    return "slept"


@server.tool(name="noop_worker", description="Nothing", structured_output=False)
async def noop_worker() -> str:
    return "ok"


if __name__ == "__main__":
    server.run("stdio")
