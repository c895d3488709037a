//! slow-tool: plain plus a tool `slow` that answers "done" after 3 s, for the `inflight`
//! ending (a request still running when stdin closes).

use mcp_kit_rust::{log, Ping};
use rmcp::{transport::stdio, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let reason = Ping::with_slow_tool("slow-tool").serve(stdio()).await?.waiting().await?;
    log("slow-tool", &format!("service ended ({reason:?}); main returns"));
    Ok(())
}
