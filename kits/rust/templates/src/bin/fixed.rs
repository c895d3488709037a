//! fixed: main selects on the service ending (stdin EOF) and on SIGTERM/SIGINT; every path
//! ends in one guarded shutdown(reason) that runs once, logs the reason and exits 0. The
//! exit is explicit: rmcp's `stdio()` reads stdin on tokio's blocking pool, and a read pending
//! on a still-open stdin (the signal paths) would hold up the runtime's shutdown.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_kit_rust::{log, Ping};
use rmcp::{transport::stdio, ServiceExt};
use tokio::signal::unix::{signal, SignalKind};

static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);

fn shutdown(reason: &str) -> ! {
    if SHUTTING_DOWN.swap(true, Ordering::SeqCst) {
        // Another path is already shutting down; it exits the process.
        loop {
            std::thread::park();
        }
    }
    log("fixed", &format!("shutdown: {reason}"));
    std::process::exit(0);
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    tokio::spawn(async {
        let mut interval = tokio::time::interval(Duration::from_secs(1));
        loop {
            interval.tick().await;
        }
    });
    let service = Ping::new("fixed").serve(stdio()).await?;
    tokio::select! {
        _ = service.waiting() => shutdown("stdin-eof"),
        _ = sigterm.recv() => shutdown("sigterm"),
        _ = sigint.recv() => shutdown("sigint"),
    }
}
