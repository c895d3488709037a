"""`mcp.server.fastmcp.FastMCP` (mcp 1.2.0 - 1.x): decorated tools, `run(transport="stdio")`."""

import anyio
from mcp.server.fastmcp import FastMCP


def run(name: str, slow: bool = False, notify: bool = False) -> None:
    """Serves `ping` (and `slow`, 3 s) on stdio; returns when the session ends. `notify`: with
    the notifier's ticker (kit_notify), through the same low-level server FastMCP runs."""
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

    if notify:
        import kit_notify

        anyio.run(kit_notify.serve, mcp._mcp_server)
        return
    mcp.run(transport="stdio")
