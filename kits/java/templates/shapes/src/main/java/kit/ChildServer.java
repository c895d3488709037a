package kit;

import java.io.IOException;

/**
 * child: plain plus a helper process (`sleep 600`) started at launch and never stopped. Its
 * stdio is discarded, so the server still ends as plain does; the helper is left behind.
 */
public final class ChildServer {

	public static void main(String[] args) throws IOException {
		Process helper = new ProcessBuilder("sleep", "600").redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
			.redirectOutput(ProcessBuilder.Redirect.DISCARD)
			.redirectError(ProcessBuilder.Redirect.DISCARD)
			.start();
		Common.log("child", "started helper pid " + helper.pid());
		Kit.start("child", false);
		Common.log("child", "serving on stdio");
	}

}
