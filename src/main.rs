use std::process::ExitCode;

fn main() -> ExitCode {
    match mcp_shutdown_conformance::internals::run_cli() {
        Ok(code) => code,
        Err(e) => {
            eprintln!(
                "mcp-shutdown: {}",
                mcp_shutdown_conformance::internals::chain(&e)
            );
            ExitCode::from(e.exit_code())
        }
    }
}
