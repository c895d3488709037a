package kit

import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking

/**
 * notifier: a loop in main's runBlocking that sends a log message through the SDK every 200 ms,
 * and nothing else. The loop keeps main from returning, so after its client died the only way
 * out is what writing to a broken stdout does: the JVM ignores SIGPIPE, so the SDK's write fails
 * with an IOException ("Broken pipe"), and the SDK either acts on it or not. A failed send is
 * logged to stderr and the loop goes on: the server's own code never exits.
 */
fun main() {
    runBlocking {
        val session = serve("notifier", slow = false, logging = true)
        log("notifier", "serving on stdio")
        var n = 0L
        while (true) {
            delay(200)
            n++
            runCatching { session.log(n) }.onFailure { log("notifier", "send failed: $it") }
        }
    }
}
