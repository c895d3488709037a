#!/usr/bin/env bash
# Regenerates the README's results tables from real runs of the bundled suite.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# RESULTS_KEEP=DIR keeps the three reports there.
out=${RESULTS_KEEP:-$tmp}; mkdir -p "$out"
# The same run writes the bundled suite's baseline, so README and baseline agree.
"$bin" run --no-baseline --format json --write-baseline conformance/expected-failures.toml \
  >"$out/matrix.json" || true
ref=()
for s in plain timer fixed stubborn; do ref+=(--manifest "conformance/servers/node-1.30.0-$s.toml"); done
for p in close close:typescript close:python close:go close:rust close:java close:csharp; do ref+=(--scenario "$p"); done
"$bin" run --no-baseline --format json "${ref[@]}" >"$out/profiles.json" || true
hosts=()
for s in node-1.30.0-plain node-1.30.0-timer node-1.30.0-stubborn python-mcp-1.30.0-plain \
    published-server-filesystem-2026.8.31 published-server-memory-2026.8.31 \
    published-mcp-server-time-2026.10.19 published-mcp-server-fetch-2026.10.24; do
  hosts+=(--manifest "conformance/servers/$s.toml")
done
"$bin" run --no-baseline --hosts --format markdown "${hosts[@]}" >"$out/hosts.md" || true
python3 scripts/readme_tables.py "$out/matrix.json" "$out/profiles.json" "$out/hosts.md" README.md
echo "README.md results updated"
