//! task: plain plus a tokio::spawn'd 1 s interval task (a cache refresher). It does not keep
//! the process alive: returning from main drops the runtime, which cancels the task.

use std::time::Duration;

use mcp_kit_rust::{log, Ping};
use rmcp::{transport::stdio, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tokio::spawn(async {
        let mut interval = tokio::time::interval(Duration::from_secs(1));
        loop {
            interval.tick().await;
        }
    });
    let reason = Ping::new("task").serve(stdio()).await?.waiting().await?;
    log("task", &format!("service ended ({reason:?}); main returns (task still scheduled)"));
    Ok(())
}
