#!/usr/bin/env bash
# Times an SDK sweep twice: how long instantiating the versions took (cold when the kit cache
# is new) and how many installed, how long the run took against the sum of its cases, and
# whether the second, identical sweep installed anything. Prints figures, never asserts.
#
#   scripts/bench/sdk-sweep.sh [SPEC] [SCENARIO...]     default: typescript@all close exit
#   MCP_SHUTDOWN_KIT_CACHE=DIR scripts/bench/sdk-sweep.sh ...   an existing (warm) kit cache;
#                                                      default: a new, empty one (cold)
set -euo pipefail
cd "$(dirname "$0")/../.."
spec=${1:-typescript@all}
shift || true
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(close exit)
args=()
for s in "${scenarios[@]}"; do args+=(--scenario "$s"); done

cargo build --release -q
bin=target/release/mcp-shutdown
mkdir -p target/tmp
out=$(mktemp -d target/tmp/bench-sdk-XXXXXX)
cache=${MCP_SHUTDOWN_KIT_CACHE:-$out/kit-cache}
echo "sweep: --sdk $spec ${args[*]}; kit cache: $cache; files: $out"

for pass in 1 2; do
  t0=$(date +%s.%N)
  MCP_SHUTDOWN_KIT_CACHE=$cache "$bin" run --sdk "$spec" "${args[@]}" --no-baseline \
    --format json >"$out/$pass.json" 2>"$out/$pass.err" || true
  t1=$(date +%s.%N)
  python3 - "$out/$pass.json" "$out/$pass.err" "$t0" "$t1" "$pass" <<'EOF'
import json, re, sys
report, err, t0, t1, n = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
text = open(err).read()
m = re.search(r"sdk: (\d+) version\(s\) in ([\d.]+) s: (\d+) installed, (\d+) cached, (\d+) not testable; (\d+) server", text)
if not m:
    sys.exit(f"pass {n}: no summary line in {err}:\n{text[-2000:]}")
versions, inst_s, installed, cached, untested, servers = m.groups()
inst_s = float(inst_s)
steps = [float(x) for x in re.findall(r"installed in ([\d.]+) s", text)]
r = json.load(open(report))
cases = r["results"]
case_sum = sum(c.get("wall_ms") or 0 for c in cases) / 1000
total = t1 - t0
run = total - inst_s
print(f"pass {n}: {versions} versions ({installed} installed, {cached} cached, {untested} not testable), {servers} servers")
print(f"  instantiate: {inst_s:.1f} s wall" + (f"; per installed version: median {sorted(steps)[len(steps)//2]:.1f} s, sum {sum(steps):.1f} s" if steps else ""))
print(f"  run: {len(cases)} cases in {run:.1f} s wall (registry listing and start-up included); sum of the cases {case_sum:.1f} s (each launch to clean-up, waits for a CPU token included): {case_sum / run if run > 0 else 0:.1f}x")
print(f"  total: {total:.1f} s")
EOF
done
