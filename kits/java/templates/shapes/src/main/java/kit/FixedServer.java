package kit;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * fixed: the executor server done right. stdin is watched for EOF (Common.watchStdin) and a
 * shutdown hook covers SIGTERM/SIGINT; both call one guarded shutdown(reason) that runs once:
 * stop the executor, close the MCP server; the EOF path then calls System.exit(0). (Inside a
 * shutdown hook System.exit would block forever, so the signal path returns and the JVM
 * finishes exiting with the signal's status.)
 */
public final class FixedServer {

	private static final AtomicBoolean shuttingDown = new AtomicBoolean(false);

	private static volatile Runnable closeServer;

	private static volatile ScheduledExecutorService executor;

	public static void main(String[] args) throws Exception {
		CompletableFuture<String> stdinDone = Common.watchStdin();
		Runtime.getRuntime().addShutdownHook(new Thread(() -> shutdown("signal"), "fixed-shutdown-hook"));
		closeServer = Kit.start("fixed", false);
		executor = Common.startTicker();
		Common.log("fixed", "serving on stdio");
		// Wait on the main thread, not on the transport's reader thread that saw EOF.
		String reason = stdinDone.get();
		if (shutdown(reason)) {
			System.exit(0);
		}
	}

	/** Runs once; returns true for the caller that actually performed the shutdown. */
	static boolean shutdown(String reason) {
		if (!shuttingDown.compareAndSet(false, true)) {
			return false;
		}
		Common.log("fixed", "shutdown: " + reason);
		ScheduledExecutorService ex = executor;
		if (ex != null) {
			ex.shutdownNow();
			try {
				ex.awaitTermination(500, TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException e) {
				Thread.currentThread().interrupt();
			}
		}
		Runnable close = closeServer;
		if (close != null) {
			try {
				close.run();
			}
			catch (RuntimeException e) {
				Common.log("fixed", "close: " + e);
			}
		}
		return true;
	}

}
