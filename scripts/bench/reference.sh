#!/usr/bin/env bash
# Benchmark: the seed's 12 reference cases (node-1.30.0-{plain,timer,fixed,stubborn} x
# close, exit, crash) run concurrently by the harness. For each run it prints the run's wall
# time, the longest case's own time *measured in that same run* (its wall time less its
# queueing for a CPU token: start-up, ladder, clean-up), and their ratio: concurrency should
# make the run cost little more than its longest case (goal: <= 1.10 idle, <= 1.25 with two
# `yes` hogs).
# The CPU tokens are this run's own (MCP_SHUTDOWN_TOKEN_DIR empty) unless MCP_SHUTDOWN_TOKEN_DIR
# is set: machine-wide tokens would time whatever else on the machine holds them.
# Then the median of the runs, and the run's own time summary line (where the time went).
# Prints figures; asserts nothing.
# Usage: scripts/bench/reference.sh [RUNS]       (default 5; the median is reported)
#   HOGS=N           start N `yes` hogs for the runs (stopped at the end)
#   MCP_SHUTDOWN_BIN the binary to time (default: target/release/mcp-shutdown, built here)
#   FULL=1           also time the longest case alone, the reference procedure one case at
#                    a time (scripts/bench/reference-procedure.mjs) and the harness with --jobs 1
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
# shellcheck source=scripts/bench/seed-cases.sh
source scripts/bench/seed-cases.sh
export MCP_SHUTDOWN_TOKEN_DIR=${MCP_SHUTDOWN_TOKEN_DIR-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-ref.XXXXXX")
hogs=()
cleanup() { [[ ${#hogs[@]} -gt 0 ]] && kill "${hogs[@]}" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
"$bin" run "${args[@]}" >/dev/null 2>&1 || true # installs the fixture on first use
for _ in $(seq "${HOGS:-0}"); do yes >/dev/null & hogs+=($!); done

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "machine: $(nproc) CPUs, $(uname -sr), ${HOGS:-0} yes hog(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
walls=(); longs=(); ratios=()
for r in $(seq "$runs"); do
  t0=$(now); "$bin" run "${args[@]}" >"$tmp/run.json" 2>"$tmp/run.err" || true; t1=$(now)
  wall=$(( (t1 - t0) / 1000000 ))
  read -r long which < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
own = lambda x: x["wall_ms"] - (x.get("timing") or {}).get("token_wait_ms", 0)
x = max(r["results"], key=own)
print(round(own(x)), x["server"] + "/" + x["scenario"])' "$tmp/run.json")
  ratio=$(python3 -c "print(round($wall/$long, 2))")
  walls+=("$wall"); longs+=("$long"); ratios+=("$ratio")
  echo "run $r: ${wall} ms wall, longest case ${long} ms without its token queue ($which), ratio ${ratio}"
  grep -h '^mcp-shutdown: time:' "$tmp/run.err" | sed 's/^/  /' || true
done
echo "median of $runs: run $(printf '%s\n' "${walls[@]}" | median) ms, longest case $(printf '%s\n' "${longs[@]}" | median) ms, ratio $(printf '%s\n' "${ratios[@]}" | median)"
python3 - "$tmp/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("the last run's cases:")
for x in sorted(r["results"], key=lambda x: -x["wall_ms"]):
    t = x.get("timing") or {}
    ms = "-" if x["exit_ms"] is None else f'{x["exit_ms"]:.1f} ms'
    print(f'  {x["server"]:<22} {x["scenario"]:<6} {str(x["stage"]):<9} exit {ms:>10}   wall {x["wall_ms"]:6.0f} ms'
          f' = token queue {t.get("token_wait_ms", 0):5.0f} + start-up {t.get("startup_ms", 0):5.0f}'
          f' + ladder {t.get("grace_ms", 0):5.0f} + after {t.get("observe_ms", 0):4.0f} (token held {t.get("token_held_ms", 0):5.0f})')
PY
if [[ ${FULL:-0} == 1 ]]; then
  t0=$(now); "$bin" run --manifest conformance/servers/node-1.30.0-stubborn.toml --scenario close --format json >/dev/null 2>&1 || true; t1=$(now)
  echo "longest case (stubborn close) run alone:   $(( (t1 - t0) / 1000000 )) ms"
  t0=$(now); "$bin" run --jobs 1 "${args[@]}" >/dev/null 2>&1 || true; t1=$(now)
  echo "one at a time, the harness (--jobs 1):     $(( (t1 - t0) / 1000000 )) ms"
  echo "the reference procedure, one case at a time (scripts/bench/reference-procedure.mjs):"
  node scripts/bench/reference-procedure.mjs | sed 's/^/  /'
fi
