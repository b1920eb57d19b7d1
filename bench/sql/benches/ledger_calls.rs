//! What one approved call pays to its ledger: `Executor::invoke` of a
//! `write` tool whose `approve` hook is the ledger
//! (`approve = Caller::approval_ledger`), on SQLite, on PostgreSQL, and on
//! a `MemoryLedger` (the floor: the same call with no database).
//!
//! The call consumes its approval (one `UPDATE`) and, once the body has
//! returned, settles it (another): two durable writes on a database. What
//! comes before, untimed, in batches of [`BATCH`]: for each call a request
//! is recorded in the ledger and another person approves it
//! (`Approvals::approve`), so that only the calls are timed (criterion's
//! `iter_custom`). Every call has arguments of its own, so a database
//! table grows as a real one does; a `MemoryLedger`, which keeps every
//! request, is replaced every [`MEMORY_RENEWAL`] calls so that a long run
//! does not grow memory.
//!
//! The databases are those of `approvals_sql`: a SQLite file in WAL mode
//! (`synchronous = FULL`), a pool of 4; PostgreSQL at
//! `TOOLWRIGHT_TEST_DATABASE_URL` or `postgres://postgres@127.0.0.1:5432/test`,
//! in a schema of its own, a pool of 4, skipped with one line when
//! unreachable. Each also runs as `*_nosync`, its commits not waiting for
//! the disk (SQLite `synchronous = NORMAL`, PostgreSQL
//! `synchronous_commit = off`): what is left is the statements and, on
//! PostgreSQL, the round trips.
//!
//! `cargo bench -p toolwright-sql-bench --bench ledger_calls` prints
//! criterion's estimates, then the interleaved rounds recorded in
//! BENCHMARKS.md: each round runs `CALLS` (100) calls on every ledger in
//! rotating order, `ROUNDS` (11) times; the table gives each ledger's
//! median per call and the median of PostgreSQL's per-round ratio to
//! SQLite, since sequential runs drift on a shared machine.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use criterion::Criterion;
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use toolwright::approval::{
    ApprovalId, ApprovalLedger, ApprovalRequest, Approvals, Digest, MemoryLedger, NewApproval,
    Settlement, Status,
};
use toolwright::{CallError, Catalog, Container, Executor, Principal, tool};

#[path = "common/databases.rs"]
mod databases;

/// Calls whose approvals are made, untimed, before they run, timed.
const BATCH: u64 = 16;

/// Calls made on one `MemoryLedger` before it is replaced.
const MEMORY_RENEWAL: u64 = 10_000;

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

/// The arguments of call `n`: each call its own digest.
fn arguments(n: u64) -> Value {
    json!({"sku": format!("SKU-{n}"), "quantity": 2})
}

/// An executor whose `place_order` consumes approvals from one ledger.
struct Target {
    name: &'static str,
    /// Makes the ledger again (`Some` for a `MemoryLedger`, renewed).
    renew: Option<fn() -> Arc<dyn ApprovalLedger>>,
    catalog: Catalog,
    executor: Executor,
    approvals: Approvals,
    /// The next call's number, and the calls on this ledger so far.
    next: u64,
    on_ledger: u64,
}

impl Target {
    async fn new(
        name: &'static str,
        ledger: Arc<dyn ApprovalLedger>,
        renew: Option<fn() -> Arc<dyn ApprovalLedger>>,
    ) -> Self {
        let catalog = Catalog::builder()
            .register::<PlaceOrderArgs>()
            .build()
            .unwrap();
        let approvals = Approvals::builder_shared(ledger).build();
        let executor = Executor::builder(catalog.clone(), Container::default())
            .approvals(approvals.clone())
            .build()
            .unwrap();
        let mut target = Target {
            name,
            renew,
            catalog,
            executor,
            approvals,
            next: 0,
            on_ledger: 0,
        };
        target.check().await;
        target
    }

