// plain: one `ping` tool over stdio and nothing else held open. Whether it exits when stdin
// reaches EOF is up to the SDK (for TypeScript v1: only because Node's event loop drains).
import { serve } from "./server.mjs";

await serve({ name: "{{line}}-{{label}}-plain" });
