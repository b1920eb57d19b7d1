//! What approvals cost: the in-memory ledger's operations, and one call of
//! a `write` tool through the ready-made ledger hook
//! (`approve = Caller::approval_ledger`) against the same call behind an
//! `approve` hook that always allows.
//!
//! 1. `MemoryLedger::consume` of one approved request (recorded and
//!    decided before the timing), and the whole round trip in memory:
//!    `record`, `decide` (approve), `consume`.
//! 2. `Executor::invoke` of two `write` tools with the same body and
//!    arguments, one whose `approve` hook is the ledger hook (it consumes
//!    the approval, the call runs, its outcome is settled in the ledger),
//!    one whose hook is an `async fn` returning `true`. Both executors are
//!    built with `.approvals(Approvals::new(MemoryLedger::new()))`, and the
//!    caller is the same `Principal`. Before each ledger call, untimed, a
//!    request for exactly that call is recorded in the ledger and another
//!    person approves it (`Approvals::approve`, four eyes).
//!
//! Timing works as criterion's `iter_batched` with
//! `BatchSize::NumIterations(BATCH)`: the inputs of a batch are made, then
//! only the routine is timed, over the batch, then the outputs are dropped.
//! It runs inside one `block_on` of a current-thread runtime, as the other
//! benches drive async code: `iter_batched`'s routine is synchronous, so it
//! would enter the runtime once per timed call, a cost both variants would
//! pay and that would pull their ratio towards 1.
//!
//! `MemoryLedger` keeps every request it ever recorded (and finds a call's
//! own by requester and digest). Every batch starts from a fresh ledger
//! (and executor, warmed up by one call), so that memory does not grow
//! over a long run; the interleaved rounds also measure `consume` behind
//! 1,000 and 10,000 settled requests, to show the history does not slow
//! it down.
//!
//! `cargo bench -p toolwright-bench --bench approvals` prints criterion's
//! estimates, then the interleaved rounds recorded in BENCHMARKS.md (each
//! round runs a batch of every variant in rotating order; the report is
//! the median of the per-round ratios). `ROUNDS` and `CALLS` override the
//! 41 rounds of 20,000 calls per variant.

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, criterion_group};
use serde_json::{Value, json};
use toolwright::approval::{ApprovalLedger, MemoryLedger, NewApproval, Review, Settlement, Status};
use toolwright::{
    CallError, Catalog, Container, Executor, Invocation, Principal,
    approval::{ApprovalRequest, Approvals, Digest},
    tool,
};

#[path = "common/stats.rs"]
mod stats;
use stats::{env_or, quantiles};

/// Calls made on one fresh ledger (and executor) before the next.
const BATCH: u64 = 16;

/// The caller, whose id a request records.
struct Caller(&'static str);

impl Principal for Caller {
    fn id(&self) -> &str {
        self.0
    }
}

const REQUESTER: Caller = Caller("alice");
const APPROVER: Caller = Caller("bob");

/// Place an order, once a person approved it.
#[tool(key = "orders.place", effect = write, authorize = public, approve = Caller::approval_ledger)]
async fn place_order(sku: String, quantity: u32) -> u32 {
    sku.len() as u32 * quantity
}

/// Place an order; every call is approved.
#[tool(key = "orders.place_allowed", effect = write, authorize = public, approve = always)]
async fn place_order_allowed(sku: String, quantity: u32) -> u32 {
    sku.len() as u32 * quantity
}

async fn always<A>(_: &Caller, _: &Invocation<'_, A>) -> bool {
    true
}

/// Criterion's `iter_batched` with `BatchSize::NumIterations(batch)`, as
/// one `async` loop: `fresh` makes a batch's shared state, `setup` each
/// input, untimed; only `routine` is timed; its outputs are dropped after.
async fn batched<S, I, O>(
    iters: u64,
    batch: u64,
    mut fresh: impl AsyncFnMut() -> S,
    mut setup: impl AsyncFnMut(&S) -> I,
    mut routine: impl AsyncFnMut(&S, I) -> O,
) -> Duration {
    let mut inputs = Vec::with_capacity(batch as usize);
    let mut outputs = Vec::with_capacity(batch as usize);
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(batch);
        let state = fresh().await;
        for _ in 0..n {
            inputs.push(setup(&state).await);
        }
        let start = Instant::now();
        for input in inputs.drain(..) {
            outputs.push(black_box(routine(&state, black_box(input)).await));
        }
        total += start.elapsed();
        outputs.clear();
        left -= n;
    }
    total
}

