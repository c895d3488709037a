"""`mcp.server.mcpserver.MCPServer` (mcp 2.x, FastMCP's successor in the SDK): decorated tools,
`run(transport="stdio")`."""

import anyio
from mcp.server.mcpserver import MCPServer


def run(name: str, slow: bool = False, notify: bool = False) -> None:
    """Serves `ping` (and `slow`, 3 s) on stdio; returns when the session ends. `notify`: with
    the notifier's ticker (kit_notify), through the same low-level server MCPServer runs."""
    mcp = MCPServer(name)

    @mcp.tool()
    def ping() -> str:
        """Answers pong."""
        return "pong"

    if slow:

        @mcp.tool()
        async def slow() -> str:
            """Answers done after 3 s."""
            await anyio.sleep(3)
            return "done"

    if notify:
        import kit_notify

        anyio.run(kit_notify.serve, mcp._lowlevel_server)
        return
    mcp.run(transport="stdio")
