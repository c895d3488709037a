// slow-tool: plain plus a tool `slow` that answers "done" after 3 s, for the `inflight`
// ending (a request still running when stdin closes).
import { serve } from "./server.mjs";

await serve({ name: "{{line}}-{{label}}-slow-tool", slow: true });
