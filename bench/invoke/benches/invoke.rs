//! What a call costs: `Executor::invoke` and the typed `call` of a trivial
//! tool against the floor (deserialize the arguments, call the fn directly,
//! serialize the result).
//!
//! `cargo bench -p toolwright-invoke-bench` prints criterion's estimates,
//! then the interleaved ratios recorded in BENCHMARKS.md: on shared machines
//! sequential runs drift, so each round runs a batch of every variant in
//! rotating order and the report is the median of the per-round ratios
//! (`ROUNDS` overrides the 41 rounds), repeated as `ratio` lines at the end.
//! BENCHMARKS.md records their median over several processes (one
//! process's ratios carry its memory layout's bias): `bench/across.sh invoke`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use serde_json::{Value, json};
use toolwright::observe::{Event, ExecutionLog};
use toolwright::{
    Catalog, Container, Executor, Inject,
    approval::Digest,
    executor::Verdict,
    scope::{ResolveError, Scope},
    tool,
};

/// Add two integers.
#[tool(key = "math.add", effect = read, authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Add two integers after an `.await` (of a future that is ready at once):
/// a body that may wait, so its future is boxed, as most tools' are.
#[tool(key = "math.add_later", effect = read, authorize = public)]
async fn add_later(a: i64, b: i64) -> i64 {
    std::future::ready(a + b).await
}

/// Add two integers, behind an `authorize` hook that lets everyone in: the
/// pipeline a tool with hooks takes.
#[tool(key = "math.add_checked", effect = read, authorize = anyone)]
async fn add_checked(a: i64, b: i64) -> i64 {
    a + b
}

async fn anyone<A>(_: &(), _: &toolwright::Invocation<'_, A>) -> bool {
    true
}

/// Add two integers, behind an `authorize` hook that is a plain `fn`
/// letting everyone in: answered at once, with no future to wait for.
#[tool(key = "math.add_allowed", effect = read, authorize = everyone)]
async fn add_allowed(a: i64, b: i64) -> i64 {
    a + b
}

fn everyone<A>(_: &(), _: &toolwright::Invocation<'_, A>) -> Verdict {
    Verdict::Allow
}

/// Add two `f64`s: a schema deserializing enforces, so no validator runs.
#[tool(key = "math.add_f64", effect = read, authorize = public)]
async fn add_f64(a: f64, b: f64) -> f64 {
    a + b
}

/// Add two `f32`s: their schema bounds them by `f32`'s range, which
/// deserializing does not enforce (serde reads a larger number as
/// infinity), so the executor looks for such a number in the arguments
/// before it skips the validator.
#[tool(key = "math.add_f32", effect = read, authorize = public)]
async fn add_f32(a: f32, b: f32) -> f32 {
    a + b
}

/// A request-scoped value, one type per slot so a tool can inject five.
struct Slot<const N: usize>(u64);

/// Add two integers, with one request-scoped dependency.
#[tool(key = "math.add_one", effect = read, authorize = public)]
async fn add_one(a: i64, b: i64, s0: Inject<Slot<0>>) -> i64 {
    a + b + s0.0 as i64
}

/// Add two integers, with five request-scoped dependencies.
#[tool(key = "math.add_five", effect = read, authorize = public)]
async fn add_five(
    a: i64,
    b: i64,
    s0: Inject<Slot<0>>,
    s1: Inject<Slot<1>>,
    s2: Inject<Slot<2>>,
    s3: Inject<Slot<3>>,
    s4: Inject<Slot<4>>,
) -> i64 {
    a + b + (s0.0 + s1.0 + s2.0 + s3.0 + s4.0) as i64
}

fn slots() -> Container {
    fn slot<const N: usize>(
        builder: toolwright::scope::ContainerBuilder,
    ) -> toolwright::scope::ContainerBuilder {
        builder.request::<Slot<N>>(|_: Scope| async { Ok::<_, ResolveError>(Slot::<N>(0)) })
    }
    slot::<4>(slot::<3>(slot::<2>(slot::<1>(slot::<0>(
        Container::builder(),
    )))))
    .build()
}

/// The floor: what any tool layer must do at least.
fn floor(arguments: &Value) -> Value {
    #[derive(serde::Deserialize)]
    struct Direct {
        a: i64,
        b: i64,
    }
    let args: Direct = serde_json::from_value(arguments.clone()).unwrap();
    let sum = add_direct(args.a, args.b);
    serde_json::to_value(sum).unwrap()
}

fn add_direct(a: i64, b: i64) -> i64 {
    a + b
}

