// The reference measurement's own procedure (rows A-J), done the way it was first done: one
// case at a time, with the TypeScript SDK's own client (StdioClientTransport, @modelcontextprotocol/sdk
// 1.30.0 from the node-sdk-1.30.0 fixture), each case checked a fixed 4 s after the client
// ended. It is the "same cases one at a time" that scripts/bench/reference.sh compares the
// harness against, and an independent check of the reference table (it shares no code with
// the harness).
//
// Usage: node scripts/bench/reference-procedure.mjs      (run by scripts/bench/reference.sh)
// Prints one line per row and, last, `total_ms N`. Every server still alive at its check is
// killed after it (and on SIGINT/SIGTERM), so nothing is left behind.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const fixture = join(root, "fixtures", "node-sdk-1.30.0");
const require = createRequire(join(fixture, "package.json"));
const sdk = async (path) => import(pathToFileURL(require.resolve(`@modelcontextprotocol/sdk/${path}`)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");

const CHECK_MS = 4000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Connects with the SDK's client and lists tools, as the reference client did. */
async function connect(server) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(fixture, `${server}.mjs`)],
    cwd: fixture,
    env: { ...process.env, NODE_NO_WARNINGS: "1" },
    stderr: "ignore",
  });
  const client = new Client({ name: "reference-procedure", version: "0.0.0" });
  await client.connect(transport);
  await client.listTools();
  return { client, pid: transport.pid };
}

// Role "client": connect, print the server's pid, then end the way the parent asked.
if (process.argv[2] === "client") {
  const [, , , server, how] = process.argv;
  const { pid } = await connect(server);
  process.stdout.write(`${pid}\n`);
  if (how === "exit") process.exit(0);
  setInterval(() => {}, 1 << 30); // "crash": wait to be SIGKILLed
} else {
  const survivors = new Set();
  const killSurvivors = () => {
    for (const pid of survivors) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
    survivors.clear();
  };
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(sig, () => {
      killSurvivors();
      process.exit(130);
    });
  }

  /** Alive and still our server (not a zombie, not a reused pid)? Gives its ppid. */
  const alive = (pid, server) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      return state !== "Z" && state !== "X" && cmd.includes(`${server}.mjs`) ? Number(ppid) : null;
    } catch {
      return null;
    }
  };

  /** Runs a client in its own process that exits, or is SIGKILLed, after connecting. */
  const outsideClient = (server, how) =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "client", server, how], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        if (out.includes("\n") && how === "crash") child.kill("SIGKILL");
      });
      child.on("exit", () => {
        const pid = Number(out.trim());
        if (pid > 0) resolve(pid);
        else reject(new Error(`client for ${server} printed no pid`));
      });
    });

  const rows = [
    ["A", "plain", "close"], ["B", "plain", "exit"], ["C", "plain", "crash"],
    ["D", "timer", "close"], ["E", "timer", "exit"], ["F", "timer", "crash"],
    ["G", "fixed", "close"], ["H", "fixed", "exit"], ["I", "fixed", "crash"],
    ["J", "stubborn", "close"],
  ];
  const start = performance.now();
  for (const [row, server, how] of rows) {
    let pid;
    let took = "";
    if (how === "close") {
      const c = await connect(server);
      pid = c.pid;
      const t0 = performance.now();
      await c.client.close();
      took = `close() took ${Math.round(performance.now() - t0)} ms`;
    } else {
      pid = await outsideClient(server, how);
    }
    await sleep(CHECK_MS);
    const ppid = alive(pid, server);
    if (ppid !== null) survivors.add(pid);
    const result = ppid === null ? "exited" : `STILL ALIVE (ppid ${ppid})`;
    console.log(`${row}  ${server.padEnd(8)} ${how.padEnd(5)}  ${result.padEnd(22)} ${took}`);
    killSurvivors();
  }
  console.log(`total_ms ${Math.round(performance.now() - start)}`);
}
