#!/usr/bin/env bash
# The Action's run step: runs the suite once (JSON report), renders the formats asked for from
# that report, writes the job summary, badges and step outputs. It exits 0 whenever the tool
# ran, so that reports are uploaded first; the action's last step fails per `exit-code`.
#
# Inputs come as INPUT_* variables (set by action.yml's `env:`), never pasted into the script.
set -euo pipefail

bin=${MCP_SHUTDOWN:?the install step did not give a binary}
out=${INPUT_OUTPUT_DIR:-mcp-shutdown-report}

die() {
  echo "::error title=mcp-shutdown::$*"
  echo "exit-code=2" >>"$GITHUB_OUTPUT"
  exit 2
}

# Words of a whitespace- or newline-separated input, as an array (no globbing).
words() {
  local -n into=$1
  set -f
  # shellcheck disable=SC2206
  into=($2)
  set +f
}

# `FILE:LINE` of this step's `command:` (or `manifests:`) input in the workflow file that ran
# it (GITHUB_WORKFLOW_REF: owner/repo/PATH@REF), or of the `uses:` line naming this action;
# the file alone when no line matches; nothing outside a workflow.
workflow_step_line() {
  local ref=${GITHUB_WORKFLOW_REF:-} file key value n
  [ -n "$ref" ] || return 0
  file=${ref#*/*/}
  file=${file%@*}
  [ -f "${GITHUB_WORKSPACE:-.}/$file" ] || return 0
  if [ -n "${INPUT_COMMAND:-}" ]; then key=command value=$INPUT_COMMAND; else key=manifests value=$INPUT_MANIFESTS; fi
  n=$(grep -n -F -- "$key: ${value%%$'\n'*}" "${GITHUB_WORKSPACE:-.}/$file" | head -n 1 | cut -d: -f1)
  [ -n "$n" ] || n=$(grep -n -E "uses:.*mcp-shutdown" "${GITHUB_WORKSPACE:-.}/$file" | head -n 1 | cut -d: -f1)
  echo "$file${n:+:$n}"
}

args=()
if [ -n "${INPUT_COMMAND:-}" ] && [ -n "${INPUT_MANIFESTS:-}" ]; then
  die "give either command or manifests, not both"
elif [ -n "${INPUT_COMMAND:-}" ]; then
  # Shell words, as in a `run:` line: quotes group, $VARS expand. The workflow's author wrote
  # it, as they would a `run:` step.
  eval "server=($INPUT_COMMAND)"
  mode=(check)
elif [ -n "${INPUT_MANIFESTS:-}" ]; then
  words manifests "$INPUT_MANIFESTS"
  mode=(run)
  for m in "${manifests[@]}"; do args+=(--manifest "$m"); done
else
  die "give command (a server command) or manifests (manifest files or directories)"
fi

[ -n "${INPUT_SPEC:-}" ] && args+=(--spec "$INPUT_SPEC")
words scenarios "${INPUT_SCENARIOS:-}"
for s in "${scenarios[@]}"; do args+=(--scenario "$s"); done
case ${INPUT_HOSTS:-false} in
true) args+=(--hosts) ;;
false | '') ;;
*) die "hosts: '$INPUT_HOSTS' is neither true nor false" ;;
esac
case ${INPUT_REPEAT:-1} in
'' | 1) ;;
*[!0-9]* | 0*) die "repeat: '$INPUT_REPEAT' is not a positive whole number" ;;
*) args+=(--repeat "$INPUT_REPEAT") ;;
esac
if [ -n "${INPUT_BASELINE:-}" ]; then
  [ -f "$INPUT_BASELINE" ] || die "baseline: $INPUT_BASELINE does not exist"
  args+=(--baseline "$INPUT_BASELINE")
