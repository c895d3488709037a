#!/usr/bin/env bash
# Benchmark of a census: the install phase, the run phase, the sum of the cases' own wall
# times (what --jobs overlaps), and the CPU time of the census and everything it started
# (from /usr/bin/time: getrusage of the waited-for children, which includes every server,
# since each case's supervisor is a subreaper that reaps its whole tree). Asserts nothing.
# Usage: scripts/bench-census.sh [LISTING] [OUT.json] [-- extra census options]
#   default listing conformance/census/servers.json, report in a temporary file.
#   MCP_SHUTDOWN_BIN: the binary to time (default: target/release/mcp-shutdown, built here).
set -euo pipefail
cd "$(dirname "$0")/.."
listing=${1:-conformance/census/servers.json}
out=${2:-}
shift $(($# < 2 ? $# : 2))
[[ ${1:-} == -- ]] && shift
if [[ -z ${MCP_SHUTDOWN_BIN:-} ]]; then
  cargo build --release -q
  bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
else
  bin=$MCP_SHUTDOWN_BIN
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-census.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[[ -z $out ]] && out=$tmp/report.json
t0=$(date +%s%N)
# Exit code 1 only says some server missed a rule: that is what a census finds.
/usr/bin/time -f '%U %S %M' -o "$tmp/time" \
  "$bin" census --listing "$listing" --format json --output "$out" "$@" \
  >/dev/null 2> >(tee "$tmp/stderr" >&2) || true
t1=$(date +%s%N)
wait
python3 - "$out" "$tmp/stderr" "$tmp/time" "$(((t1 - t0) / 1000000))" "$(nproc)" <<'PY'
import json, re, sys
rep = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read()
user, sys_, maxrss = open(sys.argv[3]).read().split()[-3:]
wall, cpus = float(sys.argv[4]) / 1000, int(sys.argv[5])
def phase(name):
    m = re.search(rf"census: {name} phase ([0-9.]+) s", err)
    return float(m.group(1)) if m else float("nan")
install, run = phase("install"), phase("run")
cases = rep["results"]
walls = [r.get("wall_ms", 0.0) for r in cases]
servers = {r["server"] for r in cases}
cpu = float(user) + float(sys_)
print(f"{len(servers)} servers, {len(cases)} cases on {cpus} CPUs")
print(f"install phase           {install:9.1f} s")
print(f"run phase               {run:9.1f} s")
print(f"sum of case times       {sum(walls) / 1000:9.1f} s  ({sum(walls) / 1000 / run:.1f}x overlap in the run phase)")
print(f"longest case            {max(walls) / 1000:9.1f} s")
print(f"CPU time (user+sys)     {cpu:9.1f} s  (user {float(user):.1f}, sys {float(sys_):.1f}; {cpu / wall / cpus:.0%} of {cpus} CPUs over the wall time)")
print(f"wall, whole command     {wall:9.1f} s")
print(f"not testable / errors   {rep['summary'].get('not_testable', 0)} / {rep['summary']['errors']} cases")
PY
