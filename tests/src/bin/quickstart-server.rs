//! The quickstart's command line, built inside the test package so that
//! tests can start it (`CARGO_BIN_EXE_quickstart-server`) as an MCP server.

use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    quickstart::run(std::env::args().skip(1).collect()).await
}
