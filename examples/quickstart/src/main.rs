//! `cargo run -p quickstart [-- --format NAME | --stdio | --http ADDR [--anonymous]]`;
//! see `--help` and the library's documentation.

use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    install_logs();
    quickstart::run(std::env::args().skip(1).collect()).await
}

/// Logs to stderr (over stdio, stdout is the protocol) at the level
/// `RUST_LOG` names (`trace` ... `error`; `warn` when unset), under
/// `log_filter`: rmcp logs whole messages below INFO, `#[secret]` arguments
/// in clear, and the filter keeps them out at any level.
fn install_logs() {
    use tracing_subscriber::filter::LevelFilter;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let level = std::env::var("RUST_LOG")
        .ok()
        .and_then(|level| level.parse().ok())
        .unwrap_or(LevelFilter::WARN);
    let _ = tracing_subscriber::registry()
        .with(toolwright::mcp::log_filter(level))
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .try_init();
}
