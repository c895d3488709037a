package kit;

import java.util.function.LongConsumer;

import io.modelcontextprotocol.json.{{java_mapper_class}};
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;

/**
 * The server for SDK 0.13.0 and later: a StdioServerTransportProvider over the SDK's own
 * McpJsonMapper ({{java_mapper_class}}.{{java_mapper_call}}), tools built with Tool.builder()
 * and registered with toolCall(tool, (exchange, request) -> result).
 */
final class Kit {

	private static final String NO_ARGS = "{\"type\":\"object\",\"properties\":{}}";

	private Kit() {
	}

	private static McpSchema.CallToolResult text(String s) {
		return McpSchema.CallToolResult.builder().addTextContent(s).build();
	}

	private static McpSchema.Tool tool(McpJsonMapper mapper, String name, String description) {
		return McpSchema.Tool.builder().name(name).description(description).inputSchema(mapper, NO_ARGS).build();
	}

	/** Starts `ping` (and `slow`) on stdio; returns how to close the server. */
	static Runnable start(String shape, boolean slow) {
		McpSyncServer server = build(shape, slow, false);
		return server::closeGracefully;
	}

	/**
	 * Starts `ping` on stdio, logging declared; returns how to send the n-th notification
	 * through the server, outside any request: {{java_notify_what}}.
	 */
	static LongConsumer notifier(String shape) {
		McpSyncServer server = build(shape, false, true);
		return n -> {{java_notify}};
	}

	private static McpSyncServer build(String shape, boolean slow, boolean logging) {
		McpJsonMapper mapper = {{java_mapper_class}}.{{java_mapper_call}};
		var transport = new StdioServerTransportProvider(mapper);
		var capabilities = McpSchema.ServerCapabilities.builder().tools(true);
		if (logging) {
			capabilities = capabilities.logging();
		}
		var spec = McpServer.sync(transport)
			.serverInfo(Common.NAME + "-" + shape, "0.0.0")
			.capabilities(capabilities.build())
			.toolCall(tool(mapper, "ping", "Answers pong"), (exchange, request) -> text("pong"));
		if (slow) {
			spec = spec.toolCall(tool(mapper, "slow", "Answers done after 3 s"), (exchange, request) -> {
				Common.slowly();
				return text("done");
			});
		}
		return spec.build();
	}

}
