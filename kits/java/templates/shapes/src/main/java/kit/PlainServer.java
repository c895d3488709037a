package kit;

/**
 * plain: only the MCP server. main() returns at once; whether the JVM ends on stdin EOF is up
 * to the SDK's transport threads.
 */
public final class PlainServer {

	public static void main(String[] args) {
		Kit.start("plain", false);
		Common.log("plain", "serving on stdio");
	}

}
