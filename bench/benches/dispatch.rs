//! What one call costs in-process, with no transport: toolwright's MCP
//! `call_tool` against rmcp's `ToolRouter::call`, both against the floor
//! (deserialize the arguments, call the fn directly, serialize the result).
//!
//! The same two-integer `add` five ways. The MCP variants start from the
//! same parsed request (a `CallToolRequestParams` and a `RequestContext`
//! built per call) and end with a `CallToolResponse`:
//!
//! - toolwright: `McpHandler::call_tool` through rmcp's `ServerHandler`
//!   trait (the caller's context, name lookup, `Executor::invoke`, the
//!   `CallToolResult` with the text `3` and `structuredContent`
//!   `{"result": 3}`, as toolwright answers for an `i64` output);
//! - rmcp: what its `#[tool_handler]`-generated `call_tool` does, build a
//!   `ToolCallContext`, then `ToolRouter::call` (name lookup, `Parameters<T>`
//!   extraction, the call, the `CallToolResult`), for `add`, which returns
//!   a `String` (text only), and for `add_json`, which returns `Json<Sum>`
//!   (the same `structuredContent`, and its JSON as text).
//!
//! The bare `Executor::invoke` variant returns a `Value` and builds no
//! request context or MCP result: it does less work than either and is not
//! comparable with rmcp's router.
//!
//! A `RequestContext` needs a `Peer`, which rmcp only hands out from a
//! running service, so one is served over an idle `tokio::io::duplex` once,
//! before measuring; no message ever crosses it. Both MCP variants use it.
//!
//! Each round runs a batch of every variant in rotating order; the report is
//! the median of the per-round ratios (`ROUNDS`, `BATCH` override the 41
//! rounds of 20,000 calls), repeated as `ratio` lines at the end.
//!
//! `cargo bench -p toolwright-bench --bench dispatch`, or, for the figure
//! BENCHMARKS.md records, the median over several processes (one process's
//! ratios carry its memory layout's bias): `bench/across.sh dispatch`
//!
//! `DISPATCH_CALLS=VARIANT:N` (`floor`, `invoke`, `toolwright_mcp`,
//! `rmcp_text`: `add`, `rmcp_json`: `add_json`) makes N calls of one variant
//! and nothing else, for an instruction counter: `bench/instructions.sh
//! dispatch` runs each under callgrind with N and with 0 calls, and divides
//! the difference of the calling thread's instructions by N.

use std::hint::black_box;
use std::time::{Duration, Instant};

use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject, NumberOrString,
};
use rmcp::service::{RequestContext, RunningService, serve_directly};
use rmcp::{Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};
use toolwright::mcp::{McpHandler, McpServer};
use toolwright::{Catalog, Container, Executor};

// ------------------------------------------------------------------ floor

#[derive(serde::Deserialize)]
struct Direct {
    a: i64,
    b: i64,
}

async fn add_direct(a: i64, b: i64) -> i64 {
    a + b
}

/// What any tool layer must do at least.
async fn floor(arguments: &Value) -> Value {
    let args: Direct = serde_json::from_value(arguments.clone()).unwrap();
    serde_json::to_value(add_direct(args.a, args.b).await).unwrap()
}

// ------------------------------------------------------------- toolwright

/// Add two integers.
#[toolwright::tool(key = "math.add", effect = read, authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

// ------------------------------------------------------------------- rmcp

#[path = "common/rmcp_add.rs"]
mod rmcp_add;
use rmcp_add::RmcpCalculator;

#[path = "common/stats.rs"]
mod stats;
use stats::{env_or, quantiles};

/// A running rmcp server, for the `Peer` every `RequestContext` carries.
struct RmcpServer {
    service: RunningService<RoleServer, RmcpCalculator>,
    // Dropping the client end would close the connection.
    _client_end: tokio::io::DuplexStream,
}

impl RmcpServer {
    /// Serves over an in-memory pipe nobody writes to; needs the runtime.
    fn start() -> Self {
        let (server_end, client_end) = tokio::io::duplex(4096);
        RmcpServer {
            service: serve_directly(RmcpCalculator::new(), server_end, None),
            _client_end: client_end,
        }
    }

    fn calculator(&self) -> &RmcpCalculator {
        self.service.service()
    }

    fn peer(&self) -> Peer<RoleServer> {
        self.service.peer().clone()
    }
}

// ------------------------------------------------------------------ bench

