package kit

import kotlinx.coroutines.runBlocking

/**
 * ticker: plain plus a coroutine ticking every second in main's runBlocking scope. The session
 * still closes on stdin EOF, but runBlocking waits for its child ticker, so main never returns.
 */
fun main() {
    runBlocking {
        startTicker()
        val session = serve("ticker", slow = false)
        log("ticker", "serving on stdio")
        session.closed.await()
        log("ticker", "session closed; main still waits for the ticker")
    }
}
