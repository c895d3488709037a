package kit;

import java.util.concurrent.CountDownLatch;

/**
 * stubborn: the executor server plus a shutdown hook (what runs on SIGTERM/SIGINT) that
 * "cleans up" and never finishes. The JVM waits for its hooks, so it hangs until SIGKILL.
 */
public final class StubbornServer {

	public static void main(String[] args) {
		Kit.start("stubborn", false);
		Common.startTicker();
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			Common.log("stubborn", "shutdown hook: cleaning up (never finishes)");
			CountDownLatch never = new CountDownLatch(1);
			while (true) {
				try {
					never.await();
				}
				catch (InterruptedException ignored) {
					// keep "cleaning up"
				}
			}
		}, "stubborn-hook"));
		Common.log("stubborn", "serving on stdio");
	}

}
