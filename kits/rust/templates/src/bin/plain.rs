//! plain: the idiomatic rmcp stdio server. `waiting()` resolves when stdin reaches EOF,
//! main returns, and the process exits.

use mcp_kit_rust::{log, Ping};
use rmcp::{transport::stdio, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let reason = Ping::new("plain").serve(stdio()).await?.waiting().await?;
    log("plain", &format!("service ended ({reason:?}); main returns"));
    Ok(())
}
