//! A tool called over REST against the same call over MCP (issue #41):
//! one toolwright server serving `add` both ways (`HttpOptions::rest`),
//! MCP in stateless mode with JSON responses, each behind the same
//! limits, authentication and executor. A round runs each for a fixed time
//! with the same number of keep-alive clients, in rotating order; the
//! report is the median of the per-round ratios.
//!
//! `cargo bench -p toolwright-bench --bench rest`

use std::net::SocketAddr;
use std::time::Duration;

use toolwright::mcp::{HttpOptions, McpServer, allow_anonymous};
use toolwright::{Catalog, Container, Executor};

/// Add two integers.
#[toolwright::tool(key = "math.add", effect = read, authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[path = "common/stats.rs"]
mod stats;
use stats::quantiles;

#[path = "common/tools_call.rs"]
mod tools_call;

#[path = "common/load.rs"]
mod load;

/// The server, with every limit of `HttpOptions` at its default.
async fn serve() -> SocketAddr {
    let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let server = McpServer::<()>::new(executor, "toolwright-bench", "0");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let options = HttpOptions::default()
        .stateless(true)
        .json_response(true)
        .rest(true);
    tokio::spawn(server.serve_http_on(listener, allow_anonymous(()), options));
    addr
}

/// How a client calls `add` (2 + 3).
#[derive(Clone, Copy)]
enum Via {
    Mcp,
    Rest,
}

async fn one_call(client: &reqwest::Client, addr: SocketAddr, via: Via) -> bool {
    let request = match via {
        Via::Mcp => tools_call::add_request(client, &format!("http://{addr}/mcp")),
        Via::Rest => client
            .post(format!("http://{addr}/api/tools/add"))
            .header("content-type", "application/json")
            .body(r#"{"a":2,"b":3}"#),
    };
    match request.send().await {
        Ok(response) if response.status().is_success() => response
            .text()
            .await
            .is_ok_and(|body| body.contains('5') && !body.contains("\"error\"")),
        _ => false,
    }
}

/// Calls completed per second by `connections` keep-alive clients in
/// `duration`.
async fn throughput(addr: SocketAddr, via: Via, connections: usize, duration: Duration) -> f64 {
    let worker = || {
        let client = reqwest::Client::new();
        move || {
            let client = client.clone();
            async move { one_call(&client, addr, via).await }
        }
    };
    load::throughput(worker, connections, duration).await
}

fn main() {
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
        let addr = serve().await;
        let client = reqwest::Client::new();
        assert!(one_call(&client, addr, Via::Mcp).await, "MCP answers");
        assert!(one_call(&client, addr, Via::Rest).await, "REST answers");
        throughput(addr, Via::Mcp, connections, duration / 2).await;
        throughput(addr, Via::Rest, connections, duration / 2).await;

        let (rest_rps, mcp_rps, ratios) = load::rounds(
            rounds,
            || throughput(addr, Via::Rest, connections, duration),
            || throughput(addr, Via::Mcp, connections, duration),
        )
        .await;
        let (rest, rest_lo, rest_hi) = quantiles(rest_rps);
        let (mcp, mcp_lo, mcp_hi) = quantiles(mcp_rps);
        let (ratio, ratio_lo, ratio_hi) = quantiles(ratios);
        println!(
            "`add` over HTTP, {connections} connections, {rounds} rounds of {duration:?} (target REST >= 1.5x MCP)"
        );
        println!("  REST POST /api/tools/add: {rest:8.0} req/s (p10 {rest_lo:.0}, p90 {rest_hi:.0})");
        println!("  MCP tools/call:           {mcp:8.0} req/s (p10 {mcp_lo:.0}, p90 {mcp_hi:.0})");
        println!("  ratio REST / MCP: {ratio:.2} (p10 {ratio_lo:.2}, p90 {ratio_hi:.2})");
    });
}
