package kit;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** What every shape shares, whatever the SDK version. Everything but MCP goes to stderr. */
final class Common {

	static final String NAME = "{{line}}-{{label}}";

	private Common() {
	}

	static void log(String shape, String message) {
		System.err.println("[" + NAME + "-" + shape + "] " + message);
		System.err.flush();
	}

	/**
	 * A non-daemon scheduled executor ticking every second: it stands for any cache refresher
	 * or pool and keeps the JVM alive on its own.
	 */
	static ScheduledExecutorService startTicker() {
		var ticks = new AtomicLong();
		ScheduledExecutorService executor = nonDaemon("ticker");
		executor.scheduleAtFixedRate(ticks::incrementAndGet, 1, 1, TimeUnit.SECONDS);
		return executor;
	}

	/** A single-thread scheduler whose thread is not a daemon: it alone keeps the JVM alive. */
	static ScheduledExecutorService nonDaemon(String name) {
		return Executors.newSingleThreadScheduledExecutor(r -> {
			Thread t = new Thread(r, name);
			t.setDaemon(false);
			return t;
		});
	}

	/**
	 * Replaces System.in with a pass-through stream that completes {@code done} on the first
	 * end-of-file or read error. The SDK's stdio transport offers no callback for EOF
	 * (java-sdk#936), so this is how a server learns of it; call before starting the server.
	 */
	static CompletableFuture<String> watchStdin() {
		CompletableFuture<String> done = new CompletableFuture<>();
		System.setIn(new FilterInputStream(System.in) {
			@Override
			public int read() throws IOException {
				return watch(super.read());
			}

			@Override
			public int read(byte[] b, int off, int len) throws IOException {
				try {
					return watch(super.read(b, off, len));
				}
				catch (IOException e) {
					done.complete("stdin-error");
					throw e;
				}
			}

			private int watch(int n) {
				if (n == -1) {
					done.complete("stdin-eof");
				}
				return n;
			}
		});
		return done;
	}

	/** Sleeps for the slow tool; an interrupt ends the sleep early. */
	static void slowly() {
		try {
			Thread.sleep(3000);
		}
		catch (InterruptedException e) {
			Thread.currentThread().interrupt();
		}
	}

}
