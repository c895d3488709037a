"""The notifier shape's server loop: the SDK's `stdio_server()` and its low-level server's
`run()`, as the SDK's own stdio runner does it, plus a task sending `notifications/message`
into the same write stream every 200 ms (so the notification goes out through the SDK's
stdout writer, as a log message from a handler would)."""

import sys

import anyio
import mcp.types as types
from mcp.server.stdio import stdio_server

try:
    from mcp.shared.message import SessionMessage
except ImportError:  # before mcp 1.8.0 the streams carry the JSON-RPC message itself
    SessionMessage = None


def message(n: int):
    note = types.JSONRPCNotification(
        jsonrpc="2.0",
        method="notifications/message",
        params={"level": "info", "logger": "kit", "data": f"tick {n}"},
    )
    try:
        msg = types.JSONRPCMessage(note)  # 1.x: a RootModel around the union
    except TypeError:
        msg = note  # 2.x: the union itself, no wrapper
    return SessionMessage(msg) if SessionMessage else msg


async def tick(write) -> None:
    n = 0
    while True:
        await anyio.sleep(0.2)
        n += 1
        try:
            await write.send(message(n))
        except Exception as e:  # noqa: BLE001 - the shape logs and goes on
            print(f"notifier: send failed: {e!r}", file=sys.stderr, flush=True)


async def serve(lowlevel) -> None:
    """Runs `lowlevel` (the SDK's low-level server) on stdio with the ticker beside it;
    returns when the server's run() does."""
    async with stdio_server() as (read, write):
        async with anyio.create_task_group() as tg:
            tg.start_soon(tick, write)
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
            tg.cancel_scope.cancel()
