package kit;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransport;
import io.modelcontextprotocol.spec.McpSchema;

/**
 * The server for SDK 0.7.0: one StdioServerTransport (there was no transport provider yet)
 * and tools registered as SyncToolRegistration(tool, args -> result).
 */
final class Kit {

	private static final String NO_ARGS = "{\"type\":\"object\",\"properties\":{}}";

	private Kit() {
	}

	private static McpSchema.CallToolResult text(String s) {
		return new McpSchema.CallToolResult(List.of(new McpSchema.TextContent(s)), false);
	}

	/** Starts `ping` (and `slow`) on stdio; returns how to close the server. */
	static Runnable start(String shape, boolean slow) {
		var transport = new StdioServerTransport(new ObjectMapper());
		List<McpServerFeatures.SyncToolRegistration> tools = new ArrayList<>();
		tools.add(new McpServerFeatures.SyncToolRegistration(new McpSchema.Tool("ping", "Answers pong", NO_ARGS),
				args -> text("pong")));
		if (slow) {
			tools.add(new McpServerFeatures.SyncToolRegistration(
					new McpSchema.Tool("slow", "Answers done after 3 s", NO_ARGS), args -> {
						Common.slowly();
						return text("done");
					}));
		}
		McpSyncServer server = McpServer.sync(transport)
			.serverInfo(Common.NAME + "-" + shape, "0.0.0")
			.capabilities(McpSchema.ServerCapabilities.builder().tools(true).build())
			.tools(tools)
			.build();
		return server::closeGracefully;
	}

}
