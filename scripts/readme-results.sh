#!/usr/bin/env bash
# Regenerates the README's results tables from real runs of the bundled suite.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$bin" run --no-baseline --format json >"$tmp/matrix.json" || true
ref=()
for s in plain timer fixed stubborn; do ref+=(--manifest "conformance/servers/node-1.30.0-$s.toml"); done
for p in close close:typescript close:python close:go close:rust close:java close:csharp; do ref+=(--scenario "$p"); done
"$bin" run --no-baseline --format json "${ref[@]}" >"$tmp/profiles.json" || true
python3 scripts/readme_tables.py "$tmp/matrix.json" "$tmp/profiles.json" README.md
echo "README.md results updated"
