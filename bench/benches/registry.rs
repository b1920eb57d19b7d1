//! What the live registry costs (issue #23's targets):
//!
//! 1. A call through a view with a five-rule policy, against the same call
//!    with neither: interleaved rounds of `invoke` of a public `add`, the
//!    median of the per-round ratios (target: at most 1.1×).
//! 2. With 10,000 tools: disabling the tools of one tag and exporting a
//!    view for a model (strict OpenAI, as JSON text) again (target: under
//!    50 ms), and exporting an unchanged view, served from the cache of its
//!    generation (target: under 1 ms).
//!
//! The 10,000 tools are built at run time (`DynamicTool`), each with a
//! three-property schema and one of ten tags, so that this bench compiles in
//! seconds; the registry treats them exactly as `#[tool]`s.
//!
//! `cargo bench -p toolwright-bench --bench registry` (`ROUNDS`, `BATCH`,
//! `TOOLS`, `REPEATS` override 41 rounds of 20,000 calls, 10,000 tools and
//! 21 repeats).

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolwright::providers::Format;
use toolwright::{
    Catalog, Container, Effect, Executor,
    registry::{DynamicTool, Policy, Registry, Rule, SearchIndex, Selector, View},
    tool,
};

#[path = "common/stats.rs"]
mod stats;
use stats::{env_or, quantiles};

/// Add two numbers.
#[tool(key = "math.add", effect = read, authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Five rules a production policy might have; `add` is decided by the
/// fourth, so a call meets them all.
fn five_rules() -> Policy {
    Policy::new()
        .rule(Rule::deny_tag("privileged"))
        .rule(Rule::ask_destructive())
        .rule(Rule::ask_open_world())
        .rule(Rule::allow("math", Selector::namespace("math")))
        .rule(Rule::allow_read_only())
}

fn calls(rounds: usize, batch: u64) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    let plain = Executor::new(catalog.clone(), Container::default()).unwrap();
    let governed = Executor::new(catalog, Container::default()).unwrap();
    governed.registry().set_policy(five_rules());
    let viewed = governed.view(Selector::effect(Effect::Read).and(!Selector::tag("privileged")));
    let arguments = json!({"a": 1, "b": 2});
    let run = |executor: &Executor, n: u64| -> Duration {
        runtime.block_on(async {
            let start = Instant::now();
            for _ in 0..n {
                let args = black_box(&arguments).clone();
                black_box(executor.invoke("add", args, &()).await.unwrap());
            }
            start.elapsed()
        })
    };
    let variants = [&plain, &viewed];
    for executor in variants {
        run(executor, batch);
    }
    let mut per_call: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for round in 0..rounds {
        for k in 0..2 {
            let i = (round + k) % 2;
            let elapsed = run(variants[i], batch);
            per_call[i].push(elapsed.as_nanos() as f64 / batch as f64);
        }
    }
    let ratios = per_call[1]
        .iter()
        .zip(&per_call[0])
        .map(|(v, p)| v / p)
        .collect();
    let (plain_ns, ..) = quantiles(per_call[0].clone());
    let (viewed_ns, ..) = quantiles(per_call[1].clone());
    let (ratio, lo, hi) = quantiles(ratios);
    println!("`invoke` of `add`, {rounds} rounds x {batch} calls per variant");
    println!("  no view, no policy:           {plain_ns:.0} ns per call");
    println!("  a view and a five-rule policy: {viewed_ns:.0} ns per call");
    println!("  ratio per round: **{ratio:.3}x** ({lo:.3}-{hi:.3}) (target <= 1.1x)\n");
}

