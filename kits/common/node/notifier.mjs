// notifier: a timer that sends a log notification (`notifications/message`) through the SDK
// every 200 ms, and nothing else. The timer keeps the event loop alive, so after its client
// died the only way out is what writing to a broken stdout does: Node ignores SIGPIPE, so the
// write fails with EPIPE, and the SDK either lets that error kill the process (an unhandled
// 'error' event on process.stdout) or handles it. A failed send is logged to stderr and the
// timer goes on: the server's own code never exits.
import { serve } from "./server.mjs";

const handle = await serve({ name: "{{line}}-{{label}}-notifier", logging: true });
let n = 0;
setInterval(() => {
  n += 1;
  Promise.resolve()
    .then(() => handle.log(`tick ${n}`))
    .catch((e) => process.stderr.write(`notifier: send failed: ${e}\n`));
}, 200);
