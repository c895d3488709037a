//! notifier: main waits for Ctrl-C (as lingering does); a task sends a log notification
//! through the service's peer every 200 ms. Rust's runtime ignores SIGPIPE, so a write to a
//! broken stdout fails with EPIPE inside rmcp's transport; a failed send is logged and the
//! task goes on.

use std::time::Duration;

use mcp_kit_rust::{log, Ping};
use rmcp::{transport::stdio, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = Ping::new("notifier").serve(stdio()).await?;
    let peer = service.peer().clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_millis(200));
        for n in 1u64.. {
            every.tick().await;
            // From JSON: the struct's fields and constructors changed between releases.
            let param = serde_json::from_value(
                serde_json::json!({"level": "info", "logger": "kit", "data": format!("tick {n}")}),
            )
            .expect("a valid logging message");
            #[allow(deprecated)]
            if let Err(e) = peer.notify_logging_message(param).await {
                log("notifier", &format!("send failed: {e}"));
            }
        }
    });
    tokio::signal::ctrl_c().await?;
    std::process::exit(0);
}