/// A ledger of `settled` requests that ran and settled, for other
/// arguments than the measured ones, and the request to approve.
async fn ledger_with(settled: usize) -> MemoryLedger {
    let ledger = MemoryLedger::new();
    for i in 0..settled {
        let request = request_for(json!({"sku": format!("OLD-{i}"), "quantity": 1}));
        let id = ledger.record(new_approval(request)).await.unwrap().id;
        ledger.decide(id, decision()).await.unwrap();
        let digest = Digest::of(
            "orders.place",
            &json!({"sku": format!("OLD-{i}"), "quantity": 1}),
        );
        let now = SystemTime::now();
        ledger
            .consume(&digest, REQUESTER.0, now)
            .await
            .unwrap()
            .unwrap();
        let settled = ledger.settle(id, Settlement::Succeeded, now).await.unwrap();
        assert_eq!(settled.status, Status::Settled);
    }
    ledger
}

fn arguments() -> Value {
    json!({"sku": "ACME-ANVIL", "quantity": 2})
}

/// The request for `place_order` with `arguments`, as the hook builds it.
fn request_for(arguments: Value) -> ApprovalRequest {
    ApprovalRequest {
        key: "orders.place".into(),
        name: "place_order".into(),
        digest: Digest::of("orders.place", &arguments),
        arguments,
        id: None,
        requested_by: None,
    }
}

fn new_approval(request: ApprovalRequest) -> NewApproval {
    let now = SystemTime::now();
    NewApproval {
        request,
        requested_by: REQUESTER.0.into(),
        requested_at: now,
        expires_at: now + toolwright::approval::DEFAULT_APPROVAL_TTL,
    }
}

fn decision() -> Review {
    Review {
        approve: true,
        by: APPROVER.0.into(),
        reason: None,
        at: SystemTime::now(),
    }
}

/// An executor over both tools, with approvals in a fresh `MemoryLedger`.
struct Fresh {
    executor: Executor,
    approvals: Approvals,
    /// The request the ledger hook records for the measured call.
    request: ApprovalRequest,
}

struct Bench {
    runtime: tokio::runtime::Runtime,
    catalog: Catalog,
    arguments: Value,
    digest: Digest,
}

