// `McpServer` with `server.tool(name, description, callback)` (1.3.1 - 1.11.3; `registerTool`
// came in 1.11.4/1.12.0), connected over `StdioServerTransport`.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

/** Serves `ping` (and `slow`, 3 s) on stdio, with the logging capability when asked;
 * resolves once connected, with `close()` and `log(data)` (a `notifications/message`). */
export async function serve({ name, slow = false, onClosed, logging = false }) {
  const options = logging ? { capabilities: { logging: {} } } : undefined;
  const server = new McpServer({ name, version: "0.0.0" }, options);
  server.tool("ping", "Answers pong", async () => ({ content: [{ type: "text", text: "pong" }] }));
  if (slow) {
    server.tool("slow", "Answers done after 3 s", async () => {
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
