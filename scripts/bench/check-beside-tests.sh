#!/usr/bin/env bash
# Benchmark: a server author's `check` beside the suite's own `cargo test`. `mcp-shutdown
# check` of one healthy server (the bundled Node 1.30.0 `fixed` server, the 9 default
# endings) alone, then with `cargo test --test conformance` running beside it the whole time
# (both on the machine-wide CPU tokens, as on a developer's laptop). Prints each check's wall
# time, the medians and the ratio beside/alone (goal: <= 2), with the load. Asserts nothing.
# Usage: scripts/bench/check-beside-tests.sh [RUNS]   (default 3; the medians are reported)
#   MCP_SHUTDOWN_BIN the binary to time (default: target/release/mcp-shutdown, built here)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
if [[ -z ${MCP_SHUTDOWN_BIN:-} ]]; then
  cargo build --release -q
  bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
else
  bin=$MCP_SHUTDOWN_BIN
fi
# The test binary is built before anything is timed, so the load beside is the tests' own.
cargo test --test conformance --no-run -q 2>/dev/null
"$bin" run --server node-1.30.0-fixed --scenario close >/dev/null 2>&1 || true # installs it
server=(node fixtures/node-sdk-1.30.0/fixed.mjs)
other=
cleanup() {
  if [[ -n $other ]]; then
    # cargo test and every server it has going: its process group (setsid made it leader).
    kill -TERM -- "-$other" 2>/dev/null || true
    wait "$other" 2>/dev/null || true
  fi
}
trap cleanup EXIT

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
time_checks() {
  local label=$1
  for r in $(seq "$runs"); do
    local t0 t1
    t0=$(now); "$bin" check --format json -- "${server[@]}" >/dev/null 2>&1 || true; t1=$(now)
    echo "$label check $r: $(( (t1 - t0) / 1000000 )) ms wall (load $(load))" >&2
    echo $(( (t1 - t0) / 1000000 ))
  done
}
echo "machine: $(nproc) CPUs, $(uname -sr), load $(load)"
alone=$(time_checks alone | median)
setsid cargo test --test conformance -q >/dev/null 2>&1 &
other=$!
sleep 5 # past the test binary's start, into its cases
beside=$(time_checks beside | median)
echo "median of $runs: alone ${alone} ms, beside cargo test ${beside} ms, ratio $(python3 -c "print(round($beside/$alone, 2))")"