struct Bench {
    runtime: tokio::runtime::Runtime,
    arguments: Value,
    executor: Executor,
    handler: McpHandler<()>,
    rmcp: RmcpServer,
    // An MCP request carries the arguments as the object inside the same JSON value.
    mcp_arguments: JsonObject,
}

impl Bench {
    fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
        let arguments = json!({"a": 1, "b": 2});
        let executor = Executor::new(catalog, Container::default()).unwrap();
        Bench {
            handler: McpServer::new(executor.clone(), "toolwright-bench", "0").handler(()),
            rmcp: runtime.block_on(async { RmcpServer::start() }),
            runtime,
            mcp_arguments: arguments.as_object().unwrap().clone(),
            arguments,
            executor,
        }
    }

    // Every variant clones its arguments per call: each pays for owning the input.
    fn floor(&self, iters: u64) -> Duration {
        self.runtime.block_on(async {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(floor(black_box(&self.arguments)).await);
            }
            start.elapsed()
        })
    }

    fn invoke(&self, iters: u64) -> Duration {
        self.runtime.block_on(async {
            let start = Instant::now();
            for _ in 0..iters {
                let args = black_box(&self.arguments).clone();
                black_box(self.executor.invoke("add", args, &()).await.unwrap());
            }
            start.elapsed()
        })
    }

    fn toolwright_mcp(&self, iters: u64) -> Duration {
        self.runtime.block_on(async {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(self.toolwright_mcp_call().await);
            }
            start.elapsed()
        })
    }

    fn rmcp(&self, tool: &'static str, iters: u64) -> Duration {
        self.runtime.block_on(async {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(self.rmcp_call(tool).await);
            }
            start.elapsed()
        })
    }

    /// A request for `tool` as rmcp's service loop hands it to `call_tool`.
    fn request(&self, tool: &'static str) -> (CallToolRequestParams, RequestContext<RoleServer>) {
        let params =
            CallToolRequestParams::new(tool).with_arguments(black_box(&self.mcp_arguments).clone());
        let context = RequestContext::new(NumberOrString::Number(1), self.rmcp.peer());
        (params, context)
    }

    /// What rmcp's service loop calls for toolwright's server.
    async fn toolwright_mcp_call(&self) -> CallToolResponse {
        let (params, context) = self.request("add");
        self.handler.call_tool(params, context).await.unwrap()
    }

    /// Exactly what `#[tool_handler]`'s `call_tool` receives and does.
    async fn rmcp_call(&self, tool: &'static str) -> CallToolResponse {
        let (params, context) = self.request(tool);
        let calculator = self.rmcp.calculator();
        let call = ToolCallContext::new(calculator, params, context);
        calculator.tool_router.call(call).await.unwrap()
    }

    /// Each variant answers 3 to `{"a": 1, "b": 2}` before anything is timed.
    fn check(&self) {
        self.runtime.block_on(async {
            assert_eq!(floor(&self.arguments).await, json!(3), "floor");
            let sum = self.executor.invoke("add", self.arguments.clone(), &());
            assert_eq!(sum.await.unwrap(), json!(3), "toolwright invoke");
            let sum = Some(json!({"result": 3}));
            let result = complete(self.toolwright_mcp_call().await, "3", "toolwright MCP");
            assert_eq!(result.structured_content, sum, "toolwright MCP");
            // rmcp's `add` returns a `String`: text only.
            let result = complete(self.rmcp_call("add").await, "3", "rmcp add");
            assert_eq!(result.structured_content, None, "rmcp add");
            let text = r#"{"result":3}"#;
            let result = complete(self.rmcp_call("add_json").await, text, "rmcp add_json");
            assert_eq!(result.structured_content, sum, "rmcp add_json");
        });
    }
}

/// The result of a successful call, whose text is `text`.
fn complete(response: CallToolResponse, text: &str, variant: &str) -> CallToolResult {
    let CallToolResponse::Complete(result) = response else {
        panic!("{variant}: not a complete result");
    };
    assert_eq!(result.is_error, Some(false), "{variant}: an error result");
    let first = result.content.first().and_then(|block| block.as_text());
    assert_eq!(first.map(|t| t.text.as_str()), Some(text), "{variant}");
    result
}

