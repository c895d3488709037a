#!/usr/bin/env bash
# One host × all its quit paths × 3 repeats, warm: prints the wall time (goal ≤ 120 s) and
# checks that a second identical measurement installs nothing.
#   scripts/bench/host-measure.sh [HOST]      (default: claude-code)
set -euo pipefail
host="${1:-claude-code}"
cd "$(dirname "$0")/../.."
cargo build --quiet --release
bin=target/release/mcp-shutdown
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# First run: installs if the cache lacks the release.
"$bin" host measure "$host" --repeats 3 >"$out/1.toml" 2>"$out/1.err"
start=$(date +%s.%N)
"$bin" host measure "$host" --repeats 3 >"$out/2.toml" 2>"$out/2.err"
end=$(date +%s.%N)
wall=$(echo "$end - $start" | bc)
grep -E '^[^ ].*: (installed|cached)' "$out/2.err" || true
if grep -q ': installed$' "$out/2.err"; then
  echo "second run installed something: FAIL"
else
  echo "second run installed nothing: ok"
fi
grep -E 'paths × [0-9]+ repeats in' "$out/2.err"
printf '%s: all quit paths × 3 repeats, warm: %.1f s (goal ≤ 120 s)\n' "$host" "$wall"
grep -c 'reproduces = false' "$out/2.toml" | xargs printf 'profiles whose waits spread wider than ±50 ms / ±10 %%: %s\n' || true
