#!/usr/bin/env bash
# The SDK tracker (.github/workflows/sdk-tracker.yml): for each kit line, the releases
# published since the last one it recorded are run with that last one beside them, and
# their history ("which release changed what") is appended to the book's SDK history page.
#
#   scripts/book/sdk-tracker.sh [LINE...]        default: every line (`mcp-shutdown sdk lines`)
#
# State: docs/book/src/sdk-history/<line>.seen, one release a line (version, date). A line
# without one is started at its latest release. Environment: MCP_SHUTDOWN_BIN (default
# target/release/mcp-shutdown), TRACK_SCENARIOS (default: the default endings), OUT (where
# reports go; default a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/../.."

bin=${MCP_SHUTDOWN_BIN:-target/release/mcp-shutdown}
state=docs/book/src/sdk-history
page=docs/book/src/sdk-history.md
out=${OUT:-$(mktemp -d)}
mkdir -p "$state" "$out"
read -r -a scenarios <<<"${TRACK_SCENARIOS:-}"
scenario_args=()
for s in "${scenarios[@]}"; do scenario_args+=(--scenario "$s"); done

if [ "$#" -gt 0 ]; then lines=("$@"); else mapfile -t lines < <("$bin" sdk lines); fi
changed=0
for line in "${lines[@]}"; do
  seen="$state/$line.seen"
  latest=$("$bin" sdk versions "$line@latest" | cut -f1)
  last=$( [ -f "$seen" ] && tail -n 1 "$seen" | cut -f1 || true)
  if [ "$latest" = "$last" ]; then
    echo "sdk-tracker: $line: nothing new (latest $latest)"
    continue
  fi
  sel="$line@${last:-$latest}.."
  mapfile -t fresh < <("$bin" sdk versions "$sel" | awk -F'\t' -v last="$last" '$1 != last')
  echo "sdk-tracker: $line: ${#fresh[@]} new release(s) after ${last:-nothing}: $(printf '%s ' "${fresh[@]%%$'\t'*}")"
  # Exit 1 (a missed rule) and 2 (machine-bound) are results to record, not failures here.
  status=0
  "$bin" run --sdk "$sel" "${scenario_args[@]}" --no-baseline --accept-machine-bound \
    --output "$out/$line.json" >/dev/null || status=$?
  if [ "$status" -gt 1 ]; then
    echo "sdk-tracker: $line: the run failed (exit $status)" >&2
    exit "$status"
  fi
  section="$out/$line.section.md"
  {
    echo
    echo "## $line: $(printf '%s ' "${fresh[@]%%$'\t'*}")(run $(date -u +%Y-%m-%d))"
    echo
    # The report's history section (and its versions not testable), as the report renders it.
    "$bin" report render --from "$out/$line.json" --format markdown \
      | awk '/^#+ / { on = ($0 ~ /^### (History|Not testable)/) } on'
  } >"$section"
  # Into the page, the job's summary (on GitHub) and the log.
  cat "$section" >>"$page"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$section" >>"$GITHUB_STEP_SUMMARY"; fi
  cat "$section"
  printf '%s\n' "${fresh[@]}" >>"$seen"
  changed=1
done
echo "sdk-tracker: done; reports in $out; page changed: $changed"