fi
[ -n "${INPUT_FAIL_ON:-}" ] && args+=(--fail-on "$INPUT_FAIL_ON")
against=()
if [ -n "${INPUT_DIFF_AGAINST:-}" ]; then
  [ -f "$INPUT_DIFF_AGAINST" ] || die "diff-against: $INPUT_DIFF_AGAINST does not exist"
  against=(--diff-against "$(cd "$(dirname "$INPUT_DIFF_AGAINST")" && pwd)/$(basename "$INPUT_DIFF_AGAINST")")
  args+=("${against[@]}")
fi
case ${INPUT_ANNOTATIONS:-true} in
true | false) ;;
*) die "annotations: '$INPUT_ANNOTATIONS' is neither true nor false" ;;
esac
words extra "${INPUT_ARGS:-}"
args+=("${extra[@]}")

words formats "${INPUT_FORMATS:-markdown junit html}"
for f in "${formats[@]}"; do
  case $f in
  text | json | junit | markdown | html | conformance) ;;
  sarif) die "formats: use the sarif input (a file path) for SARIF" ;;
  *) die "formats: unknown format '$f' (text json junit markdown html conformance)" ;;
  esac
done

mkdir -p "$out"
out=$(cd "$out" && pwd)
report=$out/report.json
cmd=("$bin" "${mode[@]}" "${args[@]}" --format json)
[ "${mode[0]}" = check ] && cmd+=(-- "${server[@]}")
echo "::group::mcp-shutdown ${mode[0]}"
printf '%q ' "${cmd[@]}"
echo
echo "::endgroup::"
set +e
"${cmd[@]}" >"$report"
code=$?
set -e
echo "exit-code=$code" >>"$GITHUB_OUTPUT"
echo "output-dir=$out" >>"$GITHUB_OUTPUT"

# 2 (usage or harness error) and 128 + n (interrupted: 130, 143, 129) leave no report to render.
if [ "$code" -ne 0 ] && [ "$code" -ne 1 ]; then
  rm -f "$report"
  echo "::error title=mcp-shutdown::mcp-shutdown exited $code before writing a report"
  exit 0
fi
echo "report=$report" >>"$GITHUB_OUTPUT"

render() {
  "$bin" report render --from "$report" "$@"
}
render --format text
for f in "${formats[@]}"; do
  case $f in
  json) ;;
  text) render --format text >"$out/report.txt" ;;
  junit) render --format junit >"$out/junit.xml" ;;
  markdown) render --format markdown >"$out/report.md" ;;
  html) render --format html >"$out/report.html" ;;
  conformance) render --format conformance --output "$out/conformance" >/dev/null ;;
  esac
done
if [ "${INPUT_SUMMARY:-true}" = true ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  render --format markdown "${against[@]}" >>"$GITHUB_STEP_SUMMARY"
fi
# Annotations and SARIF results point at the line of the workflow step that names the server
# (its `command:` or `manifests:` input): that is where the check is asked for, in every
# repository, and the message carries what held the server and the fix. (The line in the
# server's own code that holds it open is not knowable from outside the process.)
at=$(workflow_step_line)
if [ "$INPUT_ANNOTATIONS" = true ]; then
  render --format github ${at:+--at "$at"}
fi
if [ -n "${INPUT_SARIF:-}" ]; then
  # Code scanning: upload it with github/codeql-action/upload-sarif (see packaging/README.md).
  sarif=$(realpath -m -- "$INPUT_SARIF")
  mkdir -p "$(dirname "$sarif")"
  if render --format sarif ${at:+--at "$at"} >"$sarif"; then
    echo "sarif=$sarif" >>"$GITHUB_OUTPUT"
  else
    echo "::error title=mcp-shutdown::could not write the SARIF report $INPUT_SARIF"
  fi
fi
if [ -n "${INPUT_BADGES:-}" ]; then
  "$bin" report badges --from "$report" --output "$INPUT_BADGES"
  if [ "${INPUT_HOSTS:-false}" = true ]; then
    "$bin" report badges --from "$report" --output "$INPUT_BADGES" --hosts
  fi
  echo "badges-dir=$(cd "$INPUT_BADGES" && pwd)" >>"$GITHUB_OUTPUT"
fi
exit 0