struct Bench {
    runtime: tokio::runtime::Runtime,
    executor: Executor,
    /// The same tools, with an execution log and one more observer.
    observed: Executor,
    arguments: Value,
}

impl Bench {
    fn new() -> Self {
        let catalog = Catalog::builder()
            .register::<AddArgs>()
            .register::<AddLaterArgs>()
            .register::<AddOneArgs>()
            .register::<AddFiveArgs>()
            .register::<AddCheckedArgs>()
            .register::<AddAllowedArgs>()
            .register::<AddF64Args>()
            .register::<AddF32Args>()
            .build()
            .unwrap();
        let observed = Executor::builder(catalog.clone(), slots())
            .observe(ExecutionLog::new(10_000).unwrap())
            .observe(|event: &Event| {
                black_box(event);
            })
            .build()
            .unwrap();
        Bench {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            executor: Executor::new(catalog, slots()).unwrap(),
            observed,
            arguments: json!({"a": 2, "b": 3}),
        }
    }

    fn floor(&self, iters: u64) -> Duration {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(floor(black_box(&self.arguments)));
        }
        start.elapsed()
    }

    // The arguments are cloned per call, as the floor clones them, so both
    // pay for owning the input.
    fn invoke(&self, iters: u64) -> Duration {
        self.invoke_tool("add", iters)
    }

    fn invoke_tool(&self, name: &str, iters: u64) -> Duration {
        self.invoke_on(&self.executor, name, iters)
    }

    /// `invoke` of `add` with the execution log and one observer on.
    fn observed(&self, iters: u64) -> Duration {
        self.invoke_on(&self.observed, "add", iters)
    }

    fn invoke_on(&self, executor: &Executor, name: &str, iters: u64) -> Duration {
        self.runtime.block_on(async {
            let start = Instant::now();
            for _ in 0..iters {
                let args = black_box(&self.arguments).clone();
                black_box(executor.invoke(name, args, &()).await.unwrap());
            }
            start.elapsed()
        })
    }

    fn call(&self, iters: u64) -> Duration {
        self.runtime.block_on(async {
            let start = Instant::now();
            for _ in 0..iters {
                let args = black_box(AddArgs { a: 2, b: 3 });
                black_box(self.executor.call(args, &()).await.unwrap());
            }
            start.elapsed()
        })
    }
}

fn criterion_benches(c: &mut Criterion) {
    let bench = Bench::new();
    let mut group = c.benchmark_group("add");
    group.bench_function("floor", |b| b.iter_custom(|n| bench.floor(n)));
    group.bench_function("invoke", |b| b.iter_custom(|n| bench.invoke(n)));
    group.bench_function("invoke_awaiting", |b| {
        b.iter_custom(|n| bench.invoke_tool("add_later", n))
    });
    group.bench_function("call", |b| b.iter_custom(|n| bench.call(n)));
    group.bench_function("invoke_observed", |b| b.iter_custom(|n| bench.observed(n)));
    group.finish();

    let mut group = c.benchmark_group("request_providers");
    for (providers, name) in [(0, "add"), (1, "add_one"), (5, "add_five")] {
        group.bench_function(format!("{providers}"), |b| {
            b.iter_custom(|n| bench.invoke_tool(name, n))
        });
    }
    group.finish();

    let arguments = serde_json::json!({"sku": "ACME-ANVIL", "quantity": 2, "note": "gift wrap"});
    c.bench_function("approval_digest", |b| {
        b.iter(|| Digest::of(black_box("orders.place"), black_box(&arguments)))
    });
}

criterion_group!(benches, criterion_benches);

/// `ROUNDS`, or 41.
fn rounds() -> usize {
    std::env::var("ROUNDS").map_or(41, |value| {
        value
            .parse()
            .ok()
            .filter(|&rounds| rounds > 0)
            .unwrap_or_else(|| panic!("ROUNDS must be a positive whole number, not {value:?}"))
    })
}