    /// Asks, approves and runs one call through the hook itself, checking
    /// that the requests recorded here are the hook's own (same digest).
    async fn check(&mut self) {
        let n = self.next;
        self.next += 1;
        let asked = self
            .executor
            .invoke("place_order", arguments(n), &REQUESTER)
            .await;
        let Err(CallError::ApprovalRequired(request)) = asked else {
            panic!(
                "{}: the first call should wait for approval: {asked:?}",
                self.name
            );
        };
        assert_eq!(request.digest, request_for(n).digest, "the hook's digest");
        let id = request.id.unwrap();
        self.approvals.approve(id, &APPROVER, "").await.unwrap();
        let placed = self
            .executor
            .invoke("place_order", arguments(n), &REQUESTER)
            .await;
        let placed = placed.unwrap();
        assert_eq!(placed, json!(format!("SKU-{n}").len() * 2), "{}", self.name);
        self.assert_settled(id).await;
    }

    async fn assert_settled(&self, id: ApprovalId) {
        let approval = self.approvals.get(id).await.unwrap();
        assert_eq!(approval.status, Status::Settled, "{}", self.name);
        assert_eq!(approval.settlement, Some(Settlement::Succeeded));
    }

    /// Records a request for call `n` and has another person approve it.
    async fn approve(&self, n: u64) -> ApprovalId {
        let now = SystemTime::now();
        let new = NewApproval {
            request: request_for(n),
            requested_by: REQUESTER.0.into(),
            requested_at: now,
            expires_at: now + Duration::from_secs(600),
        };
        let recorded = self.approvals.ledger().record(new).await.unwrap();
        let approved = self.approvals.approve(recorded.id, &APPROVER, "").await;
        assert_eq!(approved.unwrap().status, Status::Approved);
        recorded.id
    }

    /// A new `MemoryLedger` (and executor) when this one has served its
    /// share of calls.
    fn renew_if_due(&mut self) {
        let Some(renew) = self.renew else { return };
        if self.on_ledger < MEMORY_RENEWAL {
            return;
        }
        self.approvals = Approvals::builder_shared(renew()).build();
        self.executor = Executor::builder(self.catalog.clone(), Container::default())
            .approvals(self.approvals.clone())
            .build()
            .unwrap();
        self.on_ledger = 0;
    }

    /// `iters` approved calls, only the calls timed.
    async fn calls(&mut self, iters: u64) -> Duration {
        let mut total = Duration::ZERO;
        let mut left = iters;
        let mut ids = Vec::with_capacity(BATCH as usize);
        let mut args = Vec::with_capacity(BATCH as usize);
        while left > 0 {
            self.renew_if_due();
            let k = left.min(BATCH);
            for n in self.next..self.next + k {
                ids.push(self.approve(n).await);
                args.push(arguments(n));
            }
            self.next += k;
            self.on_ledger += k;
            let start = Instant::now();
            for args in args.drain(..) {
                let placed = self.executor.invoke("place_order", args, &REQUESTER);
                black_box(placed.await.unwrap());
            }
            total += start.elapsed();
            // The last call of the batch settled its own approval.
            self.assert_settled(ids.pop().unwrap()).await;
            ids.clear();
            left -= k;
        }
        total
    }
}

/// The request the hook records for call `n`.
fn request_for(n: u64) -> ApprovalRequest {
    let arguments = arguments(n);
    ApprovalRequest {
        key: "orders.place".into(),
        name: "place_order".into(),
        digest: Digest::of("orders.place", &arguments),
        arguments,
        id: None,
        requested_by: None,
    }
}

fn memory() -> Arc<dyn ApprovalLedger> {
    Arc::new(MemoryLedger::new())
}

/// The median of `values`, and their 10th and 90th percentiles.
fn quantiles(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.1), at(0.9))
}

/// The whole number in the environment variable `name`, or `default`.
fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |value| {
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a whole number, not {value:?}"))
    })
}

