// `McpServer` with `registerTool(name, config, callback)` (1.11.4 and later), connected over
// `StdioServerTransport`: what the SDK's README shows.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

/** Serves `ping` (and `slow`, 3 s) on stdio; resolves once connected. */
export async function serve({ name, slow = false, onClosed }) {
  const server = new McpServer({ name, version: "0.0.0" });
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
  return { close: () => server.close() };
}
