"""The official Python MCP SDK (2.x) client through `mcp_bridge()` against
live R sessions, for test-session.R.

    python session_sdk_client.py <mode> <pid of the other session> Rscript

Started in the folder of the first session, with MCPSERVER_SESSION_DIR set.
Prints one JSON object: what the client saw.
"""

import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters, types


async def main(mode, other_pid, rscript):
    seen = {"notifications": []}

    async def on_message(message):
        if isinstance(message, types.ServerNotification):
            seen["notifications"].append(message.root.method if hasattr(message, "root") else message.method)

    # The SDK passes only a few variables on unless told: the bridge needs
    # the library and the registry of the test.
    params = StdioServerParameters(command=rscript, args=["-e", "mcpserver::mcp_bridge()"], env=dict(os.environ))
    async with Client(params, mode=mode, read_timeout_seconds=30, message_handler=on_message) as client:
        seen["protocol"] = client.protocol_version
        seen["instructions"] = client.instructions or ""
        seen["tools_before"] = sorted(t.name for t in (await client.list_tools()).tools)

        def text(result):
            return "\n".join(b.text for b in result.content if getattr(b, "type", "") == "text")

        seen["who_before"] = text(await client.call_tool("describe_object", {"name": "who"}))
        switched = await client.call_tool("select_r_session", {"pid": other_pid})
        seen["switched"] = text(switched)
        seen["switched_error"] = bool(switched.is_error)
        await anyio.sleep(0.5)
        seen["who_after"] = text(await client.call_tool("describe_object", {"name": "who"}))
        seen["tools_after"] = sorted(t.name for t in (await client.list_tools()).tools)
    print(json.dumps(seen))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], int(sys.argv[2]), sys.argv[3])
