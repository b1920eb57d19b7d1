//! What observing costs a call (issue #25): the same calls on an executor
//! with an execution log and one more observer, against one with neither.
//!
//! Three calls, each on both executors, one after another (the latency a
//! call pays, not the throughput of a saturated machine):
//!
//! - `add` through `Executor::invoke`: a body that does nothing, so the
//!   ratio is the recording's own cost against the bare pipeline;
//! - `product` through `Executor::invoke`: a body that reads one row from
//!   SQLite through sqlx, as a tool that does some work does;
//! - `add` as an MCP client calls it: a `tools/call` over Streamable HTTP
//!   (`serve_http_on`, stateless, JSON responses) on loopback.
//!
//! Each round runs a batch of one call on both executors, the one first
//! that went second in the round before; the report is the median of the
//! per-round ratios (on / off), with p10 and p90, and how many events each
//! observer received and dropped.
//!
//! `cargo bench -p toolwright-bench --bench observe`

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sqlx::SqlitePool;
use sqlx::sqlite::SqlitePoolOptions;
use toolwright::mcp::{HttpOptions, McpServer, allow_anonymous};
use toolwright::observe::{Event, ExecutionLog};
use toolwright::{Catalog, Container, Executor, Inject, tool};

#[path = "common/stats.rs"]
mod stats;
use stats::quantiles;

/// Add two integers.
#[tool(key = "math.add", effect = read, authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// A product of the catalog.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Product {
    id: i64,
    name: String,
    cents: i64,
}

/// One product, by its identifier.
#[tool(key = "shop.product", effect = read, authorize = public)]
async fn product(id: i64, db: Inject<SqlitePool>) -> Option<Product> {
    let row: Option<(i64, String, i64)> =
        sqlx::query_as("SELECT id, name, cents FROM products WHERE id = ?")
            .bind(id)
            .fetch_optional(&*db)
            .await
            .ok()
            .flatten();
    row.map(|(id, name, cents)| Product { id, name, cents })
}

/// An in-memory SQLite database of 1,000 products.
async fn products() -> SqlitePool {
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect("sqlite::memory:")
        .await
        .unwrap();
    sqlx::query("CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, cents INTEGER NOT NULL)")
        .execute(&pool)
        .await
        .unwrap();
    for id in 1..=1_000_i64 {
        sqlx::query("INSERT INTO products (id, name, cents) VALUES (?, ?, ?)")
            .bind(id)
            .bind(format!("product {id}"))
            .bind(id * 100)
            .execute(&pool)
            .await
            .unwrap();
    }
    pool
}

/// The executor of both tools: observed (an execution log and one more
/// observer) or not.
fn executor(pool: &SqlitePool, observed: bool) -> Executor {
    let catalog = Catalog::builder()
        .register::<AddArgs>()
        .register::<ProductArgs>()
        .build()
        .unwrap();
    let container = Container::builder()
        .app(std::sync::Arc::new(pool.clone()))
        .build();
    let builder = Executor::builder(catalog, container);
    let builder = match observed {
        false => builder,
        true => builder
            .observe(ExecutionLog::new(10_000).unwrap())
            .observe(|event: &Event| {
                black_box(event);
            }),
    };
    builder.build().unwrap()
}

/// Serves `executor` over Streamable HTTP on loopback.
async fn serve(executor: Executor) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let server = McpServer::<()>::new(executor, "toolwright-bench", "0");
    let options = HttpOptions::default().stateless(true).json_response(true);
    tokio::spawn(server.serve_http_on(listener, allow_anonymous(()), options));
    format!("http://{addr}/mcp")
}

#[path = "common/tools_call.rs"]
mod tools_call;

/// One `tools/call` of `add` over HTTP; panics unless it answers 5.
async fn http_call(client: &reqwest::Client, url: &str) {
    let body = tools_call::add_request(client, url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.contains('5') && !body.contains("\"error\""), "{body}");
}

/// How one variant runs `n` calls on an executor.
#[derive(Clone, Copy)]
enum Call {
    Add,
    Product,
    Http,
}

struct Side {
    executor: Executor,
    url: String,
}

struct Bench {
    off: Side,
    on: Side,
    client: reqwest::Client,
}

impl Bench {
    async fn run(&self, call: Call, observed: bool, n: u64) -> Duration {
        let side = if observed { &self.on } else { &self.off };
        let add = json!({"a": 2, "b": 3});
        let started = Instant::now();
        for i in 0..n {
            match call {
                Call::Add => {
                    let result = side.executor.invoke("add", add.clone(), &()).await;
                    black_box(result.unwrap());
                }
                Call::Product => {
                    let id = json!({"id": 1 + i as i64 % 1_000});
                    let result: Value = side.executor.invoke("product", id, &()).await.unwrap();
                    assert!(!result.is_null());
                }
                Call::Http => http_call(&self.client, &side.url).await,
            }
        }
        started.elapsed()
    }
}

fn main() {
    // `cargo test --benches` runs this without `--bench`: a short run.
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = if full { 31 } else { 3 };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let pool = products().await;
        let (off, on) = (executor(&pool, false), executor(&pool, true));
        let bench = Bench {
            off: Side {
                url: serve(off.clone()).await,
                executor: off,
            },
            on: Side {
                url: serve(on.clone()).await,
                executor: on,
            },
            client: reqwest::Client::new(),
        };
        let variants = [
            ("add, invoke", Call::Add, if full { 20_000 } else { 1_000 }),
            ("product (SQLite), invoke", Call::Product, if full { 2_000 } else { 100 }),
            ("add, MCP over HTTP", Call::Http, if full { 500 } else { 20 }),
        ];
        println!("a call with an execution log and one observer, against none: {rounds} rounds");
        for (name, call, batch) in variants {
            // Warm up both sides.
            bench.run(call, false, batch).await;
            bench.run(call, true, batch).await;
            let (mut off_ns, mut on_ns, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
            for round in 0..rounds {
                let per_call = |d: Duration| d.as_nanos() as f64 / batch as f64;
                let (off, on) = if round % 2 == 0 {
                    let off = bench.run(call, false, batch).await;
                    (off, bench.run(call, true, batch).await)
                } else {
                    let on = bench.run(call, true, batch).await;
                    (bench.run(call, false, batch).await, on)
                };
                off_ns.push(per_call(off));
                on_ns.push(per_call(on));
                ratios.push(per_call(on) / per_call(off));
            }
            let (off, _, _) = quantiles(off_ns);
            let (on, _, _) = quantiles(on_ns);
            let (ratio, low, high) = quantiles(ratios);
            println!(
                "  {name:<26} off {off:9.0} ns, on {on:9.0} ns: {ratio:.2}x (p10 {low:.2}, p90 {high:.2})"
            );
        }
        for stats in bench.on.executor.observer_stats() {
            println!("  {stats:?}");
        }
    });
}