/// Tool `i` of the large registry: three properties, one of ten tags, one
/// tool in seven a write.
fn generated(i: usize) -> DynamicTool {
    let builder = DynamicTool::builder(format!("scale.kind{i}.find"), format!("find_kind{i}"))
        .description(format!("Find records of kind {i} by name, within a limit."))
        .tags([format!("tag{}", i % 10)])
        .input_schema(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Part of the name."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "active": {"type": "boolean"},
            },
            "required": ["name", "limit", "active"],
            "additionalProperties": false,
        }))
        .handler(|call| Box::pin(async move { Ok(call.into_arguments()) }));
    let builder = if i.is_multiple_of(7) {
        builder
            .effect(Effect::Write)
            .approve(|_: &(), _| Box::pin(async { true }))
    } else {
        builder.effect(Effect::Read)
    };
    builder.build().unwrap()
}

fn scale(tools: usize, repeats: usize) {
    let registry = Registry::new(Catalog::builder().build().unwrap());
    registry.register_all((0..tools).map(generated)).unwrap();
    let executor = Executor::new(registry.clone(), Container::default()).unwrap();
    let reads = executor.view(View::new(Selector::effect(Effect::Read)));
    let format = Format::OpenAiChat { strict: true };
    let exported = reads.tools().export(format).unwrap();
    let listed: Vec<Value> = serde_json::from_str(exported.get()).unwrap();

    let mut changed = Vec::new();
    let mut cached = Vec::new();
    for repeat in 0..repeats {
        let start = Instant::now();
        registry
            .disable(&Selector::tag("tag3"), format!("incident {repeat}"))
            .unwrap();
        black_box(reads.tools().export(format).unwrap());
        changed.push(start.elapsed().as_secs_f64() * 1e3);

        let start = Instant::now();
        black_box(reads.tools().export(format).unwrap());
        cached.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let (changed, c_lo, c_hi) = quantiles(changed);
    let (cached, k_lo, k_hi) = quantiles(cached);
    println!(
        "{tools} tools ({} read tools exported, strict OpenAI as JSON text), {repeats} repeats",
        listed.len()
    );
    println!(
        "  disable one tag, export the view again: **{changed:.1} ms** ({c_lo:.1}-{c_hi:.1}) (target < 50 ms)"
    );
    println!(
        "  export the unchanged view:              **{cached:.4} ms** ({k_lo:.4}-{k_hi:.4}) (target < 1 ms)"
    );
    search(&reads, repeats);
}

/// Building a search index of the view's tools, and searching it.
fn search(reads: &Executor, repeats: usize) {
    let tools = reads.tools();
    let (mut built, mut searched) = (Vec::new(), Vec::new());
    let queries = [
        "records of kind 4242",
        "find by name",
        "tag3",
        "kind 77 limit",
    ];
    for _ in 0..repeats {
        let start = Instant::now();
        let index = black_box(SearchIndex::new(&tools));
        built.push(start.elapsed().as_secs_f64() * 1e3);
        for query in queries {
            let start = Instant::now();
            black_box(index.search(query, 5));
            searched.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    let (built, b_lo, b_hi) = quantiles(built);
    let (p50, _, _) = quantiles(searched.clone());
    searched.sort_by(f64::total_cmp);
    let p99 = searched[((searched.len() - 1) as f64 * 0.99).round() as usize];
    println!("  search index of the view built:         **{built:.1} ms** ({b_lo:.1}-{b_hi:.1})");
    println!("  a search, 5 hits: p50 **{p50:.3} ms**, p99 **{p99:.3} ms**");
}

fn main() {
    // `cargo test --benches` runs this without `--bench`: a short smoke run.
    let full = std::env::args().any(|a| a == "--bench");
    let (rounds, batch, tools, repeats) = if full {
        (41, 20_000, 10_000, 21)
    } else {
        (3, 1_000, 500, 3)
    };
    let rounds = env_or("ROUNDS", rounds) as usize;
    let batch = env_or("BATCH", batch);
    let tools = env_or("TOOLS", tools) as usize;
    let repeats = env_or("REPEATS", repeats) as usize;
    calls(rounds, batch);
    scale(tools, repeats);
}
