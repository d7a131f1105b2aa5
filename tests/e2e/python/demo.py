"""The `make demo` client: the official Python MCP SDK drives an R server
over stdio and prints what it sees."""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters


def show(label, value):
    print(f"  {label}: {value}")


async def main(script: str) -> None:
    params = StdioServerParameters(command="Rscript", args=[script], env=dict(os.environ))
    async with Client(params, mode="auto") as client:
        info = client.server_info
        print(f"Connected to {info.name} {info.version} (protocol {client.protocol_version})")
        if client.instructions:
            show("instructions", client.instructions)
        listed = await client.list_tools()
        print("\nTools:")
        for t in listed.tools:
            props = t.input_schema.get("properties", {})
            required = set(t.input_schema.get("required", []))
            args = ", ".join(
                f"{name}{'' if name in required else '?'}: {spec.get('type', 'any')}"
                for name, spec in props.items()
            )
            print(f"  - {t.name}({args})  {t.description}")

        calls = [
            ("column_summary", {"column": "mpg"}),
            ("fastest_cars", {"n": 2}),
            ("fuel_cost", {"distance_km": 250, "price_per_litre": 1.8, "mpg": 21}),
            ("fuel_cost", {"distance_km": "far", "price_per_litre": 1.8, "mpg": 21}),
        ]
        for name, arguments in calls:
            print(f"\nCall {name}({json.dumps(arguments)})")
            result = await client.call_tool(name, arguments)
            show("isError", result.is_error)
            if result.structured_content is not None:
                show("structured", json.dumps(result.structured_content))
            for block in result.content:
                show(block.type, getattr(block, "text", ""))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
