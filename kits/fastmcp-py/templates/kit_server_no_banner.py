"""FastMCP (`fastmcp` on PyPI, 2.10.0 and later): decorated tools, `run(transport="stdio",
show_banner=False)` (the banner goes to stderr, but a quiet server is the realistic one)."""

import anyio
from fastmcp import FastMCP


def run(name: str, slow: bool = False) -> None:
    """Serves `ping` (and `slow`, 3 s) on stdio; returns when the session ends."""
    mcp = FastMCP(name)

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

    mcp.run(transport="stdio", show_banner=False)
