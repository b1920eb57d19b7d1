//! `cargo run -p quickstart [-- --format NAME | --stdio | --http ADDR [--anonymous]]`;
//! see `--help` and the library's documentation.

use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    quickstart::run(std::env::args().skip(1).collect()).await
}
