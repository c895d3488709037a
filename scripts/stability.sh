#!/usr/bin/env bash
# Stability: runs the suite RUNS times back to back (optionally while the machine is busy),
# saves every JSON report, and prints each (server, scenario) whose stage or any check status
# was not the same in every run, then "N runs, K verdict flips" (K = such cases).
#
# Usage: scripts/stability.sh [RUNS] [--load[=build|yes]] [--out DIR] [RUN-ARGS...]
#        scripts/stability.sh --compare DIR          (re-read saved reports, run nothing)
#
#   RUNS            runs of the suite, default 20 (a run of the whole bundled suite takes
#                   about 4 minutes)
#   --load=build    while the runs go on, rebuild the Rust fixture (fixtures/rust-rmcp-3.11.0)
#                   in a loop, `cargo clean -p` then `cargo build --release`, in a target
#                   directory of its own (never the fixture's, which the suite runs from);
#                   `--load` alone means this. Falls back to `yes` if it cannot build.
#   --load=yes      one `yes > /dev/null` per CPU instead
#   --out DIR       where reports go (default target/stability/<date-time>)
#   RUN-ARGS        passed to `mcp-shutdown run`, e.g. --manifest conformance/hostile
#                   --scenario close --server NAME --jobs 8 (default: the bundled suite)
#
# The load is bounded (it stops by itself after RUNS x 10 minutes) and is killed by the
# script's trap on any exit. The exit code is 0 whatever flipped.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=20
load=""
out=""
compare=""
pass=()
if [[ ${1:-} =~ ^[0-9]+$ ]]; then runs=$1; shift; fi
while [ $# -gt 0 ]; do
  case "$1" in
    --load | --load=build) load=build ;;
    --load=yes) load=yes ;;
    --load=*) echo "$0: unknown load ${1#--load=} (build or yes)" >&2; exit 2 ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    --out=*) out=${1#--out=} ;;
    --compare) compare=${2:?--compare needs a directory}; shift ;;
    --format | --format=* | --output | --output=*)
      echo "$0: $1 is set by this script" >&2; exit 2 ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) pass+=("$1") ;;
  esac
  shift
done
if [ "$runs" -lt 1 ]; then echo "$0: RUNS must be at least 1" >&2; exit 2; fi

# Prints the flips between the reports run-*.json in a directory.
compare_reports() {
  python3 - "$1" <<'PY'
import glob, json, os, sys
from collections import Counter

d = sys.argv[1]
files = sorted(glob.glob(os.path.join(d, "run-*.json")))
runs, bad = [], []
for f in files:
    try:
        runs.append((os.path.basename(f), json.load(open(f))))
    except Exception as e:
        bad.append(f"{os.path.basename(f)}: not a report ({e.__class__.__name__})")
for b in bad:
    print(f"skipped {b}")

def stage(r):
    if r.get("stage") is not None:
        return r["stage"]
    e = r.get("error") or {}
    return f"error:{e.get('kind', '?')}"

cases = {}  # (server, scenario) -> run index -> result
order = []
for i, (_, rep) in enumerate(runs):
    for r in rep.get("results", []):
        k = (r["server"], r["scenario"])
        if k not in cases:
            cases[k] = {}
            order.append(k)
        cases[k][i] = r

def fmt_ms(x):
    return "-" if x is None else f"{x:.0f}"

def spread(values):
    """'a x3 (runs 1,2,4) | b x1 (run 3)', most common first."""
    c = Counter(values)
    parts = []
    for v, n in c.most_common():
        where = [labels[i] for i, x in enumerate(values) if x == v]
        parts.append(f"{v} x{n} (run{'s' if n > 1 else ''} {','.join(where)})")
    return " | ".join(parts)

flips = 0
n = len(runs)
labels = [name[len("run-"):-len(".json")].lstrip("0") or "0" for name, _ in runs]
for k in order:
    per = [cases[k].get(i) for i in range(n)]
    stages = [stage(r) if r else "missing" for r in per]
    ids = sorted({c["id"] for r in per if r for c in r.get("checks", [])})
    checks = {
        cid: [next((c["status"] for c in (r or {}).get("checks", []) if c["id"] == cid), "missing") for r in per]
        for cid in ids
    }
    changed = len(set(stages)) > 1 or any(len(set(v)) > 1 for v in checks.values())
    if not changed:
        continue
    flips += 1
    print(f"{k[0]} {k[1]}")
    if len(set(stages)) > 1:
        print(f"  stage: {spread(stages)}")
    for cid, v in checks.items():
        if len(set(v)) > 1:
            print(f"  {cid}: {spread(v)}")
    print(f"  exit_ms by run: {' '.join(fmt_ms(r.get('exit_ms')) if r else '?' for r in per)}")
print(f"{n} runs, {flips} verdict flips ({len(order)} cases compared; reports in {d})")
PY
}

