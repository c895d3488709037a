//! thread: plain plus a std::thread that loops forever. Rust does not wait for spawned
//! threads: the process exits when main returns.

use std::time::Duration;

use mcp_kit_rust::{log, Ping};
use rmcp::{transport::stdio, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    std::thread::spawn(|| loop {
        std::thread::sleep(Duration::from_secs(1));
    });
    let reason = Ping::new("thread").serve(stdio()).await?.waiting().await?;
    log("thread", &format!("service ended ({reason:?}); main returns (thread still looping)"));
    Ok(())
}
