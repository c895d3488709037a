package kit

import java.util.concurrent.CountDownLatch
import kotlinx.coroutines.runBlocking

/**
 * stubborn: the ticker server plus a shutdown hook (what runs on SIGTERM/SIGINT) that "cleans
 * up" and never finishes. The JVM waits for its hooks, so it hangs until SIGKILL.
 */
fun main() {
    Runtime.getRuntime().addShutdownHook(
        Thread({
            log("stubborn", "shutdown hook: cleaning up (never finishes)")
            val never = CountDownLatch(1)
            while (true) {
                try {
                    never.await()
                } catch (_: InterruptedException) {
                    // keep "cleaning up"
                }
            }
        }, "stubborn-hook"),
    )
    runBlocking {
        startTicker()
        val session = serve("stubborn", slow = false)
        log("stubborn", "serving on stdio")
        session.closed.await()
    }
}
