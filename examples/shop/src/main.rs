//! `cargo run -p shop` runs the narrated demo; `cargo run -p shop -- --help`
//! lists the commands.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    // Under `cargo toolwright inspect | lock | check`: the shop's tools,
    // printed, and exit; otherwise nothing.
    match toolwright::Catalog::discover_in(shop::app::MODULES) {
        Ok(catalog) => toolwright::inspect::exit_if_asked(&catalog),
        Err(error) => {
            eprintln!("shop: {error}");
            return ExitCode::FAILURE;
        }
    }
    install_logs();
    shop::cli::run().await
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
