//! stubborn: the service ends on stdin EOF, but main then waits forever, and SIGTERM is
//! caught, "cleaned up" after and ignored. Only SIGKILL ends it.

use mcp_kit_rust::{log, Ping};
use rmcp::{transport::stdio, ServiceExt};
use tokio::signal::unix::{signal, SignalKind};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sigterm = signal(SignalKind::terminate())?;
    tokio::spawn(async move {
        while sigterm.recv().await.is_some() {
            log("stubborn", "SIGTERM: cleaning up (and not exiting)");
        }
    });
    let reason = Ping::new("stubborn").serve(stdio()).await?.waiting().await?;
    log("stubborn", &format!("service ended ({reason:?}); waiting forever"));
    std::future::pending::<()>().await;
    Ok(())
}
