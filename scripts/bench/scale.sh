#!/usr/bin/env bash
# Benchmark: a scale run — every hostile fixture and the four reference Node servers under all
# seven endings (147 server launches) — with wall time, the harness's peak memory, the largest
# supervisor's peak memory, and the most processes of the run alive at once. Prints figures.
# Usage: scripts/bench/scale.sh [JOBS]   (default 16)
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs=${1:-16}
cargo build --release -q
bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
args=(--manifest conformance/hostile)
for s in plain timer fixed stubborn; do args+=(--manifest "conformance/servers/node-1.30.0-$s.toml"); done
"$bin" run "${args[@]}" --scenario close --format json >/dev/null 2>&1 || true # setup, warm caches

mark="bench-scale-$$"
out=$(mktemp); samples=$(mktemp)
trap 'rm -f "$out" "$samples"' EXIT
t0=$(date +%s%N)
MCP_SHUTDOWN_BENCH_MARK=$mark "$bin" run "${args[@]}" --jobs "$jobs" --format json >"$out" 2>/dev/null &
harness=$!
# Sample every 100 ms: processes carrying the mark (all of the run's), and peak RSS.
while kill -0 "$harness" 2>/dev/null; do
  python3 - "$mark" "$harness" >>"$samples" <<'PY' || true
import os, sys
mark, harness = ("MCP_SHUTDOWN_BENCH_MARK=" + sys.argv[1]).encode(), sys.argv[2]
n, sup = 0, 0
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        if mark not in open(f"/proc/{p}/environ", "rb").read().split(b"\0"):
            continue
        n += 1
        status = open(f"/proc/{p}/status").read()
        if b"__case" in open(f"/proc/{p}/cmdline", "rb").read():
            hwm = int(next(l.split()[1] for l in status.splitlines() if l.startswith("VmHWM")))
            sup = max(sup, hwm)
    except (OSError, StopIteration):
        pass
try:
    h = int(next(l.split()[1] for l in open(f"/proc/{harness}/status").read().splitlines() if l.startswith("VmHWM")))
except (OSError, StopIteration):
    h = 0
print(n, h, sup)
PY
  sleep 0.1
done
wait "$harness" || true
t1=$(date +%s%N)
python3 - "$out" "$samples" "$(( (t1 - t0) / 1000000 ))" "$jobs" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rows = [tuple(map(int, l.split())) for l in open(sys.argv[2]) if l.strip()]
wall, jobs = int(sys.argv[3]), sys.argv[4]
print(f"machine: {r['host']['cpus']} CPUs, Linux {r['host']['kernel']}; --jobs {jobs}")
print(f"server launches:                 {r['summary']['cases']}")
print(f"wall time:                       {wall} ms")
print(f"sum of the cases' own times:     {sum(x['wall_ms'] for x in r['results']) / 1000:.1f} s")
print(f"harness peak RSS (VmHWM):        {max((x[1] for x in rows), default=0) / 1024:.1f} MiB")
print(f"largest supervisor peak RSS:     {max((x[2] for x in rows), default=0) / 1024:.1f} MiB")
print(f"most processes of the run alive: {max((x[0] for x in rows), default=0)}")
print(f"cases that could not run:        {r['summary']['errors']} (hostile fixtures include a missing command, a crash and a silent server)")
PY
