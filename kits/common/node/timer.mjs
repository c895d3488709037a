// timer: plain plus one setInterval (1 s) appending a line to a file in os.tmpdir(). It stands
// for any cache refresher, pool or log flusher: it keeps Node's event loop alive, so the
// process lives on after EOF unless the SDK (or the server) exits on it.
import { appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "./server.mjs";

await serve({ name: "{{line}}-{{label}}-timer" });
const tickFile = join(tmpdir(), `mcp-kit-timer-${process.pid}.log`);
setInterval(() => appendFileSync(tickFile, `${new Date().toISOString()} tick\n`), 1000);
