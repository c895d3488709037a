#!/usr/bin/env bash
# Builds the npm packages into target/dist/npm/ as `npm pack` tarballs:
#   mcp-shutdown-conformance-<version>.tgz                     the launcher (bin: mcp-shutdown,
#                                                              mcp-shutdown-conformance)
#   mcp-shutdown-conformance-linux-x64-<version>.tgz           @mcp-shutdown-conformance/linux-x64,
#                                                              the release binary
#   mcp-shutdown-conformance-vitest-<version>.tgz              @mcp-shutdown-conformance/vitest,
#                                                              the vitest/jest matchers
# from packaging/npm/ and target/release/mcp-shutdown (built here with `cargo build --release
# --locked`). The version is the crate's.
#
# Environment:
#   MCP_SHUTDOWN_DIST_BIN  use this binary instead of building one (a CI artifact; tests)
#   MCP_SHUTDOWN_DIST_DIR  write the tarballs here instead of target/dist/npm
#
# Publish (in this order, so the launcher never points at a missing platform package):
#   npm publish target/dist/npm/mcp-shutdown-conformance-linux-x64-<v>.tgz --access public
#   npm publish target/dist/npm/mcp-shutdown-conformance-<v>.tgz
#   npm publish target/dist/npm/mcp-shutdown-conformance-vitest-<v>.tgz --access public
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${MCP_SHUTDOWN_DIST_DIR:-$root/target/dist/npm}

die() {
  echo "dist-npm: $*" >&2
  exit 2
}

command -v node >/dev/null || die "node is not on PATH (needed to write package.json)"
command -v npm >/dev/null || die "npm is not on PATH (needed for npm pack)"

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
[ -n "$version" ] || die "no version in $root/Cargo.toml"

if [ -n "${MCP_SHUTDOWN_DIST_BIN:-}" ]; then
  bin=$MCP_SHUTDOWN_DIST_BIN
else
  (cd "$root" && cargo build --release --locked --bin mcp-shutdown)
  bin=$root/target/release/mcp-shutdown
fi
[ -x "$bin" ] || die "$bin is missing or not executable"
# The binary must be the version the packages claim.
said=$("$bin" --version) || die "$bin --version failed"
[ "$said" = "mcp-shutdown $version" ] || die "$bin says '$said', the crate is $version"

stage=$(mktemp -d "${TMPDIR:-/tmp}/dist-npm.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out"
rm -f "$out"/mcp-shutdown-conformance-*.tgz

cp -R "$root/packaging/npm/linux-x64" "$stage/linux-x64"
mkdir -p "$stage/linux-x64/bin"
install -m 0755 "$bin" "$stage/linux-x64/bin/mcp-shutdown"
cp -R "$root/packaging/npm/mcp-shutdown-conformance" "$stage/main"
chmod 0755 "$stage/main/bin/mcp-shutdown.js"
cp -R "$root/packaging/npm/vitest" "$stage/vitest"

# Stamp the version into the manifests, the launcher's dependency on its binary and the
# matchers' on the launcher.
node - "$version" "$stage/linux-x64/package.json" "$stage/main/package.json" "$stage/vitest/package.json" <<'JS'
const fs = require('node:fs');
const [version, ...files] = process.argv.slice(2);
for (const file of files) {
  const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
  pkg.version = version;
  for (const dep of Object.keys(pkg.optionalDependencies || {})) {
    pkg.optionalDependencies[dep] = version;
  }
  for (const dep of Object.keys(pkg.dependencies || {})) {
    if (dep.startsWith('mcp-shutdown-conformance')) pkg.dependencies[dep] = version;
  }
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
}
JS

for dir in linux-x64 main vitest; do
  (cd "$stage/$dir" && npm pack --silent --pack-destination "$out" >/dev/null) ||
    die "npm pack failed in $stage/$dir"
done
for f in "mcp-shutdown-conformance-linux-x64-$version.tgz" "mcp-shutdown-conformance-$version.tgz" \
  "mcp-shutdown-conformance-vitest-$version.tgz"; do
  [ -f "$out/$f" ] || die "npm pack did not write $out/$f"
  echo "$out/$f"
done
