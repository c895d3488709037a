#!/usr/bin/env bash
# Stability: runs the suite with --repeat REPEAT, once on a quiet machine and once while the
# machine is busy, saves both JSON reports, and prints (scripts/stability/compare.py):
# - each case whose repeated runs disagreed (flaky), and whether that came from the server
#   (its own timing), from load the run-queue accounting failed to absorb, or from the
#   harness (cases that could not run for the harness's reasons);
# - each case whose verdict differs between the quiet and the busy run (a load flip: a
#   harness bug), then the totals.
#
# Usage: scripts/stability/run.sh [REPEAT] [--load=yes|build|none] [--out DIR] [RUN-ARGS...]
#        scripts/stability/run.sh --compare DIR          (re-read saved reports, run nothing)
#
#   REPEAT          runs of every case, default 5 (the bundled suite once takes ~5 minutes
#                   on 2 CPUs; --repeat costs little more than REPEAT x that / concurrency)
#   --load=yes      the busy run has one `yes > /dev/null` per CPU (default)
#   --load=build    ...or rebuilds the Rust fixture (fixtures/rust-rmcp-3.11.0) in a loop,
#                   in a target directory of its own; falls back to `yes` if it cannot build
#   --load=none     only the quiet run
#   --out DIR       where reports go (default target/stability/<date-time>)
#   RUN-ARGS        passed to `mcp-shutdown run`, e.g. --manifest conformance/hostile
#                   --scenario close --server NAME --jobs 8 (default: the bundled suite)
#
# The load is bounded (it stops by itself after an hour per run) and is killed by the
# script's trap on any exit. The exit code is 0 whatever it finds.
set -euo pipefail
cd "$(dirname "$0")/../.."

runs=5
load=yes
out=""
compare=""
pass=()
if [[ ${1:-} =~ ^[0-9]+$ ]]; then runs=$1; shift; fi
while [ $# -gt 0 ]; do
  case "$1" in
    --load | --load=build) load=build ;;
    --load=yes) load=yes ;;
    --load=none) load="" ;;
    --load=*) echo "$0: unknown load ${1#--load=} (yes, build or none)" >&2; exit 2 ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    --out=*) out=${1#--out=} ;;
    --compare) compare=${2:?--compare needs a directory}; shift ;;
    --format | --format=* | --output | --output=* | --repeat | --repeat=*)
      echo "$0: $1 is set by this script" >&2; exit 2 ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) pass+=("$1") ;;
  esac
  shift
done
if [ "$runs" -lt 1 ]; then echo "$0: REPEAT must be at least 1" >&2; exit 2; fi

compare_reports() {
  python3 scripts/stability/compare.py "$1"
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
bound_s=$((2 * 3600))
start_load() {
  local kind=$1
  if [ "$kind" = build ]; then
    local fixture=fixtures/rust-rmcp-3.11.0
    # Its manifest is Cargo.toml.in (a Cargo.toml would make it a nested package that `cargo
    # package` leaves out): build a copy, as its setup.sh does.
    mkdir -p "$scratch/load-crate"
    cp -R "$fixture/src" "$fixture/Cargo.lock" "$scratch/load-crate/"
    cp "$fixture/Cargo.toml.in" "$scratch/load-crate/Cargo.toml"
    local cargo_args=(--release --locked --manifest-path "$scratch/load-crate/Cargo.toml" --target-dir "$scratch/load-target")
    if ! command -v cargo >/dev/null || ! cargo fetch --locked --manifest-path "$scratch/load-crate/Cargo.toml" \
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

echo "machine: $(nproc) CPUs, $(uname -sr); mcp-shutdown run --repeat $runs ${pass[*]:-(bundled suite)}"

# One run of the suite with --repeat into $out/$1.json.
run_once() {
  local f="$out/$1.json" rc=0 t0 t1
  t0=$(date +%s%N)
  # In the background, so that a signal to this script is handled at once (see cleanup).
  "$bin" run --repeat "$runs" --no-baseline --format json "${pass[@]}" >"$f" 2>"${f%.json}.stderr" &
  run_pid=$!
  wait "$run_pid" || rc=$?
  run_pid=""
  t1=$(date +%s%N)
  echo "$1: exit $rc, $(((t1 - t0) / 1000000)) ms, load average $(cut -d' ' -f1 /proc/loadavg)"
  if [ "$rc" -eq 130 ]; then exit 130; fi
}

run_once unloaded
if [ -n "$load" ]; then
  start_load "$load"
  run_once loaded
  stop_load
fi
echo
compare_reports "$out"
