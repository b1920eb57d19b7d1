//! `tools/call` throughput over Streamable HTTP: toolwright's MCP adapter
//! against an equivalent server written with rmcp's own `#[tool_router]`
//! macros, in the same process, on loopback, in the same run.
//!
//! Both serve a two-integer `add` in stateless mode with JSON responses (the
//! usual stateless deployment): toolwright through `serve_http_on` with its
//! default limits, rmcp's router through `axum::serve`. A round runs each server for a fixed time
//! with the same number of concurrent keep-alive clients, in rotating order;
//! the report is the median of the per-round ratios.
//!
//! `cargo bench -p toolwright-bench --bench mcp_http`

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use toolwright::mcp::{HttpOptions, McpServer, allow_anonymous};
use toolwright::{Catalog, Container, Executor};

// ------------------------------------------------------------- toolwright

/// Add two integers.
#[toolwright::tool(key = "math.add", effect = read, authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// toolwright's router alone, with its request limits at their defaults.
fn toolwright_router() -> axum::Router {
    let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let options = HttpOptions::default().stateless(true).json_response(true);
    McpServer::<()>::new(executor, "toolwright-bench", "0")
        .http_router(allow_anonymous(()), options)
}

/// toolwright's own server, with every limit of `HttpOptions` at its
/// default (connection cap, timeouts, body limit and deadline, CORS).
async fn serve_toolwright() -> SocketAddr {
    let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let server = McpServer::<()>::new(executor, "toolwright-bench", "0");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let options = HttpOptions::default().stateless(true).json_response(true);
    tokio::spawn(server.serve_http_on(listener, allow_anonymous(()), options));
    addr
}

// ------------------------------------------------------------------- rmcp

#[path = "common/rmcp_add.rs"]
mod rmcp_add;
use rmcp_add::RmcpCalculator;

#[path = "common/stats.rs"]
mod stats;
use stats::quantiles;

fn rmcp_router() -> axum::Router {
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = false;
    config.json_response = true;
    let service = StreamableHttpService::new(
        || Ok(RmcpCalculator::new()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    axum::Router::new().nest_service("/mcp", service)
}

// ------------------------------------------------------------------- load

async fn serve(router: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    addr
}

#[path = "common/tools_call.rs"]
mod tools_call;

async fn one_call(client: &reqwest::Client, url: &str) -> bool {
    let response = tools_call::add_request(client, url).send().await;
    match response {
        Ok(response) if response.status().is_success() => response
            .text()
            .await
            .is_ok_and(|body| body.contains('5') && !body.contains("\"error\"")),
        _ => false,
    }
}

#[path = "common/load.rs"]
mod load;

/// Calls completed per second by `connections` keep-alive clients of `url`
/// in `duration`.
async fn throughput(url: &str, connections: usize, duration: Duration) -> f64 {
    let worker = || {
        let (client, url) = (reqwest::Client::new(), url.to_owned());
        move || {
            let (client, url) = (client.clone(), url.clone());
            async move { one_call(&client, &url).await }
        }
    };
    load::throughput(worker, connections, duration).await
}

/// `MCP_HTTP_COUNT=N MCP_HTTP_SERVER=toolwright|router|rmcp`: N calls one
/// after another against one server on a single thread, for counting
/// instructions per call with callgrind (throughput on a shared machine
/// is too noisy to resolve a few percent).
fn count(calls: usize, server: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let addr = match server {
            "toolwright" => serve_toolwright().await,
            "router" => serve(toolwright_router()).await,
            _ => serve(rmcp_router()).await,
        };
        let url = format!("http://{addr}/mcp");
        let client = reqwest::Client::new();
        for _ in 0..calls {
            assert!(one_call(&client, &url).await, "a call failed");
        }
    });
}

fn main() {
    if let Some(calls) = std::env::var("MCP_HTTP_COUNT")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        let server = std::env::var("MCP_HTTP_SERVER").unwrap_or_default();
        return count(calls, &server);
    }
    // `cargo test --benches` runs this without `--bench`: one short round.
    let full = std::env::args().any(|a| a == "--bench");
    let (rounds, duration) = if full {
        (15, Duration::from_secs(2))
    } else {
        (1, Duration::from_millis(200))
    };
    let connections = 16;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // `MCP_HTTP_ROUTER=1`: toolwright's router under `axum::serve`,
        // without the connection limits, to tell their cost apart.
        let ours = if std::env::var_os("MCP_HTTP_ROUTER").is_some() {
            serve(toolwright_router()).await
        } else {
            serve_toolwright().await
        };
        let ours = format!("http://{ours}/mcp");
        let theirs = format!("http://{}/mcp", serve(rmcp_router()).await);
        let client = reqwest::Client::new();
        assert!(one_call(&client, &ours).await, "toolwright answers");
        assert!(one_call(&client, &theirs).await, "rmcp answers");
        // Warm up both.
        throughput(&ours, connections, duration / 2).await;
        throughput(&theirs, connections, duration / 2).await;

        let (ours_rps, theirs_rps, ratios) = load::rounds(
            rounds,
            || throughput(&ours, connections, duration),
            || throughput(&theirs, connections, duration),
        )
        .await;
        let (ours, ours_lo, ours_hi) = quantiles(ours_rps);
        let (theirs, theirs_lo, theirs_hi) = quantiles(theirs_rps);
        let (ratio, ratio_lo, ratio_hi) = quantiles(ratios);
        println!(
            "tools/call over Streamable HTTP, stateless JSON, {connections} connections, {rounds} rounds of {duration:?}"
        );
        println!("  toolwright: {ours:8.0} req/s (p10 {ours_lo:.0}, p90 {ours_hi:.0})");
        println!("  rmcp:       {theirs:8.0} req/s (p10 {theirs_lo:.0}, p90 {theirs_hi:.0})");
        println!("  ratio toolwright / rmcp: {ratio:.2} (p10 {ratio_lo:.2}, p90 {ratio_hi:.2})");
    });
}
