package kit;

/**
 * executor: plain plus a non-daemon ScheduledExecutorService ticking every second. Nothing
 * stops it, so the JVM outlives the MCP session.
 */
public final class ExecutorServer {

	public static void main(String[] args) {
		Kit.start("executor", false);
		Common.startTicker();
		Common.log("executor", "serving on stdio");
	}

}