impl Bench {
    fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let catalog = Catalog::builder()
            .register::<PlaceOrderArgs>()
            .register::<PlaceOrderAllowedArgs>()
            .build()
            .unwrap();
        let arguments = arguments();
        Bench {
            runtime,
            catalog,
            digest: Digest::of("orders.place", &arguments),
            arguments,
        }
    }

    /// A fresh executor and ledger, warmed up by one approved call of
    /// `place_order` and one of `place_order_allowed`; checks both answers.
    async fn fresh(&self) -> Fresh {
        let approvals = Approvals::new(MemoryLedger::new());
        let executor = Executor::builder(self.catalog.clone(), Container::default())
            .approvals(approvals.clone())
            .build()
            .unwrap();
        let args = || self.arguments.clone();
        let asked = executor.invoke("place_order", args(), &REQUESTER).await;
        let Err(CallError::ApprovalRequired(mut request)) = asked else {
            panic!("the first call should wait for approval: {asked:?}");
        };
        let id = request.id.take().unwrap();
        request.requested_by = None;
        assert_eq!(request.digest, self.digest, "the hook's digest");
        approvals.approve(id, &APPROVER, "").await.unwrap();
        let placed = executor.invoke("place_order", args(), &REQUESTER).await;
        assert_eq!(placed.unwrap(), json!(20), "the approved call");
        assert_eq!(approvals.get(id).await.unwrap().status, Status::Settled);
        let again = executor.invoke("place_order", args(), &REQUESTER).await;
        assert!(
            matches!(again, Err(CallError::ApprovalRequired(_))),
            "used once: {again:?}"
        );
        let allowed = executor
            .invoke("place_order_allowed", args(), &REQUESTER)
            .await;
        assert_eq!(allowed.unwrap(), json!(20), "the always-allowed call");
        Fresh {
            executor,
            approvals,
            request: *request,
        }
    }

    /// Records a request for the measured call and has another person
    /// approve it: what the next ledger call consumes.
    async fn approve_next(fresh: &Fresh) {
        let new = new_approval(fresh.request.clone());
        let recorded = fresh.approvals.ledger().record(new).await.unwrap();
        let approved = fresh.approvals.approve(recorded.id, &APPROVER, "");
        assert_eq!(approved.await.unwrap().status, Status::Approved);
    }

    /// `iters` calls of `place_order` through the ledger hook, each with an
    /// approval made for it before its batch.
    fn ledger_calls(&self, iters: u64) -> Duration {
        self.runtime.block_on(batched(
            iters,
            BATCH,
            async || self.fresh().await,
            async |fresh| Bench::approve_next(fresh).await,
            async |fresh, ()| {
                let args = black_box(&self.arguments).clone();
                fresh
                    .executor
                    .invoke("place_order", args, &REQUESTER)
                    .await
                    .unwrap()
            },
        ))
    }

    /// `iters` calls of `place_order_allowed`, whose hook always allows, on
    /// executors made the same way.
    fn allowed_calls(&self, iters: u64) -> Duration {
        self.runtime.block_on(batched(
            iters,
            BATCH,
            async || self.fresh().await,
            async |_| (),
            async |fresh, ()| {
                let args = black_box(&self.arguments).clone();
                fresh
                    .executor
                    .invoke("place_order_allowed", args, &REQUESTER)
                    .await
                    .unwrap()
            },
        ))
    }

    /// `iters` `MemoryLedger::consume`s, each of one approved request,
    /// recorded and decided before its batch, behind `settled` earlier
    /// requests; `batch` consumes per fresh ledger.
    fn consumes(&self, iters: u64, batch: u64, settled: usize) -> Duration {
        self.runtime.block_on(batched(
            iters,
            batch,
            async || ledger_with(settled).await,
            async |ledger| {
                let new = new_approval(request_for(self.arguments.clone()));
                let id = ledger.record(new).await.unwrap().id;
                ledger.decide(id, decision()).await.unwrap();
            },
            async |ledger, ()| {
                let digest = black_box(&self.digest);
                let consumed = ledger.consume(digest, REQUESTER.0, SystemTime::now()).await;
                consumed.unwrap().unwrap()
            },
        ))
    }

    /// `iters` round trips in a `MemoryLedger`: record a request, approve
    /// it, consume it.
    fn round_trips(&self, iters: u64) -> Duration {
        self.runtime.block_on(batched(
            iters,
            BATCH,
            async || MemoryLedger::new(),
            async |_| (),
            async |ledger, ()| {
                let new = new_approval(request_for(black_box(&self.arguments).clone()));
                let id = ledger.record(new).await.unwrap().id;
                ledger.decide(id, decision()).await.unwrap();
                let digest = Digest::of("orders.place", &self.arguments);
                let consumed = ledger
                    .consume(&digest, REQUESTER.0, SystemTime::now())
                    .await;
                consumed.unwrap().unwrap()
            },
        ))
    }
}

fn criterion_benches(c: &mut Criterion) {
    let bench = Bench::new();
    let mut group = c.benchmark_group("memory_ledger");
    group.bench_function("consume", |b| {
        b.iter_custom(|n| bench.consumes(n, BATCH, 0))
    });
    group.bench_function("record_approve_consume", |b| {
        b.iter_custom(|n| bench.round_trips(n))
    });
    group.finish();

    let mut group = c.benchmark_group("write_call");
    group.bench_function("approve_always", |b| {
        b.iter_custom(|n| bench.allowed_calls(n))
    });
    group.bench_function("approval_ledger", |b| {
        b.iter_custom(|n| bench.ledger_calls(n))
    });
    group.finish();
}

