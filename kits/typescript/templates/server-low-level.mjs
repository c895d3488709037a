// The SDK's low-level `Server` (1.0.0 - 1.3.0: before `McpServer` existed, and in 1.3.0, whose
// `McpServer` cannot register a second tool): list and call
// handlers registered by request schema, connected over `StdioServerTransport`.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const noArgs = { type: "object", properties: {} };

/** Serves `ping` (and `slow`, 3 s) on stdio, with the logging capability when asked;
 * resolves once connected, with `close()` and `log(data)` (a `notifications/message`). */
export async function serve({ name, slow = false, onClosed, logging = false }) {
  const capabilities = logging ? { tools: {}, logging: {} } : { tools: {} };
  const server = new Server({ name, version: "0.0.0" }, { capabilities });
  const tools = [{ name: "ping", description: "Answers pong", inputSchema: noArgs }];
  if (slow) tools.push({ name: "slow", description: "Answers done after 3 s", inputSchema: noArgs });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (request.params.name === "ping") return { content: [{ type: "text", text: "pong" }] };
    if (slow && request.params.name === "slow") {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      return { content: [{ type: "text", text: "done" }] };
    }
    throw new Error(`unknown tool ${request.params.name}`);
  });
  if (onClosed) server.onclose = onClosed;
  await server.connect(new StdioServerTransport());
  return {
    close: () => server.close(),
    log: (data) => server.sendLoggingMessage({ level: "info", logger: "kit", data }),
  };
}
