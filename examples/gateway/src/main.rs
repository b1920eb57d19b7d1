//! `cargo run -p gateway`: the gateway over stdio, for an MCP client to
//! start (`--http 127.0.0.1:8000` serves Streamable HTTP instead). It
//! starts `npx -y @modelcontextprotocol/server-everything stdio`, keeps its
//! pins in `gateway-pins.json` and its audit trail in `gateway.db`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use gateway::{Caller, gateway};
use toolwright::BoxError;
use toolwright::audit::SqliteAudit;
use toolwright::import::mcp::{Allowlist, Pins};
use toolwright::mcp::{self, HttpOptions};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// What this gateway may start, whatever a configuration says: the one
/// upstream, at the version its tools were pinned for.
const EVERYTHING: [&str; 3] = [
    "-y",
    "@modelcontextprotocol/server-everything@2026.8.31",
    "stdio",
];

/// One MCP endpoint for the notes tools and server-everything's.
#[derive(Parser)]
struct Cli {
    /// Serve Streamable HTTP on this address instead of stdio (every
    /// caller a manager: keep it on loopback).
    #[arg(long)]
    http: Option<SocketAddr>,
    /// Where the upstream's pins are kept.
    #[arg(long, default_value = "gateway-pins.json")]
    pins: PathBuf,
    /// The SQLite file of the audit trail.
    #[arg(long, default_value = "gateway.db")]
    db: String,
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let cli = Cli::parse();
    // Logs on stderr (stdout is the MCP channel), under `log_filter`: no
    // `#[secret]` argument reaches a log.
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(mcp::log_filter(
            tracing_subscriber::filter::LevelFilter::INFO,
        ))
        .init();
    let args: Vec<String> = EVERYTHING.iter().map(|a| a.to_string()).collect();
    let allowlist = Allowlist::new().command("npx", &args).env(["PATH", "HOME"]);
    let pins: Pins = match std::fs::read_to_string(&cli.pins) {
        Ok(kept) => serde_json::from_str(&kept)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Pins::new(),
        Err(e) => return Err(e.into()),
    };
    let pool = sqlx::SqlitePool::connect(&format!("sqlite:{}?mode=rwc", cli.db)).await?;
    let gateway = gateway(
        "npx",
        &args,
        &allowlist,
        pins,
        SqliteAudit::connect(pool).await?,
    )
    .await?;
    for changed in &gateway.changed {
        eprintln!(
            "`{}` changed since it was pinned: switched off until accepted (Pins::accept)",
            changed.key
        );
    }
    std::fs::write(&cli.pins, serde_json::to_string_pretty(&gateway.pins)?)?;
    let server = gateway.server.build();
    match cli.http {
        None => server.serve_stdio(Caller::new("local", true)).await?,
        Some(addr) => {
            eprintln!("serving MCP at http://{addr}/mcp");
            let local = mcp::allow_anonymous(Caller::new("local", true));
            server
                .serve_http(addr, local, HttpOptions::default())
                .await?
        }
    }
    Ok(())
}
