// The split v2 server package: `McpServer` from @modelcontextprotocol/server with
// `registerTool`, connected over `StdioServerTransport` (@modelcontextprotocol/server/stdio).
// The v2 transport itself notices stdin end/close and closes; `onClosed` is called then.
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";

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
