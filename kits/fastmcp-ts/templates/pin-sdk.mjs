// Writes package.json from package.json.in, pinning @modelcontextprotocol/sdk (npm `overrides`)
// to the lowest version this FastMCP release declares it accepts, i.e. the SDK it was built
// and tested against. FastMCP follows the SDK closely and later SDK releases have broken older
// FastMCP releases (e.g. FastMCP 2.2.4 with SDK 1.28: "Server does not support completions"),
// so the release date alone is not enough where the registry's date is late.
// Usage: node pin-sdk.mjs fastmcp@2.2.4 | node pin-sdk.mjs /path/to/fastmcp-x.y.z.tgz
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const what = process.argv[2];
const manifest = what.endsWith(".tgz")
  ? JSON.parse(execFileSync("tar", ["-xOzf", what, "package/package.json"], { encoding: "utf8" }))
  : { dependencies: JSON.parse(execFileSync("npm", ["view", what, "dependencies", "--json"], { encoding: "utf8" }) || "{}") };
const range = manifest.dependencies?.["@modelcontextprotocol/sdk"] ?? "";
const lowest = range.match(/\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?/)?.[0];
const pkg = JSON.parse(readFileSync("package.json.in", "utf8"));
if (lowest) pkg.overrides = { "@modelcontextprotocol/sdk": lowest };
writeFileSync("package.json", JSON.stringify(pkg, null, 2) + "\n");
process.stderr.write(`pin-sdk: ${what} accepts @modelcontextprotocol/sdk ${range || "(none)"}: ${lowest ?? "not pinned"}\n`);