/// Median of per-round ratios, variants interleaved in rotating order.
fn interleaved_ratios(rounds: usize, batch: u64) {
    let bench = Bench::new();
    type Variant<'a> = (&'a str, Box<dyn Fn(u64) -> Duration + 'a>);
    let variants: Vec<Variant<'_>> = vec![
        ("floor", Box::new(|n| bench.floor(n))),
        ("invoke", Box::new(|n| bench.invoke(n))),
        ("awaiting", Box::new(|n| bench.invoke_tool("add_later", n))),
        ("call", Box::new(|n| bench.call(n))),
        ("hooked", Box::new(|n| bench.invoke_tool("add_checked", n))),
        ("fn_hook", Box::new(|n| bench.invoke_tool("add_allowed", n))),
        ("injected", Box::new(|n| bench.invoke_tool("add_one", n))),
        ("observed", Box::new(|n| bench.observed(n))),
    ];
    // Warm up every variant.
    for (_, run) in &variants {
        run(batch);
    }
    let mut per_call: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for round in 0..rounds {
        for k in 0..variants.len() {
            let i = (round + k) % variants.len();
            let elapsed = (variants[i].1)(batch);
            per_call[i].push(elapsed.as_nanos() as f64 / batch as f64);
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[v.len() / 10], v[v.len() * 9 / 10])
    };
    println!("\ninterleaved: {rounds} rounds of {batch} calls per variant");
    let mut lines = Vec::new();
    for (i, (name, _)) in variants.iter().enumerate() {
        let ratios: Vec<f64> = per_call[i]
            .iter()
            .zip(&per_call[0])
            .map(|(v, f)| v / f)
            .collect();
        let (ns, low, high) = median(per_call[i].clone());
        let (ratio, r_low, r_high) = median(ratios);
        println!(
            "{name:>8}: median {ns:7.0} ns/call (p10 {low:.0}, p90 {high:.0}); \
             ratio to floor {ratio:.2}x (p10 {r_low:.2}, p90 {r_high:.2})"
        );
        if i > 0 {
            lines.push(format!("ratio {name}/floor {ratio:.3}"));
        }
    }
    // The cost of observing, against the same call unobserved (#25).
    let position = |wanted: &str| {
        variants
            .iter()
            .position(|(name, _)| *name == wanted)
            .unwrap()
    };
    let (observed, invoke) = (position("observed"), position("invoke"));
    let ratios: Vec<f64> = per_call[observed]
        .iter()
        .zip(&per_call[invoke])
        .map(|(o, i)| o / i)
        .collect();
    let (ratio, low, high) = median(ratios);
    println!("observed: ratio to invoke {ratio:.2}x (p10 {low:.2}, p90 {high:.2})");
    for stats in bench.observed.observer_stats() {
        println!("          {stats:?}");
    }
    lines.push(format!("ratio observed/invoke {ratio:.3}"));
    // The medians again, one per line, for `bench/across.sh`.
    println!("\n{}", lines.join("\n"));
}

/// `TOOLWRIGHT_CALLS=VARIANT:N` (`floor`, `invoke`, `awaiting`: `invoke` of
/// `add_later`, whose body has an `.await`, `call`, `hooked`:
/// `invoke` of the same `add` behind an `async` `authorize` hook,
/// `fn_hook`: behind one that is a plain `fn`, or `injected`:
/// `invoke` of `add_one`, which injects one REQUEST value, `f64` and
/// `f32`: `invoke` of `add` over floats of each width, `observed`:
/// `invoke` of `add` with an execution log and one more observer): make N calls
/// of one variant and nothing else, for an instruction counter;
/// `bench/instructions.sh` runs this under callgrind.
fn count_calls(spec: &str) {
    let (variant, calls) = spec
        .split_once(':')
        .expect("TOOLWRIGHT_CALLS is VARIANT:N, such as invoke:20000");
    let calls: u64 = calls.parse().expect("N is a number of calls");
    let bench = Bench::new();
    match variant {
        "floor" => bench.floor(calls),
        "invoke" => bench.invoke(calls),
        "awaiting" => bench.invoke_tool("add_later", calls),
        "call" => bench.call(calls),
        "hooked" => bench.invoke_tool("add_checked", calls),
        "fn_hook" => bench.invoke_tool("add_allowed", calls),
        "injected" => bench.invoke_tool("add_one", calls),
        "observed" => bench.observed(calls),
        "f64" => bench.invoke_tool("add_f64", calls),
        "f32" => bench.invoke_tool("add_f32", calls),
        other => {
            panic!(
                "unknown variant {other:?}: floor, invoke, awaiting, call, hooked, fn_hook, \
                 injected, observed, f64 or f32"
            )
        }
    };
}

fn main() {
    if let Ok(spec) = std::env::var("TOOLWRIGHT_CALLS") {
        count_calls(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `--profile-time` runs one benchmark under a profiler: nothing else.
    if std::env::args().any(|a| a == "--profile-time") {
        return;
    }
    // `cargo test --benches` runs this binary without `--bench`: keep it short there.
    if !std::env::args().any(|a| a == "--bench") {
        interleaved_ratios(5, 1_000);
    } else {
        interleaved_ratios(rounds(), 20_000);
    }
}
