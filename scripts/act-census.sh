#!/usr/bin/env bash
# Runs the reusable census workflow (.github/workflows/census.yml) end to end on a real
# Actions engine, nektos/act, in its host mode (`-P ubuntu-latest=-self-hosted`: the jobs'
# steps run on this machine, no Docker): packaging/census/act/e2e.yml calls it over the stored
# small listing in 4 shards, merged into one site, with actionlint over the workflows first.
# GitHub's artifact actions cannot be fetched here: act replaces them with the local
# stand-ins (--local-repository), which keep the artifacts in $MCP_SHUTDOWN_ACT_ARTIFACTS.
#
#   scripts/act-census.sh [LOG]     the act run's output goes to LOG too (default: stdout only)
#
# Environment:
#   MCP_SHUTDOWN_BIN            the binary under test (default: target/release/mcp-shutdown, built)
#   MCP_SHUTDOWN_ACT_ARTIFACTS  where the artifacts go, kept (default: a temp dir, removed);
#                               the merged report is census-site/report.json there
#   MCP_SHUTDOWN_CENSUS_CACHE   the census's install cache (default: target/census-cache)
#   ACT, ACTIONLINT             the tools, as scripts/go-tools.sh finds or installs them
# Exits with act's status: 0 when every job did what e2e.yml expects.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
log=${1:-/dev/null}
[ "$log" = /dev/null ] || : >"$log"

# shellcheck source=scripts/go-tools.sh
. "$root/scripts/go-tools.sh"
act=$(act_tool)

bin=${MCP_SHUTDOWN_BIN:-}
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release --locked --bin mcp-shutdown)
  bin=$root/target/release/mcp-shutdown
fi
bin=$(realpath "$bin")
[ -x "$bin" ] || { echo "act-census: $bin is not executable" >&2; exit 2; }

"$root/scripts/lint-workflows.sh" 2>&1 | tee -a "$log"

work=$(mktemp -d "${TMPDIR:-/tmp}/act-census.XXXXXX")
trap 'rm -rf "$work"' EXIT
artifacts=${MCP_SHUTDOWN_ACT_ARTIFACTS:-$work/artifacts}
rm -rf "$artifacts" && mkdir -p "$artifacts"
cache=${MCP_SHUTDOWN_CENSUS_CACHE:-$root/target/census-cache}

# act runs the workflow in a copy of the repository (its working tree, less target/).
repo=$work/repo
mkdir -p "$repo"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | grep -zv '^target/' |
  xargs -0 cp --parents -t "$repo" 2>/dev/null) || { echo "act-census: cannot copy the repository" >&2; exit 2; }
(cd "$repo" && git init -q && git add -A && git -c user.name=act -c user.email=act@localhost commit -qm act)

stand_ins=$repo/packaging
echo "== act $("$act" --version)" | tee -a "$log"
set +e
(cd "$repo" && "$act" push \
  -W packaging/census/act/e2e.yml \
  -P ubuntu-latest=-self-hosted \
  --local-repository "actions/upload-artifact@v4=$stand_ins/action/act/upload-artifact" \
  --local-repository "actions/download-artifact@v4=$stand_ins/census/act/download-artifact" \
  --local-repository "actions/upload-pages-artifact@v3=$stand_ins/census/act/upload-pages-artifact" \
  --env "MCP_SHUTDOWN_BIN=$bin" \
  --env "MCP_SHUTDOWN_ACT_ARTIFACTS=$artifacts" \
  --env "MCP_SHUTDOWN_CENSUS_CACHE=$cache" \
  --action-cache-path "$work/act-cache" \
  --no-cache-server \
  --action-offline-mode) 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
set -e
echo "== act exited $status" | tee -a "$log"
exit "$status"
