// `McpServer` with `server.tool(name, description, callback)` (1.3.1 - 1.11.3; `registerTool`
// came in 1.11.4/1.12.0), connected over `StdioServerTransport`.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

/** Serves `ping` (and `slow`, 3 s) on stdio; resolves once connected. */
export async function serve({ name, slow = false, onClosed }) {
  const server = new McpServer({ name, version: "0.0.0" });
  server.tool("ping", "Answers pong", async () => ({ content: [{ type: "text", text: "pong" }] }));
  if (slow) {
    server.tool("slow", "Answers done after 3 s", async () => {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      return { content: [{ type: "text", text: "done" }] };
    });
  }
  if (onClosed) server.server.onclose = onClosed;
  await server.connect(new StdioServerTransport());
  return { close: () => server.close() };
}
