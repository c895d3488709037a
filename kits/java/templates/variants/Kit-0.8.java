package kit;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;

/**
 * The server for SDK 0.8.0 - 0.12.x: a StdioServerTransportProvider over Jackson's
 * ObjectMapper and tools as SyncToolSpecification(tool, (exchange, args) -> result).
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
		var transport = new StdioServerTransportProvider(new ObjectMapper());
		List<McpServerFeatures.SyncToolSpecification> tools = new ArrayList<>();
		tools.add(new McpServerFeatures.SyncToolSpecification(new McpSchema.Tool("ping", "Answers pong", NO_ARGS),
				(exchange, args) -> text("pong")));
		if (slow) {
			tools.add(new McpServerFeatures.SyncToolSpecification(
					new McpSchema.Tool("slow", "Answers done after 3 s", NO_ARGS), (exchange, args) -> {
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
