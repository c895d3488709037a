#!/usr/bin/env bash
# Benchmark: two runs sharing a machine. The seed's 12 reference cases (node-1.30.0-{plain,
# timer,fixed,stubborn} x close, exit, crash) alone, then with a second `mcp-shutdown run`
# of the same cases going on beside them the whole time; both runs use one machine-wide token
# directory, as two runs of one user do. Prints each run's wall time, the medians and the
# ratio beside/alone (goal: <= 1.5: each run gets its fair share of the CPU tokens and never
# waits for the other's whole queue), with the load. Prints figures; asserts nothing.
# Usage: scripts/bench/share.sh [RUNS]          (default 3; the medians are reported)
#   MCP_SHUTDOWN_BIN the binary to time (default: target/release/mcp-shutdown, built here)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
# shellcheck source=scripts/bench/seed-cases.sh
source scripts/bench/seed-cases.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-share.XXXXXX")
export MCP_SHUTDOWN_TOKEN_DIR=$tmp/tokens
other=
cleanup() {
  if [[ -n $other ]]; then
    # The loop and the run it has going: its process group (setsid made it the leader).
    kill -TERM -- "-$other" 2>/dev/null || true
    wait "$other" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
"$bin" run "${args[@]}" >/dev/null 2>&1 || true # installs the fixture on first use

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
# Runs the 12 cases RUNS times; prints each wall time (ms) on stdout, the lines on stderr.
time_runs() {
  local label=$1
  for r in $(seq "$runs"); do
    local t0 t1
    t0=$(now); "$bin" run "${args[@]}" >"$tmp/run.json" 2>"$tmp/run.err" || true; t1=$(now)
    echo "$label run $r: $(( (t1 - t0) / 1000000 )) ms wall (load $(load))" >&2
    grep -h '^mcp-shutdown: time:' "$tmp/run.err" | sed 's/^/  /' >&2 || true
    echo $(( (t1 - t0) / 1000000 ))
  done
}
echo "machine: $(nproc) CPUs, $(uname -sr), load $(load)"
alone=$(time_runs alone | median)
# The second run: the same cases, over and over, for as long as the timed runs take.
setsid bash -c 'while :; do "$0" run "${@}" >/dev/null 2>&1 || true; done' "$bin" "${args[@]}" &
other=$!
sleep 1
beside=$(time_runs beside | median)
echo "median of $runs: alone ${alone} ms, beside a second run ${beside} ms, ratio $(python3 -c "print(round($beside/$alone, 2))")"
