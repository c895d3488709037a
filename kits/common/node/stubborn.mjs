// stubborn: an idle setInterval keeps the event loop alive, and a SIGTERM handler "cleans
// up" (logs to stderr) but never exits. Only SIGKILL ends it (or SIGINT, which keeps Node's
// default action).
import { serve } from "./server.mjs";

await serve({ name: "{{line}}-{{label}}-stubborn" });
setInterval(() => {}, 1000);
process.on("SIGTERM", () => {
  process.stderr.write("SIGTERM: cleaning up (and not exiting)\n");
});
