//! child: plain plus a helper process (`sleep 600`) started at launch and never stopped or
//! waited for. Its stdio is /dev/null, so the server still exits as plain does; the helper
//! is left behind.

use std::process::{Command, Stdio};

use mcp_kit_rust::{log, Ping};
use rmcp::{transport::stdio, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let helper = Command::new("sleep")
        .arg("600")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    log("child", &format!("started helper pid {}", helper.id()));
    let reason = Ping::new("child").serve(stdio()).await?.waiting().await?;
    log("child", &format!("service ended ({reason:?}); main returns (helper still running)"));
    Ok(())
}
