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
//! criterion's estimates, then a table of the medians (criterion's median:
//! the median over its samples of the time per call) and PostgreSQL's
//! ratio to SQLite.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
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
    /// Criterion's samples: nanoseconds per call, one per `iter_custom`.
    samples: Vec<f64>,
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
            samples: Vec::new(),
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

fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

fn ledger_calls(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut targets = vec![runtime.block_on(Target::new("memory", memory(), Some(memory)))];
    for (name, durable) in [("sqlite", true), ("sqlite_nosync", false)] {
        let sqlite = runtime.block_on(databases::sqlite(
            &format!("ledger_calls_{name}"),
            4,
            durable,
        ));
        targets.push(runtime.block_on(Target::new(name, sqlite, None)));
    }
    for (name, durable) in [("postgres", true), ("postgres_nosync", false)] {
        let schema = format!("toolwright_bench_calls_{name}");
        if let Some(postgres) = runtime.block_on(databases::postgres(&schema, 4, durable)) {
            targets.push(runtime.block_on(Target::new(name, postgres, None)));
        }
    }

    let mut group = c.benchmark_group("ledger_calls");
    for target in &mut targets {
        let (samples, time) = match target.name {
            "memory" => (50, Duration::from_secs(3)),
            _ => (20, Duration::from_secs(4)),
        };
        group
            .sample_size(samples)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(time);
        group.bench_function(target.name, |b| {
            b.iter_custom(|iters| {
                let elapsed = runtime.block_on(target.calls(iters));
                target
                    .samples
                    .push(elapsed.as_nanos() as f64 / iters as f64);
                elapsed
            });
        });
        // Criterion's warm-up calls `iter_custom` too: its samples are the last.
        let warm_up = target.samples.len().saturating_sub(samples);
        target.samples.drain(..warm_up);
    }
    group.finish();

    let medians: Vec<_> = targets
        .iter()
        .map(|target| (target.name, median(target.samples.clone())))
        .collect();
    let of = |name| medians.iter().find(|m| m.0 == name).and_then(|m| m.1);
    println!(
        "\nan approved `write` call through `Executor::invoke`, its ledger's consume and settle included"
    );
    println!("| ledger | median per call | × memory |");
    println!("|---|---|---|");
    for (name, ns) in &medians {
        let Some(ns) = ns else { continue };
        let floor = of("memory").map_or(String::from("-"), |m| format!("{:.0}×", ns / m));
        println!("| {name} | {:.1} µs | {floor} |", ns / 1000.0);
    }
    for (pg, lite) in [("postgres", "sqlite"), ("postgres_nosync", "sqlite_nosync")] {
        if let (Some(p), Some(l)) = (of(pg), of(lite)) {
            println!("| **{pg} / {lite}** | **{:.2}×** | |", p / l);
        }
    }
}

criterion_group!(benches, ledger_calls);
criterion_main!(benches);
