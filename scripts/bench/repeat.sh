#!/usr/bin/env bash
# Benchmark: --repeat over the reference Node servers (node-1.30.0 plain, timer, fixed,
# stubborn under the close, exit and crash endings). Prints the wall time of the whole run
# against what it cannot beat: max(the longest single run, all runs' wall time divided by
# the concurrency) with the concurrency min(--jobs, cases x N). Asserts nothing.
# Usage: scripts/bench/repeat.sh [N] [JOBS]   (default 10 and 16)
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-10}
jobs=${2:-16}
cargo build --release -q
bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
args=()
for s in plain timer fixed stubborn; do args+=(--manifest "conformance/servers/node-1.30.0-$s.toml"); done
args+=(--scenario close --scenario exit --scenario crash --no-baseline --format json --jobs "$jobs")
"$bin" run "${args[@]}" >/dev/null || true # installs the fixtures on first use
out=$(mktemp "${TMPDIR:-/tmp}/bench-repeat.XXXXXX.json")
trap 'rm -f "$out"' EXIT
t0=$(date +%s%N)
"$bin" run "${args[@]}" --repeat "$n" >"$out" || true
t1=$(date +%s%N)
python3 - "$out" "$(((t1 - t0) / 1000000))" "$n" "$jobs" "$(nproc)" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
wall, n, jobs, cpus = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
runs = [r for c in rep["results"] for r in (c.get("repeat") or {}).get("runs", [])]
walls = [r["wall_ms"] for r in runs]
longest = max(walls)
conc = min(jobs, len(runs))
bound = max(longest, sum(walls) / conc)
flaky = sum(1 for c in rep["results"] if (c.get("repeat") or {}).get("flaky"))
print(f"{len(rep['results'])} cases x {n} runs = {len(runs)} launches on {cpus} CPUs, --jobs {jobs}")
print(f"longest single run      {longest:8.0f} ms")
print(f"sum of all runs         {sum(walls):8.0f} ms")
print(f"bound max(longest, sum/{conc}) {bound:8.0f} ms")
print(f"observed wall           {wall:8.0f} ms  ({wall / bound:.2f}x the bound; longest x {n} / {conc} = {longest * n / conc:.0f} ms)")
print(f"flaky cases             {flaky}")
PY
