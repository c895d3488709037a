//! graceful: on SIGTERM the idiomatic graceful stop: cancel the service and return from main,
//! with stdin still open. The transport is `stdio()`. `stdio()` reads stdin on tokio's
//! blocking pool, and dropping the runtime waits for that read, which never returns while
//! stdin is open (bug-ops/mcpls#308); `stdio_pipes()` reads the pipe through the reactor
//! instead, so nothing is left to wait for.

use mcp_kit_rust::{log, Ping};
use rmcp::{transport::stdio, ServiceExt};
use tokio::signal::unix::{signal, SignalKind};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sigterm = signal(SignalKind::terminate())?;
    let service = Ping::new("graceful").serve(stdio()).await?;
    let token = service.cancellation_token();
    tokio::select! {
        reason = service.waiting() => log("graceful", &format!("service ended ({reason:?}); main returns")),
        _ = sigterm.recv() => {
            log("graceful", "SIGTERM: cancelling the service; main returns");
            token.cancel();
        }
    }
    Ok(())
}
