package kit;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * notifier: a non-daemon timer that sends a notification through the SDK every 200 ms (a log
 * message; from 1.0.0, which has no server-wide log, a tools list_changed), and nothing else.
 * The timer keeps the JVM alive, so after its client died the only way out is what writing to
 * a broken stdout does: the JVM ignores SIGPIPE, so the SDK's write fails with an IOException
 * ("Broken pipe"), and the SDK either acts on it or not. A failed send is logged to stderr and
 * the timer goes on: the server's own code never exits.
 */
public final class NotifierServer {

	public static void main(String[] args) {
		LongConsumer send = Kit.notifier("notifier");
		var ticks = new AtomicLong();
		Common.nonDaemon("notifier").scheduleAtFixedRate(() -> {
			long n = ticks.incrementAndGet();
			try {
				send.accept(n);
			}
			catch (RuntimeException e) {
				// A task that throws is never run again: catch, log and go on.
				Common.log("notifier", "send failed: " + e);
			}
		}, 200, 200, TimeUnit.MILLISECONDS);
		Common.log("notifier", "serving on stdio");
	}

}
