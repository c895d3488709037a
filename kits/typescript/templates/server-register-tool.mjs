// `McpServer` with `registerTool(name, config, callback)` (1.11.4 and later), connected over
// `StdioServerTransport`: what the SDK's README shows.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

/** Serves `ping` (and `slow`, 3 s) on stdio, with the logging capability when asked;
 * resolves once connected, with `close()` and `log(data)` (a `notifications/message`). */
export async function serve({ name, slow = false, onClosed, logging = false }) {
  const options = logging ? { capabilities: { logging: {} } } : undefined;
  const server = new McpServer({ name, version: "0.0.0" }, options);
  server.registerTool("ping", { description: "Answers pong" }, async () => ({
    content: [{ type: "text", text: "pong" }],
  }));
  if (slow) {
    server.registerTool("slow", { description: "Answers done after 3 s" }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      return { content: [{ type: "text", text: "done" }] };
    });
  }
  if (onClosed) server.server.onclose = onClosed;
  await server.connect(new StdioServerTransport());
  return {
    close: () => server.close(),
    log: (data) => server.server.sendLoggingMessage({ level: "info", logger: "kit", data }),
  };
}
