package kit

import java.util.concurrent.atomic.AtomicBoolean
import kotlin.system.exitProcess
import kotlinx.coroutines.Job
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeoutOrNull

/**
 * fixed: the ticker server done right. The session's close (fired by the SDK's stdio
 * transport on EOF) and a shutdown hook (SIGTERM/SIGINT) both call one guarded
 * shutdown(reason) that runs once: cancel the ticker, close the server; the EOF path then
 * calls exitProcess(0). (Inside a shutdown hook System.exit would block forever, so the signal
 * path returns and the JVM finishes exiting with the signal's status.)
 */
private val shuttingDown = AtomicBoolean(false)

@Volatile private var ticker: Job? = null

@Volatile private var session: Session? = null

private fun shutdown(reason: String): Boolean {
    if (!shuttingDown.compareAndSet(false, true)) return false
    log("fixed", "shutdown: $reason")
    ticker?.cancel()
    session?.let { s ->
        runCatching { runBlocking { withTimeoutOrNull(500) { s.close() } } }
            .onFailure { log("fixed", "close: $it") }
    }
    return true
}

fun main() {
    Runtime.getRuntime().addShutdownHook(Thread({ shutdown("signal") }, "fixed-shutdown-hook"))
    runBlocking {
        ticker = startTicker()
        val s = serve("fixed", slow = false)
        session = s
        log("fixed", "serving on stdio")
        s.closed.await()
        // Still inside runBlocking: the ticker is its child and would keep it from returning.
        if (shutdown("stdin-eof")) exitProcess(0)
    }
}
