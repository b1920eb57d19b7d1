//! Consumes per second when many tasks consume from one ledger at once, on
//! a multi-thread runtime (one worker per core):
//!
//! - **race**: all tasks consume the same approved call at once, round
//!   after round (one new approval per round, recorded and approved
//!   untimed). Exactly one consume per approval may win; the others find
//!   none. Every round checks it. Timed from the moment all tasks are
//!   released to the last answer.
//! - **own rows**: each task consumes approvals of its own (its requester,
//!   its calls), one after another, all tasks at once; every consume must
//!   find its approval. The approvals are recorded and approved first,
//!   untimed.
//!
//! On SQLite (a file in WAL mode, `synchronous = FULL`, a pool of 4
//! connections, the shop's) and on PostgreSQL (`TOOLWRIGHT_TEST_DATABASE_URL`
//! or `postgres://postgres@127.0.0.1:5432/test`, schema
//! `toolwright_bench_contention_*`, a pool of 16 connections: one per task
//! at 16, a replica's pool shared by 4 tasks each at 64; skipped with one
//! line when unreachable), with 16 and 64 tasks. Each also runs with its
//! commits not waiting for the disk (SQLite `synchronous = NORMAL`,
//! PostgreSQL `synchronous_commit = off`), to show what the fsyncs cost.
//!
//! `cargo bench -p toolwright-sql-bench --bench ledger_contention` prints a
//! table. `ROUNDS` (race rounds, 300) and `CONSUMES` (own-row consumes
//! per run, 4,800) change the sizes.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;
use tokio::sync::Barrier;
use toolwright::approval::{
    ApprovalId, ApprovalLedger, ApprovalRequest, Digest, NewApproval, Review, Status,
};

#[path = "common/databases.rs"]
mod databases;

const TASKS: [usize; 2] = [16, 64];

/// Records `requested_by`'s request for call `n` and approves it (as
/// `bob`): what a consume then finds.
async fn approved(ledger: &dyn ApprovalLedger, requested_by: &str, n: u64) -> (ApprovalId, Digest) {
    let arguments = json!({"order": n, "note": "ship by Friday"});
    let digest = Digest::of("orders.ship", &arguments);
    let now = SystemTime::now();
    let request = ApprovalRequest {
        key: "orders.ship".into(),
        name: "ship".into(),
        arguments,
        digest,
        id: None,
        requested_by: None,
    };
    let new = NewApproval {
        request,
        requested_by: requested_by.into(),
        requested_at: now,
        expires_at: now + Duration::from_secs(600),
    };
    let id = ledger.record(new).await.unwrap().id;
    let review = Review {
        approve: true,
        by: "bob".into(),
        reason: None,
        at: now,
    };
    ledger.decide(id, review).await.unwrap();
    (id, digest)
}

/// What one run measured.
struct Run {
    consumes: u64,
    wins: u64,
    elapsed: Duration,
}

impl Run {
    fn per_second(&self, count: u64) -> f64 {
        count as f64 / self.elapsed.as_secs_f64()
    }
}

/// `tasks` consumers racing for each of `rounds` approvals, one at a time.
async fn race(ledger: &Arc<dyn ApprovalLedger>, tasks: usize, rounds: u64, next: &mut u64) -> Run {
    let mut elapsed = Duration::ZERO;
    let mut wins = 0;
    for _ in 0..rounds {
        *next += 1;
        let (id, digest) = approved(&**ledger, "alice", *next).await;
        let start = Arc::new(Barrier::new(tasks + 1));
        let consumers: Vec<_> = (0..tasks)
            .map(|_| {
                let (ledger, start) = (ledger.clone(), start.clone());
                tokio::spawn(async move {
                    start.wait().await;
                    let consumed = ledger.consume(&digest, "alice", SystemTime::now()).await;
                    consumed.unwrap().map(|approval| approval.id)
                })
            })
            .collect();
        start.wait().await;
        let started = Instant::now();
        let mut won = 0;
        for consumer in consumers {
            if let Some(consumed) = consumer.await.unwrap() {
                assert_eq!(consumed, id);
                won += 1;
            }
        }
        elapsed += started.elapsed();
        assert_eq!(won, 1, "exactly one consume wins an approval");
        assert_eq!(ledger.get(id).await.unwrap().status, Status::Consumed);
        wins += won;
    }
    Run {
        consumes: tasks as u64 * rounds,
        wins,
        elapsed,
    }
}

/// `tasks` consumers at once, each consuming `each` approvals of its own.
async fn own_rows(
    ledger: &Arc<dyn ApprovalLedger>,
    tasks: usize,
    each: u64,
    next: &mut u64,
) -> Run {
    let first = *next;
    *next += tasks as u64 * each;
    let start = Arc::new(Barrier::new(tasks + 1));
    let consumers: Vec<_> = (0..tasks)
        .map(|task| {
            let (ledger, start) = (ledger.clone(), start.clone());
            tokio::spawn(async move {
                let requester = format!("user-{task}");
                let mut mine = Vec::with_capacity(each as usize);
                for i in 0..each {
                    let n = first + task as u64 * each + i;
                    mine.push(approved(&*ledger, &requester, n).await);
                }
                start.wait().await;
                for (id, digest) in mine {
                    let consumed = ledger.consume(&digest, &requester, SystemTime::now()).await;
                    assert_eq!(consumed.unwrap().map(|a| a.id), Some(id));
                }
            })
        })
        .collect();
    start.wait().await;
    let started = Instant::now();
    for consumer in consumers {
        consumer.await.unwrap();
    }
    let elapsed = started.elapsed();
    let consumes = tasks as u64 * each;
    Run {
        consumes,
        wins: consumes,
        elapsed,
    }
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |value| {
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a whole number, not {value:?}"))
    })
}

fn main() {
    // `cargo test --benches` runs this binary without `--bench`: keep it short there.
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = env_or("ROUNDS", if full { 300 } else { 3 });
    let consumes = env_or("CONSUMES", if full { 4_800 } else { 64 });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut ledgers = Vec::new();
    for (name, durable) in [("SQLite", true), ("SQLite, no fsync", false)] {
        let file = format!("ledger_contention_{}", ledgers.len());
        let ledger = runtime.block_on(databases::sqlite(&file, 4, durable));
        ledgers.push((name, 4, ledger));
    }
    for (name, durable) in [("PostgreSQL", true), ("PostgreSQL, no fsync", false)] {
        let schema = format!("toolwright_bench_contention_{}", ledgers.len());
        if let Some(postgres) = runtime.block_on(databases::postgres(&schema, 16, durable)) {
            ledgers.push((name, 16, postgres));
        }
    }
    println!(
        "| ledger (pool) | tasks | race: consumes/s | race: approvals won/s | own rows: consumes/s |"
    );
    println!("|---|---|---|---|---|");
    let mut next = 0;
    for (name, pool, ledger) in &ledgers {
        for tasks in TASKS {
            let raced = runtime.block_on(race(ledger, tasks, rounds, &mut next));
            let each = consumes.div_ceil(tasks as u64);
            let own = runtime.block_on(own_rows(ledger, tasks, each, &mut next));
            println!(
                "| {name} ({pool}) | {tasks} | {:.0} ({} in {:.2} s) | {:.0} ({} of {rounds}) | {:.0} ({} in {:.2} s) |",
                raced.per_second(raced.consumes),
                raced.consumes,
                raced.elapsed.as_secs_f64(),
                raced.per_second(raced.wins),
                raced.wins,
                own.per_second(own.consumes),
                own.consumes,
                own.elapsed.as_secs_f64(),
            );
        }
    }
}
