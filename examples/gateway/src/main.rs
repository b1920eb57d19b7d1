//! `cargo run -p gateway`: the gateway over stdio, for an MCP client to
//! start (`--http 127.0.0.1:8000` serves Streamable HTTP instead). It
//! starts `server-everything` and `server-filesystem` (serving
//! `gateway-files/`) with `npx`, keeps their pins in `gateway-pins.json`
//! and its audit trail in `gateway.db`. With `--admin 127.0.0.1:8001` (and
//! the token in `GATEWAY_ADMIN_TOKEN`), a person approves writes and
//! accepted definitions on the admin page, where a changed definition
//! shows what changed.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;
use gateway::{Caller, KeepPins, Upstreams, gateway};
use toolwright::BoxError;
use toolwright::admin::{self, Admin, Operator};
use toolwright::audit::SqliteAudit;
use toolwright::import::mcp::{Allowlist, Pins};
use toolwright::mcp::{self, HttpOptions};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// What this gateway may start, whatever a configuration says: the
/// upstreams, at the versions their tools were pinned for.
const EVERYTHING: [&str; 3] = [
    "-y",
    "@modelcontextprotocol/server-everything@2026.8.31",
    "stdio",
];
const FILESYSTEM: [&str; 2] = ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31"];

/// One MCP endpoint for the notes tools, server-everything's and
/// server-filesystem's.
#[derive(Parser)]
struct Cli {
    /// Serve Streamable HTTP on this address instead of stdio (every
    /// caller a manager: keep it on loopback).
    #[arg(long)]
    http: Option<SocketAddr>,
    /// Where the upstreams' pins are kept.
    #[arg(long, default_value = "gateway-pins.json")]
    pins: PathBuf,
    /// The directory server-filesystem serves (created if missing).
    #[arg(long, default_value = "gateway-files")]
    files: PathBuf,
    /// The SQLite file of the audit trail.
    #[arg(long, default_value = "gateway.db")]
    db: String,
    /// Serve the admin page and API on this address too, for the operator
    /// whose bearer token is in `GATEWAY_ADMIN_TOKEN` (a manager: the
    /// approvals the callers wait for are decided there).
    #[arg(long)]
    admin: Option<SocketAddr>,
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
    std::fs::create_dir_all(&cli.files)?;
    let files = std::fs::canonicalize(&cli.files)?.display().to_string();
    let owned = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let upstreams = Upstreams {
        everything: ("npx".to_owned(), owned(&EVERYTHING)),
        files: ("npx".to_owned(), [owned(&FILESYSTEM), vec![files]].concat()),
    };
    let allowlist = Allowlist::new()
        .command("npx", &upstreams.everything.1)
        .command("npx", &upstreams.files.1)
        .env(["PATH", "HOME"]);
    let pins: BTreeMap<String, Pins> = match std::fs::read_to_string(&cli.pins) {
        Ok(kept) => serde_json::from_str(&kept)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
        Err(e) => return Err(e.into()),
    };
    let pool = sqlx::SqlitePool::connect(&format!("sqlite:{}?mode=rwc", cli.db)).await?;
    let audit = SqliteAudit::connect(pool).await?;
    // An accepted definition is written to the pin file at once.
    let file = cli.pins.clone();
    let keep: KeepPins = Arc::new(move |namespace, pins| {
        let mut kept: BTreeMap<String, Pins> = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        kept.insert(namespace.to_owned(), pins.clone());
        if let Ok(text) = serde_json::to_string_pretty(&kept) {
            let _ = std::fs::write(&file, text);
        }
    });
    let gateway = gateway(&upstreams, &allowlist, pins, keep, audit).await?;
    for changed in &gateway.changed {
        eprintln!(
            "`{}` changed since it was pinned: switched off until a manager asks \
             `{}_accept_definition` to accept digest {} and another approves \
             (the admin page, with --admin, shows what changed)",
            changed.key,
            changed.key.split('.').next().unwrap_or_default(),
            changed.found
        );
    }
    std::fs::write(&cli.pins, serde_json::to_string_pretty(&gateway.pins)?)?;
    if let Some(addr) = cli.admin {
        let token = std::env::var("GATEWAY_ADMIN_TOKEN")
            .map_err(|_| "--admin needs the operator's token in GATEWAY_ADMIN_TOKEN")?;
        let operator = Operator::new("admin").role("manager");
        let admin = Admin::new(gateway.executor.clone()).operator(token, operator);
        eprintln!("admin page at http://{addr}/");
        tokio::spawn(async move {
            if let Err(error) = admin::serve(addr, admin).await {
                eprintln!("the admin page stopped: {error}");
            }
        });
    }
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
