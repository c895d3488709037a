#!/usr/bin/env bash
# Benchmark: how precisely does the harness time an exit? Runs the `close` scenario against
# fixtures/bench/exit_clock.py (conformance/bench/exit-clock.toml) RUNS times, idle and then
# under load, and compares the harness's exit_ms with the server's own clock.
#
# The server records CLOCK_MONOTONIC when its stdin read returns EOF and immediately before
# os._exit(0); the report carries the harness's raw trigger_ns and exit_ns on the same clock.
#   ERROR = exit_ns (pidfd readiness seen by the harness) - the server's pre-exit reading
# is the measurement error (it includes the kernel's teardown of the exiting process);
#   trigger -> EOF = the server's wake-up after the harness closed its stdin.
# Prints figures; asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-30}
load_procs=${LOAD_PROCS:-2}
case "$runs" in '' | *[!0-9]* | 0) echo "usage: $0 [RUNS]" >&2; exit 2 ;; esac

# MCP_SHUTDOWN_BIN: the binary to time (default: target/release/mcp-shutdown, built here).
if [[ -z ${MCP_SHUTDOWN_BIN:-} ]]; then
  cargo build --release -q
  bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
else
  bin=$MCP_SHUTDOWN_BIN
fi
manifest=conformance/bench/exit-clock.toml
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-precision.XXXXXX")
load_pids=()

stop_load() {
  local p
  for p in "${load_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${load_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  load_pids=()
}
cleanup() {
  stop_load
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# One pass of RUNS cases; each run gets a fresh EXIT_CLOCK_FILE, set on the harness's
# environment (servers inherit it). Appends "exit_ms server_ms" per usable run to LABEL.tsv,
# or "skip: why".
measure() {
  local label=$1 i clock out
  : >"$work/$label.tsv"
  for i in $(seq "$runs"); do
    clock="$work/$label-$i.clock"
    out="$work/$label-$i.json"
    EXIT_CLOCK_FILE=$clock "$bin" run --manifest "$manifest" --scenario close --format json >"$out" 2>"$out.err" || true
    python3 - "$out" "$clock" >>"$work/$label.tsv" <<'PY'
import json, sys
out, clock = sys.argv[1], sys.argv[2]
try:
    r = json.load(open(out))["results"][0]
except Exception as e:
    print(f"skip: no report ({e})"); sys.exit()
if r.get("error") or r.get("stage") != "eof" or r.get("exit_ms") is None:
    print(f"skip: stage {r.get('stage')}, error {r.get('error')}"); sys.exit()
try:
    eof_ns, exit_ns = map(int, open(clock).read().split())
except Exception as e:
    print(f"skip: no server clock ({e})"); sys.exit()
# Error of the harness's exit time against the server's own clock right before _exit, and
# the delay from the trigger (closing stdin) to the server noticing EOF.
print(f"{r['exit_ms']} {(exit_ns - eof_ns) / 1e6} {(r['exit_ns'] - exit_ns) / 1e6} {(eof_ns - r['trigger_ns']) / 1e6}")
PY
  done
}

echo "machine: $(nproc) CPUs, $(uname -sr); $runs runs per pass"
# Warm-up (page cache, Python's first start); not measured.
EXIT_CLOCK_FILE="$work/warmup.clock" "$bin" run --manifest "$manifest" --scenario close --format json >/dev/null 2>&1 || true

measure idle

for _ in $(seq "$load_procs"); do
  yes >/dev/null &
  load_pids+=("$!")
done
sleep 0.5 # let the load settle on the CPUs
measure loaded
stop_load

python3 - "$work" "$load_procs" <<'PY'
import math, sys
work, procs = sys.argv[1], sys.argv[2]

def stats(xs):
    s = sorted(xs)
    n = len(s)
    med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    p95 = s[max(0, math.ceil(0.95 * n) - 1)]  # nearest rank
    return f"median {med:8.3f}   p95 {p95:8.3f}   max {s[-1]:8.3f}   min {s[0]:8.3f}"

for label, title in (("idle", "unloaded"), ("loaded", f"loaded ({procs} x `yes > /dev/null`)")):
    rows, skips = [], []
    for line in open(f"{work}/{label}.tsv"):
        if line.startswith("skip:"):
            skips.append(line.strip())
        else:
            h, s, err, wake = map(float, line.split())
            rows.append((h, s, h - s, err, wake))
    print(f"\n{title}: {len(rows)} usable runs" + (f", {len(skips)} skipped" if skips else ""))
    for s in sorted(set(skips)):
        print(f"  {s}")
    if not rows:
        continue
    print(f"  harness exit_ms (trigger -> exit seen), ms:         {stats([r[0] for r in rows])}")
    print(f"  server-side EOF -> os._exit, ms:                    {stats([r[1] for r in rows])}")
    print(f"  overhead = exit_ms - server-side, ms:               {stats([r[2] for r in rows])}")
    print(f"  ERROR: harness exit time - server's pre-exit clock: {stats([r[3] for r in rows])}")
    print(f"  trigger -> server sees EOF (its wake-up), ms:       {stats([r[4] for r in rows])}")
PY
