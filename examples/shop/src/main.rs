//! `cargo run -p shop` runs the narrated demo; `cargo run -p shop -- --help`
//! lists the commands.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    shop::cli::run().await
}