/// `DISPATCH_CALLS=VARIANT:N`: N calls of one variant, nothing timed or printed.
fn count_calls(spec: &str) {
    let (variant, calls) = spec
        .split_once(':')
        .expect("DISPATCH_CALLS is VARIANT:N, such as toolwright_mcp:20000");
    let calls: u64 = calls.parse().expect("N is a number of calls");
    let bench = Bench::new();
    bench.check();
    match variant {
        "floor" => bench.floor(calls),
        "invoke" => bench.invoke(calls),
        "toolwright_mcp" => bench.toolwright_mcp(calls),
        "rmcp_text" => bench.rmcp("add", calls),
        "rmcp_json" => bench.rmcp("add_json", calls),
        other => panic!(
            "unknown variant {other:?}: floor, invoke, toolwright_mcp, rmcp_text or rmcp_json"
        ),
    };
}

fn main() {
    if let Ok(spec) = std::env::var("DISPATCH_CALLS") {
        count_calls(&spec);
        return;
    }
    // `cargo test --benches` runs this without `--bench`: a short smoke run.
    let full = std::env::args().any(|a| a == "--bench");
    let (rounds, batch) = if full { (41, 20_000) } else { (3, 1_000) };
    let rounds = env_or("ROUNDS", rounds) as usize;
    let batch = env_or("BATCH", batch);
    assert!(rounds > 0 && batch > 0, "ROUNDS and BATCH must be positive");

    let bench = Bench::new();
    bench.check();
    // Each with the short name of its `ratio` line and its name in the table.
    type Variant<'a> = (&'a str, &'a str, Box<dyn Fn(u64) -> Duration + 'a>);
    let variants: Vec<Variant<'_>> = vec![
        ("floor", "floor", Box::new(|n| bench.floor(n))),
        (
            "invoke",
            "toolwright bare `invoke` (a `Value`, not comparable)",
            Box::new(|n| bench.invoke(n)),
        ),
        (
            "toolwright_mcp",
            "toolwright MCP `call_tool`",
            Box::new(|n| bench.toolwright_mcp(n)),
        ),
        (
            "rmcp_text",
            "rmcp `ToolRouter::call`, text (`add`)",
            Box::new(|n| bench.rmcp("add", n)),
        ),
        (
            "rmcp_json",
            "rmcp `ToolRouter::call`, structured + text (`add_json`)",
            Box::new(|n| bench.rmcp("add_json", n)),
        ),
    ];
    // Warm up every variant.
    for (_, _, run) in &variants {
        run(batch);
    }

    let mut per_call: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for round in 0..rounds {
        for k in 0..variants.len() {
            let i = (round + k) % variants.len();
            let elapsed = (variants[i].2)(batch);
            per_call[i].push(elapsed.as_nanos() as f64 / batch as f64);
        }
    }
    let per_round = |of: usize, to: usize| -> Vec<f64> {
        per_call[of]
            .iter()
            .zip(&per_call[to])
            .map(|(a, b)| a / b)
            .collect()
    };

    println!("in-process `add` from JSON arguments, {rounds} rounds x {batch} calls per variant\n");
    println!("| variant | median per call (p10–p90) | ratio to floor (p10–p90) |");
    println!("|---|---|---|");
    let mut lines = Vec::new();
    for (i, (short, name, _)) in variants.iter().enumerate() {
        let (ns, ns_lo, ns_hi) = quantiles(per_call[i].clone());
        let (ratio, ratio_lo, ratio_hi) = quantiles(per_round(i, 0));
        let ratio = if i == 0 {
            "1.00×".to_owned()
        } else {
            lines.push(format!("ratio {short}/floor {ratio:.3}"));
            format!("**{ratio:.2}×** ({ratio_lo:.2}–{ratio_hi:.2})")
        };
        println!("| {name} | {ns:.0} ns ({ns_lo:.0}–{ns_hi:.0}) | {ratio} |");
    }
    for (rmcp, label) in [(3, "text"), (4, "structured + text")] {
        let (ratio, ratio_lo, ratio_hi) = quantiles(per_round(2, rmcp));
        println!(
            "| **toolwright MCP / rmcp {label}**, per round | | **{ratio:.2}** ({ratio_lo:.2}–{ratio_hi:.2}) |"
        );
        lines.push(format!(
            "ratio toolwright_mcp/{} {ratio:.3}",
            variants[rmcp].0
        ));
    }
    // The medians again, one per line, for `bench/across.sh`.
    println!("\n{}", lines.join("\n"));
}
