#!/usr/bin/env bash
# Writes the book's results tables (docs/book/src/results.md) and the census leaderboard
# (docs/book/src/census.md) from reports, between their marker comments.
#
#   scripts/book/results.sh DIR          from the reports in DIR: matrix.json, profiles.json,
#                                        hosts.json, and census.json if there is one (a DIR
#                                        with census.json alone writes the census page only)
#   scripts/book/results.sh --run DIR    first make matrix/profiles/hosts.json by real runs of
#                                        the bundled suite into DIR (long: every fixture, every
#                                        ending; it also rewrites the bundled baseline), then
#                                        write the pages from them
#
# A census report comes from `mcp-shutdown census … --output DIR/census.json` (long too;
# see the book's census page). Only the reports are read: the pages can be written again from
# the same reports at any time, by anyone, with the same result.
set -euo pipefail
cd "$(dirname "$0")/../.."
run=false
if [ "${1:-}" = "--run" ]; then run=true; shift; fi
dir=${1:?usage: scripts/book/results.sh [--run] DIR}
mkdir -p "$dir"
cargo build --release -q
bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown

if $run; then
  # The same run writes the bundled suite's baseline, so the book and the baseline agree.
  "$bin" run --no-baseline --format json --write-baseline conformance/expected-failures.toml \
    >"$dir/matrix.json" || true
  ref=()
  for s in plain timer fixed stubborn; do ref+=(--manifest "conformance/servers/node-1.30.0-$s.toml"); done
  for p in close close:typescript close:python close:go close:rust close:java close:csharp; do ref+=(--scenario "$p"); done
  "$bin" run --no-baseline --format json "${ref[@]}" >"$dir/profiles.json" || true
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
  "$bin" run --no-baseline --hosts --format json "${hosts[@]}" >"$dir/hosts.json" || true
fi

# results.md from matrix/profiles/hosts.json; census.md's leaderboard and findings blocks from
# each census report (census-SUFFIX.json: the -SUFFIX blocks; the findings as
# `report render --format findings` words them).
"$bin" report book "$dir"
