//! lingering: what does keep a Rust server alive. main waits for Ctrl-C instead of for the
//! service, the way many long-running tokio services are written; the service ends on stdin
//! EOF but nothing tells main (SIGTERM keeps its default action and kills it).

use mcp_kit_rust::{log, Ping};
use rmcp::{transport::stdio, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _service = Ping::new("lingering").serve(stdio()).await?;
    tokio::signal::ctrl_c().await?;
    log("lingering", "ctrl-c received; exiting");
    // Exit at once: dropping the runtime would wait for the blocking-pool thread that reads
    // a still-open stdin.
    std::process::exit(0);
}
