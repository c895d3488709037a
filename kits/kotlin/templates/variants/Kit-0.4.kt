package kit

import io.modelcontextprotocol.kotlin.sdk.CallToolResult
import io.modelcontextprotocol.kotlin.sdk.Implementation
import io.modelcontextprotocol.kotlin.sdk.LoggingLevel
import io.modelcontextprotocol.kotlin.sdk.LoggingMessageNotification
import io.modelcontextprotocol.kotlin.sdk.ServerCapabilities
import io.modelcontextprotocol.kotlin.sdk.TextContent
import io.modelcontextprotocol.kotlin.sdk.server.Server
import io.modelcontextprotocol.kotlin.sdk.server.ServerOptions
import io.modelcontextprotocol.kotlin.sdk.server.StdioServerTransport
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.delay
import kotlinx.io.asSink
import kotlinx.io.asSource
import kotlinx.io.buffered
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

/**
 * A served MCP session: completes `closed` when the SDK reports it closed; `log(n)` sends the
 * n-th log message through it (`notifications/message`), outside any request.
 */
class Session(val closed: CompletableDeferred<Unit>, val close: suspend () -> Unit, val log: suspend (Long) -> Unit)

/**
 * The server for SDK 0.3 - 0.7: types in io.modelcontextprotocol.kotlin.sdk, one session per
 * server (`connect`), and `Server.onClose`, registered before connecting so no close is missed.
 */
@Suppress("UNUSED_PARAMETER") // logging: these releases declare it by default
suspend fun serve(shape: String, slow: Boolean, logging: Boolean = false): Session {
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
    server.onClose { closed.complete(Unit) }
    server.connect(StdioServerTransport(System.`in`.asSource().buffered(), System.out.asSink().buffered()))
    val log: suspend (Long) -> Unit = { n ->
        val data = buildJsonObject { put("tick", n) }
        server.sendLoggingMessage({{kotlin_log_message}})
    }
    return Session(closed, { server.close() }, log)
}
