// hooked: the timer server with the SDK's own close hook wired to exit: `onClosed` (the
// server's `onclose`, or FastMCP's "disconnect") calls process.exit(0), and nothing else
// listens for the end. It exits on EOF exactly when the SDK notices EOF and closes: never on
// TypeScript v1 (its stdio transport has no stdin `end` listener, typescript-sdk#2002), from
// 2.1.0 on v2. Otherwise the timer keeps it alive.
import { appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "./server.mjs";

await serve({
  name: "{{line}}-{{label}}-hooked",
  onClosed: () => {
    process.stderr.write("hooked: the SDK closed the session; exiting\n");
    process.exit(0);
  },
});
const tickFile = join(tmpdir(), `mcp-kit-hooked-${process.pid}.log`);
setInterval(() => appendFileSync(tickFile, `${new Date().toISOString()} tick\n`), 1000);
