#!/usr/bin/env bash
# Runs the GitHub Action (action.yml) end to end on a real Actions engine, nektos/act, in its
# host mode (`-P ubuntu-latest=-self-hosted`: the job's steps run on this machine, no Docker):
# packaging/action/act/e2e.yml checks a server that conforms and one that does not, through
# `uses: ./`, with actionlint over the workflow and action.yml first. GitHub's own
# actions/upload-artifact cannot be fetched here; act replaces it with the local stand-in in
# packaging/action/act/upload-artifact (--local-repository), which copies what the Action
# would upload into $MCP_SHUTDOWN_ACT_ARTIFACTS.
#
#   scripts/act-action.sh [LOG]     the act run's output goes to LOG too (default: stdout only)
#
# Environment:
#   MCP_SHUTDOWN_BIN        the binary under test (default: target/release/mcp-shutdown, built)
#   MCP_SHUTDOWN_DIST_DIR   where the npm tarballs of that binary are built (default: a temp dir)
#   ACT, ACTIONLINT         the tools (default: in $GOBIN if set, else on PATH, else in ~/go/bin;
#                           `go install`ed there at the versions scripts/go-tools.sh pins)
# Exits with act's status: 0 when both jobs did what e2e.yml expects.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
log=${1:-/dev/null}
[ "$log" = /dev/null ] || : >"$log"

die() {
  echo "act-action: $*" >&2
  exit 2
}

# shellcheck source=scripts/go-tools.sh
. "$root/scripts/go-tools.sh"
act=$(act_tool)
actionlint=$(actionlint_tool)

bin=${MCP_SHUTDOWN_BIN:-}
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release --locked --bin mcp-shutdown)
  bin=$root/target/release/mcp-shutdown
fi
bin=$(realpath "$bin")
[ -x "$bin" ] || die "$bin is not executable"

work=$(mktemp -d "${TMPDIR:-/tmp}/act-action.XXXXXX")
trap 'rm -rf "$work"' EXIT
dist=${MCP_SHUTDOWN_DIST_DIR:-$work/dist}
if ! ls "$dist"/mcp-shutdown-conformance-linux-x64-*.tgz >/dev/null 2>&1; then
  MCP_SHUTDOWN_DIST_BIN=$bin MCP_SHUTDOWN_DIST_DIR=$dist "$root/scripts/dist/npm.sh" >/dev/null
fi
packages="$(ls "$dist"/mcp-shutdown-conformance-[0-9]*.tgz) $(ls "$dist"/mcp-shutdown-conformance-linux-x64-*.tgz)"

# act runs the workflow in a copy of the repository (its working tree, less target/ and the
# fixtures' installs, which it need not copy) on this host.
repo=$work/repo
mkdir -p "$repo"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | grep -zv '^target/' |
  xargs -0 cp --parents -t "$repo" 2>/dev/null) || die "cannot copy the repository"
(cd "$repo" && git init -q && git add -A && git -c user.name=act -c user.email=act@localhost commit -qm act) ||
  die "cannot make the copy a repository (act reads its HEAD)"

# actionlint checks a local action's inputs (action.yml, through `uses: ./`) only for
# workflows in a project's .github/workflows: lint the copies there. shellcheck, where
# installed, checks every run: script too.
mkdir -p "$repo/.github/workflows"
cp "$repo/packaging/action/act/e2e.yml" "$repo/packaging/action/example.yml" "$repo/.github/workflows/"
echo "== actionlint $("$actionlint" --version | head -n 1)" | tee -a "$log"
(cd "$repo" && "$actionlint" -no-color .github/workflows/e2e.yml .github/workflows/example.yml) 2>&1 | tee -a "$log"

# GITHUB_WORKFLOW_REF (owner/repo/PATH@REF) is set by GitHub, not by act: the annotations'
# file and line come from it.
artifacts=$work/artifacts
mkdir -p "$artifacts"
echo "== act $("$act" --version)" | tee -a "$log"
set +e
(cd "$repo" && "$act" push \
  -W packaging/action/act/e2e.yml \
  -P ubuntu-latest=-self-hosted \
  --local-repository "actions/upload-artifact@v4=$repo/packaging/action/act/upload-artifact" \
  --env "MCP_SHUTDOWN_E2E_BIN=$bin" \
  --env "MCP_SHUTDOWN_E2E_PACKAGES=$packages" \
  --env "MCP_SHUTDOWN_ACT_ARTIFACTS=$artifacts" \
  --env "GITHUB_WORKFLOW_REF=local/repo/packaging/action/act/e2e.yml@refs/heads/main" \
  --env "npm_config_offline=true" \
  --env "npm_config_cache=$work/npm-cache" \
  --action-cache-path "$work/act-cache" \
  --no-cache-server \
  --action-offline-mode) 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
set -e
echo "== act exited $status" | tee -a "$log"
exit "$status"
