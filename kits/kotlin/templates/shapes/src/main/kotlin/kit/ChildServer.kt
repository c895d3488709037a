package kit

import java.io.File
import kotlinx.coroutines.runBlocking

/**
 * child: plain plus a helper process (`sleep 600`) started at launch and never stopped. Its
 * stdio is discarded, so the server still ends as plain does; the helper is left behind.
 */
fun main() {
    val helper = ProcessBuilder("sleep", "600")
        .redirectInput(ProcessBuilder.Redirect.from(File("/dev/null")))
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.DISCARD)
        .start()
    log("child", "started helper pid ${helper.pid()}")
    runBlocking {
        val session = serve("child", slow = false)
        log("child", "serving on stdio")
        session.closed.await()
    }
}
