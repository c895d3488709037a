fn main() -> std::process::ExitCode {
    mcp_shutdown_conformance::cli::main()
}
