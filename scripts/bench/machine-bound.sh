#!/usr/bin/env bash
# Benchmark: how many cases of a small census were machine-bound (the machine's load, not
# the server, decided them) at idle, 2x and 8x oversubscribed (`yes` hogs: 2 and 8 per
# CPU, on top of whatever else the machine runs; its load average is printed). Prints the
# figures; asserts nothing. The same listing, scenarios and --repeat at every level.
# Usage: scripts/bench/machine-bound.sh [LEVELS] [-- extra census options]
#   LEVELS: hogs per CPU, space-separated (default "0 2 8").
#   BENCH_SERVERS: the listing entries (package identifiers in conformance/census/servers.json;
#     default: two uvx Python servers and two npx Node ones).
#   MCP_SHUTDOWN_BIN: the binary (default: target/release/mcp-shutdown, built here).
#   MCP_SHUTDOWN_CENSUS_CACHE: the install cache (installed once, before the first level).
set -euo pipefail
cd "$(dirname "$0")/../.."
levels=${1:-"0 2 8"}
shift $(($# < 1 ? $# : 1))
[[ ${1:-} == -- ]] && shift
extra=("$@")
[[ ${#extra[@]} -eq 0 ]] && extra=(--scenario close --repeat 3)
servers=${BENCH_SERVERS:-"duckduckgo-mcp-server awslabs.cloudwatch-mcp-server mcp-server-time @modelcontextprotocol/server-everything"}
if [[ -z ${MCP_SHUTDOWN_BIN:-} ]]; then
  cargo build --release -q
  bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
else
  bin=$MCP_SHUTDOWN_BIN
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-machine-bound.XXXXXX")
hogs=()
stop_hogs() {
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${hogs[@]}"; do wait "$p" 2>/dev/null || true; done
  hogs=()
}
trap 'stop_hogs; rm -rf "$tmp"' EXIT
python3 - "$tmp/listing.json" $servers <<'PY'
import json, sys
d = json.load(open("conformance/census/servers.json"))
want = set(sys.argv[2:])
pick = [s for s in d["servers"] if any(p.get("identifier") in want for p in s["server"].get("packages", []))]
json.dump({**d, "servers": pick}, open(sys.argv[1], "w"))
print(f"listing: {len(pick)} entries ({', '.join(s['server']['name'] for s in pick)})")
PY
cpus=$(nproc)
printf '%-6s %-6s %-14s %-7s %-13s %s\n' level hogs "load(1m) a→b" cases machine-bound stages
for k in $levels; do
  n=$((k * cpus))
  for _ in $(seq "$n"); do yes >/dev/null & hogs+=($!); done
  sleep 2
  la=$(cut -d' ' -f1 /proc/loadavg)
  # Exit 2 names the machine-bound cases, 1 a missed rule: both are what is measured.
  "$bin" census --listing "$tmp/listing.json" --format json --output "$tmp/$k.json" \
    "${extra[@]}" >/dev/null 2>"$tmp/$k.err" || true
  lb=$(cut -d' ' -f1 /proc/loadavg)
  stop_hogs
  python3 - "$tmp/$k.json" "$k" "$n" "$la" "$lb" <<'PY'
import json, sys
from collections import Counter
path, k, n, la, lb = sys.argv[1:]
try:
    rep = json.load(open(path))
except (OSError, ValueError):
    print(f"{k + 'x':<6} {n:<6} {la + '→' + lb:<14} report missing")
    sys.exit(0)
cases = rep["results"]
bound = [c for c in cases if c.get("machine_bound")]
stages = Counter()
for c in cases:
    runs = (c.get("repeat") or {}).get("runs") or [c]
    for r in runs:
        err = r.get("error")  # a run's error is its kind; a case's, an object
        kind = err if isinstance(err, str) else (err or {}).get("kind")
        stages[r.get("stage") or kind or "?"] += 1
label = "idle" if k == "0" else f"{k}x"
print(f"{label:<6} {n:<6} {la + '→' + lb:<14} {len(cases):<7} {len(bound):<13} "
      + ", ".join(f"{s} {v}" for s, v in sorted(stages.items())))
for c in bound:
    m = c["machine_bound"]
    print(f"         machine-bound: {c['server']} × {c['scenario']}: {m['decided_by']}, "
          f"{m['runqueue_ms']:.0f} ms queued in {m['wall_ms']:.0f} ms, own {m['own_ms']:.0f} ms "
          f"of a {m['budget_ms']} ms budget")
PY
done
