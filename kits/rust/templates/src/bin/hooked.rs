//! hooked: the lingering shape with the SDK's own end of the session wired to exit: a task
//! awaits `waiting()` (it resolves when the service ends, on stdin EOF) and exits 0; main
//! itself waits for Ctrl-C, and nothing else handles a signal.

use mcp_kit_rust::{log, Ping};
use rmcp::{transport::stdio, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = Ping::new("hooked").serve(stdio()).await?;
    tokio::spawn(async move {
        let reason = service.waiting().await;
        log("hooked", &format!("service ended ({reason:?}); exiting"));
        std::process::exit(0);
    });
    tokio::signal::ctrl_c().await?;
    std::process::exit(0);
}
