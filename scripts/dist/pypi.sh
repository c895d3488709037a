#!/usr/bin/env bash
# Builds the PyPI wheels into target/dist/pypi/, printing their paths:
#   mcp_shutdown_conformance-<version>-py3-none-manylinux_2_<N>_x86_64.whl   the binary
#   pytest_mcp_shutdown-<version>-py3-none-any.whl                          the pytest plugin
#                                                   (packaging/pytest-mcp-shutdown; needs 3.11+)
# from target/release/mcp-shutdown (built here with `cargo build --release --locked`) and
# packaging/pypi/ (the `mcp-shutdown-conformance` launcher and the README), by
# scripts/dist/pypi.py (Python 3.8+, standard library only). The version is the crate's.
#
# Environment:
#   MCP_SHUTDOWN_DIST_BIN  use this binary instead of building one (a CI artifact; tests)
#   MCP_SHUTDOWN_DIST_DIR  write the wheel here instead of target/dist/pypi
#
# Publish (the binary's wheel first: the plugin pins it):
#   python3 -m twine upload target/dist/pypi/mcp_shutdown_conformance-*.whl
#   python3 -m twine upload target/dist/pypi/pytest_mcp_shutdown-*.whl   (or: uv publish target/dist/pypi/*)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${MCP_SHUTDOWN_DIST_DIR:-$root/target/dist/pypi}

die() {
  echo "dist-pypi: $*" >&2
  exit 2
}

command -v python3 >/dev/null || die "python3 is not on PATH"

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
[ -n "$version" ] || die "no version in $root/Cargo.toml"

if [ -n "${MCP_SHUTDOWN_DIST_BIN:-}" ]; then
  bin=$MCP_SHUTDOWN_DIST_BIN
else
  (cd "$root" && cargo build --release --locked --bin mcp-shutdown)
  bin=$root/target/release/mcp-shutdown
fi
[ -x "$bin" ] || die "$bin is missing or not executable"
said=$("$bin" --version) || die "$bin --version failed"
[ "$said" = "mcp-shutdown $version" ] || die "$bin says '$said', the crate is $version"

mkdir -p "$out"
rm -f "$out"/mcp_shutdown_conformance-*.whl "$out"/pytest_mcp_shutdown-*.whl
python3 "$root/scripts/dist/pypi.py" \
  --binary "$bin" \
  --version "$version" \
  --readme "$root/packaging/pypi/README.md" \
  --launcher "$root/packaging/pypi/mcp-shutdown-conformance" \
  --plugin "$root/packaging/pytest-mcp-shutdown" \
  --out "$out"
