#!/usr/bin/env bash
# Benchmark: the reference Node cases (rows A-J of the reference measurement, plus the
# stubborn server's exit and crash: 12 cases) run concurrently, against the longest single
# case and against the same cases one at a time. Prints figures; asserts nothing.
# Usage: scripts/bench-reference.sh [RUNS]   (default 5; the median is reported)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
cargo build --release -q
bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
args=()
for s in plain timer fixed stubborn; do args+=(--manifest "conformance/servers/node-1.30.0-$s.toml"); done
args+=(--scenario close --scenario exit --scenario crash --format json)
"$bin" run "${args[@]}" >/dev/null || true # installs the fixture on first use

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
walls=(); longest=()
for _ in $(seq "$runs"); do
  t0=$(now); "$bin" run "${args[@]}" >/tmp/bench-ref.json || true; t1=$(now)
  walls+=("$(( (t1 - t0) / 1000000 ))")
  # The longest case (stubborn, close: both grace periods) run alone, start to finish.
  t0=$(now); "$bin" run --manifest conformance/servers/node-1.30.0-stubborn.toml --scenario close --format json >/dev/null || true; t1=$(now)
  longest+=("$(( (t1 - t0) / 1000000 ))")
done
t0=$(now); "$bin" run --jobs 1 "${args[@]}" >/tmp/bench-ref-seq.json || true; t1=$(now)
seq_ms=$(( (t1 - t0) / 1000000 ))
wall=$(printf '%s\n' "${walls[@]}" | median)
long=$(printf '%s\n' "${longest[@]}" | median)
echo "machine: $(nproc) CPUs, $(uname -sr)"
echo "concurrent run, 12 cases (median of $runs): ${wall} ms   [runs: ${walls[*]}]"
echo "longest single case, run alone (median):  ${long} ms"
echo "ratio concurrent / longest case:          $(python3 -c "print(round($wall/$long, 2))")"
echo "same cases one at a time (--jobs 1):      ${seq_ms} ms"
echo "speed-up over one at a time:              $(python3 -c "print(round($seq_ms/$wall, 1))")x"
python3 - <<'PY'
import json
r = json.load(open("/tmp/bench-ref.json"))
for x in r["results"]:
    ms = "-" if x["exit_ms"] is None else f'{x["exit_ms"]:.1f} ms'
    print(f'  {x["server"]:<22} {x["scenario"]:<6} {str(x["stage"]):<9} exit {ms:>10}   case wall {x["wall_ms"]:.0f} ms (incl. queueing for a CPU token)')
PY
