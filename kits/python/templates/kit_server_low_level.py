"""The SDK's low-level `Server` (mcp 1.0.0 - 1.1.x, before FastMCP was added in 1.2.0): tools
listed and called through decorated handlers, served with `mcp.server.stdio.stdio_server`."""

import anyio
import mcp.types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

NO_ARGS = {"type": "object", "properties": {}}


def run(name: str, slow: bool = False, notify: bool = False) -> None:
    """Serves `ping` (and `slow`, 3 s) on stdio; returns when the session ends. `notify`: with
    the notifier's ticker (kit_notify)."""
    server = Server(name)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        tools = [types.Tool(name="ping", description="Answers pong", inputSchema=NO_ARGS)]
        if slow:
            tools.append(types.Tool(name="slow", description="Answers done after 3 s", inputSchema=NO_ARGS))
        return tools

    @server.call_tool()
    async def call_tool(tool: str, arguments: dict) -> list[types.TextContent]:
        if tool == "ping":
            return [types.TextContent(type="text", text="pong")]
        if slow and tool == "slow":
            await anyio.sleep(3)
            return [types.TextContent(type="text", text="done")]
        raise ValueError(f"unknown tool {tool}")

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    if notify:
        import kit_notify

        anyio.run(kit_notify.serve, server)
        return
    anyio.run(main)
