//! A tracing filter under which no `#[secret]` value reaches a log.

use tracing_subscriber::filter::{LevelFilter, Targets};

/// The crates that log whole messages below INFO: rmcp every JSON-RPC
/// message it sends and receives (a `tools/call`'s arguments, secrets
/// included, in clear), and the HTTP stack it runs on, whose TRACE events
/// may quote what they parse.
const VERBOSE: [&str; 6] = ["rmcp", "hyper", "hyper_util", "axum", "tower_http", "h2"];

/// The filter to log an MCP server under: every event at `level` and
/// above, except that rmcp and the HTTP stack under it (hyper, axum,
/// tower-http) log at INFO and above only, however verbose `level` is.
///
/// A `#[secret]` parameter's value is masked in everything toolwright
/// emits, at every level: call events and spans carry the masked
/// arguments, error texts are scrubbed. rmcp is not told which values are
/// secret: at DEBUG it logs every message it sends and receives, a
/// `tools/call`'s arguments included, in clear. At INFO and above it logs
/// no message's content (its notices name sessions, peers and protocol
/// versions). So under this filter no secret reaches a log at any level;
/// what it does not cover is what the application itself logs, and other
/// crates it turns up to DEBUG by name.
///
/// It is a [`Targets`]: a filter of the whole subscriber
/// (`tracing_subscriber::registry().with(log_filter(level)).with(fmt_layer)`),
/// or of one layer (`fmt_layer.with_filter(log_filter(level))`).
///
/// ```
/// use toolwright::mcp::log_filter;
/// use tracing_subscriber::filter::LevelFilter;
///
/// let filter = log_filter(LevelFilter::TRACE);
/// assert!(filter.would_enable("toolwright", &tracing::Level::TRACE));
/// assert!(filter.would_enable("my_app::orders", &tracing::Level::TRACE));
/// assert!(!filter.would_enable("rmcp::service", &tracing::Level::DEBUG));
/// assert!(filter.would_enable("rmcp::service", &tracing::Level::INFO));
/// ```
pub fn log_filter(level: impl Into<LevelFilter>) -> Targets {
    let level = level.into();
    // More verbose levels compare greater.
    let capped = match level > LevelFilter::INFO {
        true => LevelFilter::INFO,
        false => level,
    };
    VERBOSE
        .iter()
        .fold(Targets::new().with_default(level), |filter, target| {
            filter.with_target(*target, capped)
        })
}
