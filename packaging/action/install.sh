#!/usr/bin/env bash
# The Action's install step: finds or installs the mcp-shutdown binary and writes its path to
# the step output `binary`.
#   INPUT_BINARY   a prebuilt binary to use as it is
#   INPUT_PACKAGE  npm package spec(s) to install (default: mcp-shutdown-conformance at the
#                  version of the action itself, from its Cargo.toml)
# The npm packages go into $RUNNER_TEMP; the binary is then run directly (not through the
# package's Node launcher), so a cancelled job's signals reach the harness itself.
set -euo pipefail

die() {
  echo "::error title=mcp-shutdown::$*"
  exit 2
}

if [ "${RUNNER_OS:-Linux}" != Linux ] || [ "${RUNNER_ARCH:-X64}" != X64 ]; then
  die "mcp-shutdown-conformance runs on Linux x64 only (this runner: ${RUNNER_OS:-?} ${RUNNER_ARCH:-?}); use runs-on: ubuntu-latest"
fi

if [ -n "${INPUT_BINARY:-}" ]; then
  bin=$(realpath -- "$INPUT_BINARY" 2>/dev/null) || die "binary: $INPUT_BINARY does not exist"
  [ -x "$bin" ] || die "binary: $bin is not executable"
else
  command -v npm >/dev/null || die "npm is not on PATH (add actions/setup-node before this step, or give the binary input)"
  spec=${INPUT_PACKAGE:-}
  if [ -z "$spec" ]; then
    version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$GITHUB_ACTION_PATH/Cargo.toml" | head -n 1)
    [ -n "$version" ] || die "no version in $GITHUB_ACTION_PATH/Cargo.toml"
    spec="mcp-shutdown-conformance@$version"
  fi
  prefix=${RUNNER_TEMP:?RUNNER_TEMP is not set}/mcp-shutdown-conformance
  mkdir -p "$prefix"
  [ -f "$prefix/package.json" ] || echo '{"private": true}' >"$prefix/package.json"
  # Word splitting on purpose: the input may name several specs (a launcher and its platform
  # package as local tarballs).
  # shellcheck disable=SC2086
  (cd "$prefix" && npm install --no-audit --no-fund --no-save --include=optional $spec) ||
    die "npm install $spec failed"
  bin=$prefix/node_modules/@mcp-shutdown-conformance/linux-x64/bin/mcp-shutdown
  [ -x "$bin" ] || die "npm installed $spec but not its platform package (@mcp-shutdown-conformance/linux-x64): $bin is missing"
fi

echo "mcp-shutdown: $bin ($("$bin" --version))"
echo "binary=$bin" >>"$GITHUB_OUTPUT"
