package kit

import kotlin.system.exitProcess
import kotlinx.coroutines.runBlocking

/**
 * hooked: the ticker shape with the SDK's own close callback wired to exit: when the session's
 * onClose fires (the SDK closes the session on stdin EOF), exitProcess(0). Nothing else
 * watches for the end; the ticker would otherwise keep runBlocking from returning.
 */
fun main() {
    runBlocking {
        startTicker()
        val session = serve("hooked", slow = false)
        log("hooked", "serving on stdio")
        session.closed.await()
        log("hooked", "session closed; exiting")
        exitProcess(0)
    }
}
