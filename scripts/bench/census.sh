#!/usr/bin/env bash
# Benchmark of a census: the install phase, the run phase, the sum of the cases' own wall
# times (what --jobs overlaps), and the CPU time of the census and everything it started
# (from /usr/bin/time: getrusage of the waited-for children, which includes every server,
# since each case's supervisor is a subreaper that reaps its whole tree). Asserts nothing.
# Usage: scripts/bench/census.sh [LISTING] [OUT.json] [-- extra census options]
#   default listing conformance/census/servers.json, report in a temporary file.
#   MCP_SHUTDOWN_BIN: the binary to time (default: target/release/mcp-shutdown, built here).
set -euo pipefail
cd "$(dirname "$0")/../.."
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
# A case run --repeat N times: its wall time is every run's (its timing is already the sum).
def case_wall(r):
    runs = (r.get("repeat") or {}).get("runs") or []
    return sum(x.get("wall_ms", 0.0) for x in runs) if runs else r.get("wall_ms", 0.0)
walls = [case_wall(r) for r in cases]
servers = {r["server"] for r in cases}
cpu = float(user) + float(sys_)
print(f"{len(servers)} servers, {len(cases)} cases on {cpus} CPUs")
print(f"install phase           {install:9.1f} s")
print(f"run phase               {run:9.1f} s")
print(f"sum of case times       {sum(walls) / 1000:9.1f} s  ({sum(walls) / 1000 / run:.1f}x overlap in the run phase)")
print(f"longest case            {max(walls) / 1000:9.1f} s  (all its runs)")
print(f"CPU time (user+sys)     {cpu:9.1f} s  (user {float(user):.1f}, sys {float(sys_):.1f}; {cpu / wall / cpus:.0%} of {cpus} CPUs over the wall time)")
print(f"wall, whole command     {wall:9.1f} s")
# The run phase against its floor: the cases' own CPU (each supervisor's and its reaped
# tree's, from the report's timing) spread over the CPUs, or the longest server's cases in
# sequence (their own time, without queueing for a CPU token), whichever is larger.
timed = [r.get("timing") or {} for r in cases]
case_cpu = sum(t.get("cpu_ms", 0.0) for t in timed) / 1000
per_server = {}
for r, t in zip(cases, timed):
    per_server[r["server"]] = per_server.get(r["server"], 0.0) + (case_wall(r) - t.get("token_wait_ms", 0.0)) / 1000
serial = max(per_server.values(), default=0.0)
floor = max(case_cpu / cpus, serial)
print(f"cases' own CPU          {case_cpu:9.1f} s  ({case_cpu / run / cpus:.0%} of {cpus} CPUs over the run phase: its CPU utilisation)")
print(f"run-phase floor         {floor:9.1f} s  (max of CPU/cores {case_cpu / cpus:.1f} s, longest server in sequence {serial:.1f} s); run phase / floor = {run / floor if floor else float('nan'):.2f}")
print(f"not testable / errors   {rep['summary'].get('not_testable', 0)} / {rep['summary']['errors']} cases")
PY
