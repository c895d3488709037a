#!/usr/bin/env bash
# Benchmark of `--triage`: seconds per server for the triage set alone and for the census's
# full set (the default endings and every host profile), over the same servers, each run
# once; then what a census pays per server when a share of them need the full set. Prints,
# asserts nothing.
# Usage: scripts/bench/triage.sh [SERVER...]   (bundled server names; default four: a fixed
#   and a timer-holding TypeScript server, a fixed Go and a fixed Python one)
#   MCP_SHUTDOWN_BIN: the binary to time (default: a release build here).
set -euo pipefail
cd "$(dirname "$0")/../.."
servers=("$@")
[[ ${#servers[@]} -eq 0 ]] &&
  servers=(node-1.32.2-fixed node-1.32.2-timer go-sdk-1.8.0-fixed fastmcp-py-4.2.3-fixed)
if [[ -z ${MCP_SHUTDOWN_BIN:-} ]]; then
  cargo build --release -q
  bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
else
  bin=$MCP_SHUTDOWN_BIN
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-triage.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
args=(--no-baseline --format json)
for s in "${servers[@]}"; do args+=(--server "$s"); done
# The census's full set: the default endings and every host profile.
full=(--hosts)
# The triage set, from the catalogue (the one place it is written).
mapfile -t triage < <(python3 -c '
import tomllib
for t in tomllib.load(open("conformance/endings.toml", "rb"))["census"]["triage"]:
    print(t["scenario"])')
# Set-ups (installs, builds) once, before anything is timed: one ending, no host profiles.
"$bin" run "${args[@]}" --scenario close --output "$tmp/warm.json" >/dev/null 2>&1 || true
timed() { # name, then the run's own arguments
  local name=$1; shift
  local t0 t1
  t0=$(date +%s%N)
  "$bin" run "${args[@]}" "$@" --output "$tmp/$name.json" >/dev/null 2>"$tmp/$name.err" || true
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000)) >"$tmp/$name.ms"
}
only=(); for s in "${triage[@]}"; do only+=(--scenario "$s"); done
timed triage "${only[@]}"
timed full "${full[@]}"
timed triaged "${full[@]}" --triage
python3 - "$tmp" "${#servers[@]}" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, sys
tmp, n, cpus, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def get(name):
    rep = json.load(open(f"{tmp}/{name}.json"))
    ms = int(open(f"{tmp}/{name}.ms").read())
    return rep, ms / 1000
tri, t_tri = get("triage")
full, t_full = get("full")
mixed, t_mixed = get("triaged")
per = lambda rep: len(rep["results"]) / n
passes = {s: i.get("judged", {}).get("pass") for s, i in mixed["servers"].items()}
flagged = sum(p == "full" for p in passes.values())
print(f"{n} servers on {cpus} CPUs (load {load} at the end), each run once")
print(f"triage set only   {t_tri / n:6.1f} s per server  ({per(tri):.0f} cases each)")
print(f"full set          {t_full / n:6.1f} s per server  ({per(full):.0f} cases each)")
print(f"--triage          {t_mixed / n:6.1f} s per server  ({flagged} of {n} needed the full set: {passes})")
print(f"triage / full     {t_tri / t_full:6.0%}")
for share in (0.0, 0.25, 0.5, 1.0):
    cost = t_tri / n + share * (t_full - t_tri) / n
    print(f"  {share:4.0%} of servers flagged: {cost:5.1f} s per server")
PY
