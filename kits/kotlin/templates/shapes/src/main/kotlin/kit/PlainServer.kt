package kit

import kotlinx.coroutines.runBlocking

/** plain: only the MCP server; main waits until the session reports it closed, then returns. */
fun main() {
    runBlocking {
        val session = serve("plain", slow = false)
        log("plain", "serving on stdio")
        session.closed.await()
        log("plain", "session closed; main returns")
    }
}
