package kit

import kotlinx.coroutines.runBlocking

/** slow-tool: plain plus a tool `slow` that answers "done" after 3 s, for the inflight ending. */
fun main() {
    runBlocking {
        val session = serve("slow-tool", slow = true)
        log("slow-tool", "serving on stdio")
        session.closed.await()
    }
}