criterion_group!(benches, criterion_benches);

/// Runs `variants` in rotating order, `rounds` times, `calls` each; the
/// nanoseconds per call of each variant in each round.
fn rounds(variants: &[&dyn Fn(u64) -> Duration], rounds: usize, calls: u64) -> Vec<Vec<f64>> {
    for run in variants {
        run(calls);
    }
    let mut per_call = vec![Vec::new(); variants.len()];
    for round in 0..rounds {
        for k in 0..variants.len() {
            let i = (round + k) % variants.len();
            let elapsed = variants[i](calls);
            per_call[i].push(elapsed.as_nanos() as f64 / calls as f64);
        }
    }
    per_call
}

fn interleaved(bench: &Bench, n_rounds: usize, calls: u64) {
    let allowed = |n| bench.allowed_calls(n);
    let ledger = |n| bench.ledger_calls(n);
    let consume = |n| bench.consumes(n, BATCH, 0);
    let round_trip = |n| bench.round_trips(n);
    let per_call = rounds(&[&allowed, &ledger, &consume, &round_trip], n_rounds, calls);
    println!(
        "\ninterleaved: {n_rounds} rounds x {calls} per variant, a fresh ledger every {BATCH}"
    );
    println!("| variant | median per call (p10–p90) |");
    println!("|---|---|");
    let names = [
        "`invoke`, `approve = always`",
        "`invoke`, `approve = Caller::approval_ledger`",
        "`MemoryLedger::consume`",
        "`MemoryLedger` record + decide + consume",
    ];
    for (name, ns) in names.iter().zip(&per_call) {
        let (ns, lo, hi) = quantiles(ns.clone());
        println!("| {name} | {ns:.0} ns ({lo:.0}–{hi:.0}) |");
    }
    let ratios = per_call[1]
        .iter()
        .zip(&per_call[0])
        .map(|(l, a)| l / a)
        .collect();
    let (ratio, lo, hi) = quantiles(ratios);
    println!("| **ledger hook / always**, per round | **{ratio:.2}×** ({lo:.2}–{hi:.2}) |");

    // How `consume` grows with the requests a `MemoryLedger` keeps: fewer
    // rounds, since each batch first fills a ledger.
    let few = n_rounds.div_ceil(4);
    let (grown_calls, grown_batch) = (calls.div_ceil(100), calls.div_ceil(100).min(64));
    let settled = [0, 1_000, 10_000];
    let variants: Vec<Box<dyn Fn(u64) -> Duration + '_>> = settled
        .iter()
        .map(|&h| Box::new(move |n| bench.consumes(n, grown_batch, h)) as Box<_>)
        .collect();
    let refs: Vec<&dyn Fn(u64) -> Duration> = variants.iter().map(|v| &**v).collect();
    let per_call = rounds(&refs, few, grown_calls);
    println!(
        "\n`MemoryLedger::consume` behind settled requests: {few} rounds x {grown_calls}, {grown_batch} per ledger"
    );
    for (h, ns) in settled.iter().zip(per_call) {
        let (ns, lo, hi) = quantiles(ns);
        println!("| {h} settled | {ns:.0} ns ({lo:.0}–{hi:.0}) |");
    }
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `--profile-time` runs one benchmark under a profiler: nothing else.
    if std::env::args().any(|a| a == "--profile-time") {
        return;
    }
    // `cargo test --benches` runs this binary without `--bench`: keep it short there.
    let full = std::env::args().any(|a| a == "--bench");
    let (n_rounds, calls) = if full { (41, 20_000) } else { (3, 200) };
    let n_rounds = env_or("ROUNDS", n_rounds) as usize;
    let calls = env_or("CALLS", calls);
    assert!(
        n_rounds > 0 && calls > 0,
        "ROUNDS and CALLS must be positive"
    );
    interleaved(&Bench::new(), n_rounds, calls);
}
