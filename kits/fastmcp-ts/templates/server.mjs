// FastMCP for TypeScript (`fastmcp` on npm): `addTool({ name, description, execute })` and
// `start({ transportType: "stdio" })`, the API every release since 1.0.1 keeps, imported from
// {{fastmcp_module}}. FastMCP emits
// "disconnect" when it notices the stdio session end; `onClosed` is called then.
import { FastMCP } from "{{fastmcp_module}}";

/** Serves `ping` (and `slow`, 3 s) on stdio; resolves once started, with `close()` and
 * `log(data)` (a `notifications/message` through the session's SDK server; FastMCP declares
 * the logging capability itself). */
export async function serve({ name, slow = false, onClosed }) {
  const server = new FastMCP({ name, version: "0.0.0" });
  server.addTool({ name: "ping", description: "Answers pong", execute: async () => "pong" });
  if (slow) {
    server.addTool({
      name: "slow",
      description: "Answers done after 3 s",
      execute: async () => {
        await new Promise((resolve) => setTimeout(resolve, 3000));
        return "done";
      },
    });
  }
  // FastMCP emits "disconnect" from 1.6 on (earlier releases are no EventEmitter); the fixed
  // shape has its own stdin listeners either way.
  if (onClosed && typeof server.on === "function") server.on("disconnect", onClosed);
  await server.start({ transportType: "stdio" });
  return {
    close: () => server.stop(),
    log: (data) => {
      const session = server.sessions?.[0];
      if (!session) throw new Error("no session (this release exposes none)");
      return session.server.sendLoggingMessage({ level: "info", logger: "kit", data });
    },
  };
}
