package kit;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

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
		McpSyncServer server = build(shape, slow, false);
		return server::closeGracefully;
	}

	/**
	 * Starts `ping` on stdio, logging declared; returns how to send the n-th log message
	 * through the server ({{java_log_what}}), outside any request.
	 */
	static LongConsumer notifier(String shape) {
		McpSyncServer server = build(shape, false, true);
		return n -> {{java_log}};
	}

	private static McpSyncServer build(String shape, boolean slow, boolean logging) {
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
		var capabilities = McpSchema.ServerCapabilities.builder().tools(true);
		if (logging) {
			capabilities = capabilities.logging();
		}
		return McpServer.sync(transport)
			.serverInfo(Common.NAME + "-" + shape, "0.0.0")
			.capabilities(capabilities.build())
			.tools(tools)
			.build();
	}

}
