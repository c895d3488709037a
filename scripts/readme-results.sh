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
# The reference shapes, every SDK's background-work and fixed shapes, the published servers.
for s in node-1.30.0-plain node-1.30.0-stubborn \
    node-1.30.0-{timer,fixed} node-server-2.4.0-{timer,fixed} fastmcp-ts-4.20.16-{timer,fixed} \
    python-mcp-2.3.0-{plain,thread,fixed} fastmcp-py-4.2.3-{thread,fixed} \
    java-sdk-2.1.0-{executor,fixed} kotlin-sdk-0.16.0-{ticker,fixed} \
    go-sdk-1.8.0-{lingering,fixed} rust-rmcp-3.11.0-{lingering,fixed} \
    published-server-{everything,filesystem,memory,sequential-thinking}-2026.8.31 \
    published-mcp-server-{time,git}-2026.10.19 published-mcp-server-fetch-2026.10.24; do
  hosts+=(--manifest "conformance/servers/$s.toml")
done
"$bin" run --no-baseline --hosts --format markdown "${hosts[@]}" >"$out/hosts.md" || true
python3 scripts/readme_tables.py "$out/matrix.json" "$out/profiles.json" "$out/hosts.md" README.md
echo "README.md results updated"
