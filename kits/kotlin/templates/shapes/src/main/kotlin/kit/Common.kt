package kit

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.delay
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch

/** What every shape shares, whatever the SDK version. Everything but MCP goes to stderr. */
const val NAME = "{{line}}-{{label}}"

fun log(shape: String, message: String) {
    System.err.println("[$NAME-$shape] $message")
    System.err.flush()
}

/**
 * A coroutine ticking every second, launched in the caller's scope: structured concurrency
 * makes that scope (here: `runBlocking` in main) wait for it, so it keeps the process alive.
 */
fun CoroutineScope.startTicker(): Job = launch {
    var ticks = 0L
    while (isActive) {
        delay(1000)
        ticks++
    }
}
