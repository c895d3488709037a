package kit;

/** slow-tool: plain plus a tool `slow` that answers "done" after 3 s, for the inflight ending. */
public final class SlowToolServer {

	public static void main(String[] args) {
		Kit.start("slow-tool", true);
		Common.log("slow-tool", "serving on stdio");
	}

}
