package kit

import io.modelcontextprotocol.kotlin.sdk.server.Server
import io.modelcontextprotocol.kotlin.sdk.server.ServerOptions
import io.modelcontextprotocol.kotlin.sdk.server.StdioServerTransport
import io.modelcontextprotocol.kotlin.sdk.types.CallToolResult
import io.modelcontextprotocol.kotlin.sdk.types.Implementation
import io.modelcontextprotocol.kotlin.sdk.types.LoggingLevel
import io.modelcontextprotocol.kotlin.sdk.types.LoggingMessageNotification
import io.modelcontextprotocol.kotlin.sdk.types.LoggingMessageNotificationParams
import io.modelcontextprotocol.kotlin.sdk.types.ServerCapabilities
import io.modelcontextprotocol.kotlin.sdk.types.TextContent
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.delay
import kotlinx.io.asSink
import kotlinx.io.asSource
import kotlinx.io.buffered
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject

/**
 * A served MCP session: completes `closed` when the SDK reports it closed; `log(n)` sends the
 * n-th log message through it (`notifications/message`), outside any request.
 */
class Session(val closed: CompletableDeferred<Unit>, val close: suspend () -> Unit, val log: suspend (Long) -> Unit)

/**
 * The server for SDK 0.8 and later: types in io.modelcontextprotocol.kotlin.sdk.types and one
 * ServerSession per transport (`createSession`). ServerSession.onClose reaches only callbacks
 * registered before the close, and the session exists only once the transport has started, so
 * the session is checked once more right after registering (the SDK's own samples skip that).
 */
suspend fun serve(shape: String, slow: Boolean, logging: Boolean = false): Session {
    // ServerSession.sendLoggingMessage sends nothing unless logging is declared.
    val capabilities = ServerCapabilities(
        tools = ServerCapabilities.Tools(listChanged = false),
        logging = if (logging) buildJsonObject {} else null,
    )
    val server = Server(Implementation(name = "$NAME-$shape", version = "0.0.0"), ServerOptions(capabilities = capabilities))
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
    val log: suspend (Long) -> Unit = { n ->
        val params = LoggingMessageNotificationParams(level = LoggingLevel.Info, data = JsonPrimitive("tick $n"), logger = "kit")
        session.sendLoggingMessage(LoggingMessageNotification(params))
    }
    return Session(closed, { server.close() }, log)
}
