// child: plain plus a helper process (`sleep 600`) started at launch and never stopped. The
// helper is unref'd and its stdio is /dev/null, so the server itself still exits as plain
// does; the helper is left behind, reparented, when it does.
import { spawn } from "node:child_process";
import { serve } from "./server.mjs";

const helper = spawn("sleep", ["600"], { stdio: "ignore" });
helper.unref();
process.stderr.write(`child: started helper pid ${helper.pid}\n`);
await serve({ name: "{{line}}-{{label}}-child" });
