"""`mcp.server.mcpserver.MCPServer` (mcp 2.x, FastMCP's successor in the SDK): decorated tools,
`run(transport="stdio")`."""

import anyio
from mcp.server.mcpserver import MCPServer


def run(name: str, slow: bool = False) -> None:
    """Serves `ping` (and `slow`, 3 s) on stdio; returns when the session ends."""
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

    mcp.run(transport="stdio")
