# Sourced by the benchmarks that time the seed's 12 reference cases (node-1.30.0-{plain,timer,
# fixed,stubborn} x close, exit, crash): sets `bin` (MCP_SHUTDOWN_BIN, else a release build
# here) and `args`. --server picks them from the bundled suite, so the bundled baseline
# applies: its expected failures tell the scheduler which cases wait their ladders out.
if [[ -z ${MCP_SHUTDOWN_BIN:-} ]]; then
  cargo build --release -q
  bin=${CARGO_TARGET_DIR:-target}/release/mcp-shutdown
else
  bin=$MCP_SHUTDOWN_BIN
fi
args=()
for s in plain timer fixed stubborn; do args+=(--server "node-1.30.0-$s"); done
args+=(--scenario close --scenario exit --scenario crash --format json)
