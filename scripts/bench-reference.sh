#!/usr/bin/env bash
# Benchmark: the ten reference Node cases (rows A-J of the reference measurement) run
# concurrently by the harness, against
#   - the longest single case (stubborn `close`: both grace periods) run alone,
#   - the same ten cases one at a time the reference way (scripts/reference-procedure.mjs:
#     the SDK's own client, each case checked a fixed 4 s after the client ended),
#   - the same ten cases one at a time by the harness (`--jobs 1`).
# Prints figures; asserts nothing.
# Usage: scripts/bench-reference.sh [RUNS]   (default 5; the median is reported)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
cargo build --release -q
bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
args=()
for s in plain timer fixed stubborn; do args+=(--manifest "conformance/servers/node-1.30.0-$s.toml"); done
for s in plain timer fixed; do
  for e in close exit crash; do args+=(--case "node-1.30.0-$s/$e"); done
done
args+=(--case node-1.30.0-stubborn/close --format json --no-baseline)
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
echo "the reference procedure, one case at a time (scripts/reference-procedure.mjs):"
node scripts/reference-procedure.mjs | tee /tmp/bench-ref-procedure.txt | sed 's/^/  /'
ref_ms=$(awk '/^total_ms/ {print $2}' /tmp/bench-ref-procedure.txt)
wall=$(printf '%s\n' "${walls[@]}" | median)
long=$(printf '%s\n' "${longest[@]}" | median)
echo "machine: $(nproc) CPUs, $(uname -sr)"
echo "concurrent run, 10 cases (median of $runs):  ${wall} ms   [runs: ${walls[*]}]"
echo "longest single case, run alone (median):   ${long} ms"
echo "ratio concurrent / longest case:           $(python3 -c "print(round($wall/$long, 2))")"
echo "one at a time, the reference procedure:    ${ref_ms} ms -> concurrent is $(python3 -c "print(round($ref_ms/$wall, 1))")x faster"
echo "one at a time, the harness (--jobs 1):     ${seq_ms} ms -> concurrent is $(python3 -c "print(round($seq_ms/$wall, 1))")x faster"
echo "  (--jobs 1 already ends each case the moment its server exits, so it is bounded below by"
echo "   the sum of the cases' own waits; no schedule can beat it by more than sum/longest.)"
python3 - <<'PY'
import json
r = json.load(open("/tmp/bench-ref.json"))
for x in r["results"]:
    ms = "-" if x["exit_ms"] is None else f'{x["exit_ms"]:.1f} ms'
    print(f'  {x["server"]:<22} {x["scenario"]:<6} {str(x["stage"]):<9} exit {ms:>10}   case wall {x["wall_ms"]:.0f} ms (incl. queueing for a CPU token)')
PY
