package kit

import io.modelcontextprotocol.kotlin.sdk.server.Server
import io.modelcontextprotocol.kotlin.sdk.server.ServerOptions
import io.modelcontextprotocol.kotlin.sdk.server.StdioServerTransport
import io.modelcontextprotocol.kotlin.sdk.types.CallToolResult
import io.modelcontextprotocol.kotlin.sdk.types.Implementation
import io.modelcontextprotocol.kotlin.sdk.types.ServerCapabilities
import io.modelcontextprotocol.kotlin.sdk.types.TextContent
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.delay
import kotlinx.io.asSink
import kotlinx.io.asSource
import kotlinx.io.buffered

/** A served MCP session: completes `closed` when the SDK reports it closed. */
class Session(val closed: CompletableDeferred<Unit>, val close: suspend () -> Unit)

/**
 * The server for SDK 0.8 and later: types in io.modelcontextprotocol.kotlin.sdk.types and one
 * ServerSession per transport (`createSession`). ServerSession.onClose reaches only callbacks
 * registered before the close, and the session exists only once the transport has started, so
 * the session is checked once more right after registering (the SDK's own samples skip that).
 */
suspend fun serve(shape: String, slow: Boolean): Session {
    val server = Server(
        Implementation(name = "$NAME-$shape", version = "0.0.0"),
        ServerOptions(capabilities = ServerCapabilities(tools = ServerCapabilities.Tools(listChanged = false))),
    )
    server.addTool(name = "ping", description = "Answers pong") {
        CallToolResult(content = listOf(TextContent("pong")))
    }
    if (slow) {
        server.addTool(name = "slow", description = "Answers done after 3 s") {
            delay(3000)
            CallToolResult(content = listOf(TextContent("done")))
        }
    }
    val closed = CompletableDeferred<Unit>()
    val session = server.createSession(StdioServerTransport(System.`in`.asSource().buffered(), System.out.asSink().buffered()))
    session.onClose { closed.complete(Unit) }
    if (session.transport == null) closed.complete(Unit)
    return Session(closed) { server.close() }
}