/// The floor, then each database with and without fsyncs; PostgreSQL's
/// only when it is reachable.
async fn targets() -> Vec<Target> {
    let mut targets = vec![Target::new("memory", memory(), Some(memory)).await];
    for (name, durable) in [("sqlite", true), ("sqlite_nosync", false)] {
        let file = format!("ledger_calls_{name}");
        let sqlite = databases::sqlite(&file, 4, durable).await;
        targets.push(Target::new(name, sqlite, None).await);
    }
    for (name, durable) in [("postgres", true), ("postgres_nosync", false)] {
        let schema = format!("toolwright_bench_calls_{name}");
        if let Some(postgres) = databases::postgres(&schema, 4, durable).await {
            targets.push(Target::new(name, postgres, None).await);
        }
    }
    targets
}

fn criterion_benches(c: &mut Criterion, runtime: &Runtime, targets: &mut [Target]) {
    let mut group = c.benchmark_group("ledger_calls");
    for target in targets {
        let (samples, time) = match target.name {
            "memory" => (50, Duration::from_secs(3)),
            _ => (20, Duration::from_secs(4)),
        };
        group
            .sample_size(samples)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(time);
        group.bench_function(target.name, |b| {
            b.iter_custom(|iters| runtime.block_on(target.calls(iters)))
        });
    }
    group.finish();
}

/// `rounds` rounds of `calls` calls on each target, in rotating order:
/// what drifts over the run drifts for all of them, and each round gives
/// PostgreSQL's ratio to SQLite.
fn interleaved(runtime: &Runtime, targets: &mut [Target], rounds: usize, calls: u64) {
    let mut per_call = vec![Vec::new(); targets.len()];
    for round in 0..rounds {
        for k in 0..targets.len() {
            let i = (round + k) % targets.len();
            let elapsed = runtime.block_on(targets[i].calls(calls));
            per_call[i].push(elapsed.as_nanos() as f64 / calls as f64);
        }
    }
    let index = |name| targets.iter().position(|target| target.name == name);
    println!(
        "\nan approved `write` call through `Executor::invoke` (consume and settle included): {rounds} rounds x {calls} calls per ledger"
    );
    println!("| ledger | median per call (p10–p90) |");
    println!("|---|---|");
    for (target, ns) in targets.iter().zip(&per_call) {
        let (ns, lo, hi) = quantiles(ns.clone());
        println!(
            "| {} | {:.1} µs ({:.1}–{:.1}) |",
            target.name,
            ns / 1e3,
            lo / 1e3,
            hi / 1e3
        );
    }
    for (pg, lite) in [("postgres", "sqlite"), ("postgres_nosync", "sqlite_nosync")] {
        let (Some(pg_at), Some(lite_at)) = (index(pg), index(lite)) else {
            continue;
        };
        let ratios = per_call[pg_at]
            .iter()
            .zip(&per_call[lite_at])
            .map(|(p, l)| p / l)
            .collect();
        let (ratio, lo, hi) = quantiles(ratios);
        println!("| **{pg} / {lite}**, per round | **{ratio:.2}×** ({lo:.2}–{hi:.2}) |");
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut targets = runtime.block_on(targets());
    let mut criterion = Criterion::default().configure_from_args();
    criterion_benches(&mut criterion, &runtime, &mut targets);
    criterion.final_summary();
    // `--profile-time` runs one benchmark under a profiler: nothing else.
    if std::env::args().any(|a| a == "--profile-time") {
        return;
    }
    // `cargo test --benches` runs this binary without `--bench`: keep it short there.
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = env_or("ROUNDS", if full { 11 } else { 1 }) as usize;
    let calls = env_or("CALLS", if full { 100 } else { BATCH });
    assert!(rounds > 0 && calls > 0, "ROUNDS and CALLS must be positive");
    interleaved(&runtime, &mut targets, rounds, calls);
}