if [ -n "$compare" ]; then
  compare_reports "$compare"
  exit 0
fi

cargo build --release -q
bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
out=${out:-target/stability/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/stability.XXXXXX")
load_pgid=""
run_pid=""

stop_load() {
  if [ -n "$load_pgid" ]; then
    kill -TERM -- "-$load_pgid" 2>/dev/null || true
    sleep 0.2
    kill -KILL -- "-$load_pgid" 2>/dev/null || true
    wait "$load_pgid" 2>/dev/null || true
    load_pgid=""
  fi
}
cleanup() {
  if [ -n "$run_pid" ]; then
    # The harness stops every case's tree on SIGTERM, then exits.
    kill -TERM "$run_pid" 2>/dev/null || true
    wait "$run_pid" 2>/dev/null || true
  fi
  stop_load
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM HUP

# The load runs under `timeout`, which puts itself in a process group of its own (so the
# group id is its pid) and ends the group after the bound; one kill of the group ends the
# load and everything it started.
bound_s=$((runs * 600))
start_load() {
  local kind=$1
  if [ "$kind" = build ]; then
    local fixture=fixtures/rust-rmcp-3.11.0
    local cargo_args=(--release --locked --manifest-path "$fixture/Cargo.toml" --target-dir "$scratch/load-target")
    if ! command -v cargo >/dev/null || ! cargo fetch --locked --manifest-path "$fixture/Cargo.toml" \
      --target "$(rustc -vV | sed -n 's/^host: //p')" >"$out/load.log" 2>&1; then
      echo "load: cannot build $fixture (see $out/load.log); using yes instead" >&2
      kind=yes
    else
      timeout --kill-after=5 "$bound_s" bash -c '
        while :; do
          cargo clean -p rmcp-shutdown-fixture "$@" >/dev/null 2>&1 || true
          cargo build "$@" >/dev/null 2>&1 || sleep 5
        done' load "${cargo_args[@]}" >>"$out/load.log" 2>&1 &
      load_pgid=$!
      echo "load: rebuilding $fixture in a loop (process group $load_pgid)"
    fi
  fi
  if [ "$kind" = yes ]; then
    timeout --kill-after=5 "$bound_s" bash -c '
      for _ in $(seq "$1"); do yes >/dev/null & done
      wait' load "$(nproc)" &
    load_pgid=$!
    echo "load: $(nproc) x yes (process group $load_pgid)"
  fi
  sleep 1
}

echo "machine: $(nproc) CPUs, $(uname -sr); $runs run(s) of: mcp-shutdown run ${pass[*]:-(bundled suite)}"
[ -n "$load" ] && start_load "$load"

for i in $(seq "$runs"); do
  f=$(printf '%s/run-%02d.json' "$out" "$i")
  t0=$(date +%s%N)
  rc=0
  # In the background, so that a signal to this script is handled at once (see cleanup).
  "$bin" run --format json "${pass[@]}" >"$f" 2>"${f%.json}.stderr" &
  run_pid=$!
  wait "$run_pid" || rc=$?
  run_pid=""
  t1=$(date +%s%N)
  summary=$(python3 - "$f" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))["summary"]
    print(f"{s['cases']} cases, {s['success']} success, {s['failure']} failure, "
          f"{s['warning']} warning, {s['errors']} could not run")
except Exception as e:
    print(f"no report ({e.__class__.__name__})")
PY
  )
  echo "run $i/$runs: exit $rc, $(((t1 - t0) / 1000000)) ms: $summary"
  if [ "$rc" -eq 130 ]; then exit 130; fi
done
stop_load
echo
compare_reports "$out"
