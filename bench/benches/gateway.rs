//! What importing an MCP server costs a call: `executor.invoke` of an
//! imported tool (the import's pipeline, then the upstream) against the
//! same call made directly with rmcp's client, to the same upstream, in
//! the same run.
//!
//! The upstream is rmcp's own `#[tool_router]` calculator
//! (`common/rmcp_add.rs`): over stdio, this bench's own binary started
//! with `--upstream` as a child process; over Streamable HTTP, served on
//! loopback in this process. Each round runs each way for a fixed time
//! with 1 and with 16 calls in flight, in rotating order; the report is
//! the median of the per-round ratios. The HTTP upstream counts the
//! sessions it opens: one per client, whatever the number of calls.
//!
//! `cargo bench -p toolwright-bench --bench gateway`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{
    StreamableHttpClientTransport, StreamableHttpServerConfig, StreamableHttpService,
    TokioChildProcess,
};
use serde_json::json;
use toolwright::import::RemoteTools;
use toolwright::import::mcp::{Allowlist, HttpUpstream, Imported, StdioUpstream};
use toolwright::registry::Registry;
use toolwright::{Catalog, Container, Effect, Executor, Principal};

#[path = "common/rmcp_add.rs"]
mod rmcp_add;
use rmcp_add::RmcpCalculator;

#[path = "common/stats.rs"]
mod stats;
use stats::quantiles;

/// The calling side.
struct Caller;

impl Principal for Caller {
    fn id(&self) -> &str {
        "bench"
    }
}

type Client = RunningService<RoleClient, ()>;

/// One way to call `add`: directly, or through an executor.
#[derive(Clone)]
enum Way {
    Direct(Arc<Client>),
    Imported(Arc<Executor>),
}

impl Way {
    async fn call(&self) -> bool {
        match self {
            Way::Direct(client) => {
                let mut params = CallToolRequestParams::new("add");
                params.arguments = json!({"a": 2, "b": 3}).as_object().cloned();
                client
                    .call_tool(params)
                    .await
                    .is_ok_and(|r| r.is_error != Some(true))
            }
            Way::Imported(executor) => executor
                .invoke("calc_add", json!({"a": 2, "b": 3}), &Caller)
                .await
                .is_ok_and(|sum| sum == json!("5")),
        }
    }
}

#[path = "common/load.rs"]
mod load;

/// Calls completed per second with `in_flight` callers during `duration`.
async fn throughput(way: &Way, in_flight: usize, duration: Duration) -> f64 {
    let worker = || {
        let way = way.clone();
        move || {
            let way = way.clone();
            async move { way.call().await }
        }
    };
    load::throughput(worker, in_flight, duration).await
}

/// An executor serving the `add` of `imported`.
fn executor(imported: Imported) -> Way {
    let registry = Registry::new(Catalog::empty());
    imported.register(&registry).unwrap();
    Way::Imported(Arc::new(
        Executor::builder(registry, Container::default())
            .build()
            .unwrap(),
    ))
}

/// The calculator over stdio: what `--upstream` runs.
async fn serve_stdio() {
    let service = RmcpCalculator::new()
        .serve(rmcp::transport::stdio())
        .await
        .unwrap();
    let _ = service.waiting().await;
}

/// Both ways over stdio: two child processes of this binary.
async fn over_stdio() -> (Way, Way) {
    let program = std::env::current_exe().unwrap().display().to_string();
    let mut command = tokio::process::Command::new(&program);
    command.arg("--upstream");
    let direct = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let imported = StdioUpstream::new("calc", &program, ["--upstream"])
        .tools(RemoteTools::only(["add"]))
        .effect("add", Effect::Read)
        .connect(&Allowlist::new().command(&program, ["--upstream"]))
        .await
        .unwrap();
    (Way::Direct(Arc::new(direct)), executor(imported))
}

/// Both ways over Streamable HTTP to one upstream on loopback, and the
/// count of sessions it opened.
async fn over_http() -> (Way, Way, Arc<AtomicU64>) {
    let sessions = Arc::new(AtomicU64::new(0));
    let opened = sessions.clone();
    let service = StreamableHttpService::new(
        move || {
            opened.fetch_add(1, Ordering::Relaxed);
            Ok(RmcpCalculator::new())
        },
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let direct = ().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await.unwrap();
    let imported = HttpUpstream::new("calc", &url)
        .tools(RemoteTools::only(["add"]))
        .effect("add", Effect::Read)
        .connect(&Allowlist::new().url(&url))
        .await
        .unwrap();
    (Way::Direct(Arc::new(direct)), executor(imported), sessions)
}

/// Interleaved rounds of both ways, printed.
async fn compare(transport: &str, direct: &Way, imported: &Way, rounds: usize, duration: Duration) {
    for in_flight in [1, 16] {
        assert!(direct.call().await && imported.call().await, "both answer");
        throughput(direct, in_flight, duration / 2).await;
        throughput(imported, in_flight, duration / 2).await;
        let (mut theirs, mut ours, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            let (a, b) = if round % 2 == 0 {
                let a = throughput(imported, in_flight, duration).await;
                (a, throughput(direct, in_flight, duration).await)
            } else {
                let b = throughput(direct, in_flight, duration).await;
                (throughput(imported, in_flight, duration).await, b)
            };
            ours.push(a);
            theirs.push(b);
            ratios.push(a / b);
        }
        let (ours, _, _) = quantiles(ours);
        let (theirs, _, _) = quantiles(theirs);
        let (ratio, lo, hi) = quantiles(ratios);
        println!(
            "{transport}, {in_flight:>2} in flight: imported {ours:7.0} calls/s, direct {theirs:7.0}; \
             ratio {ratio:.2} (p10 {lo:.2}, p90 {hi:.2})"
        );
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if std::env::args().any(|a| a == "--upstream") {
        return runtime.block_on(serve_stdio());
    }
    // `cargo test --benches` runs this without `--bench`: one short round.
    let full = std::env::args().any(|a| a == "--bench");
    let (rounds, duration) = if full {
        (9, Duration::from_secs(2))
    } else {
        (1, Duration::from_millis(100))
    };
    runtime.block_on(async {
        let (direct, imported) = over_stdio().await;
        compare("stdio", &direct, &imported, rounds, duration).await;
        let (direct, imported, sessions) = over_http().await;
        compare("HTTP ", &direct, &imported, rounds, duration).await;
        println!(
            "HTTP sessions the upstream opened: {} (one per client, for every call of every round)",
            sessions.load(Ordering::Relaxed)
        );
    });
}
