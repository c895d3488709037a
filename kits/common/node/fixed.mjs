// fixed: the timer server, plus the four listeners: stdin `end` and `close`, SIGTERM and
// SIGINT, all calling one guarded shutdown(reason) that runs once, writes the reason to
// stderr, closes the server and exits 0. Where the SDK has its own close hook (`onClosed`
// in server.mjs), that calls shutdown too.
import { appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "./server.mjs";

let shuttingDown = false;
let handle = null;
async function shutdown(reason) {
  if (shuttingDown) return;
  shuttingDown = true;
  process.stderr.write(`shutdown: ${reason}\n`);
  try {
    await handle?.close();
  } catch (e) {
    process.stderr.write(`close: ${e}\n`);
  } finally {
    process.exit(0);
  }
}

// Listen before connecting: an EOF that arrives during the handshake is not missed.
process.stdin.on("end", () => shutdown("stdin-end"));
process.stdin.on("close", () => shutdown("stdin-close"));
process.on("SIGTERM", () => shutdown("SIGTERM"));
process.on("SIGINT", () => shutdown("SIGINT"));

handle = await serve({ name: "{{line}}-{{label}}-fixed", onClosed: () => shutdown("transport-close") });
const tickFile = join(tmpdir(), `mcp-kit-fixed-${process.pid}.log`);
setInterval(() => appendFileSync(tickFile, `${new Date().toISOString()} tick\n`), 1000);
