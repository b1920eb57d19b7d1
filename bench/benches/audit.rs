//! What the durable audit trail costs a call: `Executor::invoke` of a
//! `write` tool (an `approve` hook that allows, a body with no `.await`)
//! on an executor with no trail, with `SqliteAudit` on a file in WAL mode
//! (sqlx's defaults: `synchronous = FULL`, so each record is on disk
//! before the call returns), and with `PostgresAudit` on the local server
//! (`TOOLWRIGHT_TEST_DATABASE_URL`, or
//! `postgres://postgres@127.0.0.1:5432/test`, in a schema of its own;
//! skipped, said on one line, when it cannot be reached).
//!
//! Every call writes one row; calls run one after another on a
//! current-thread runtime, so each figure is the latency a call pays, not
//! the throughput of concurrent calls (which a pool of several
//! connections shares out).
//!
//! `cargo bench -p toolwright-bench --bench audit`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use toolwright::audit::{PostgresAudit, SqliteAudit};
use toolwright::{
    Catalog, Container, Executor, Invocation, Principal, executor::ExecutorBuilder, tool,
};

struct Caller(&'static str);

impl Principal for Caller {
    fn id(&self) -> &str {
        self.0
    }
}

/// Place an order; every call is approved.
#[tool(key = "orders.place", effect = write, authorize = public, approve = always)]
async fn place_order(sku: String, quantity: u32) -> u32 {
    sku.len() as u32 * quantity
}

async fn always<A>(_: &Caller, _: &Invocation<'_, A>) -> bool {
    true
}

fn builder() -> ExecutorBuilder {
    let catalog = Catalog::builder()
        .register::<PlaceOrderArgs>()
        .build()
        .unwrap();
    Executor::builder(catalog, Container::default()).principal::<Caller>()
}

async fn sqlite() -> Executor {
    let dir = std::env::temp_dir().join(format!("toolwright-bench-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let options = SqliteConnectOptions::new()
        .filename(dir.join("audit.db"))
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(Duration::from_secs(5));
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await
        .unwrap();
    let trail = SqliteAudit::connect(pool).await.unwrap();
    builder().audit(trail).build().unwrap()
}

async fn postgres() -> Option<Executor> {
    let url = std::env::var("TOOLWRIGHT_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let options: PgConnectOptions = url.parse().unwrap();
    let admin = PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(options.clone())
        .await;
    let admin = match admin {
        Ok(admin) => admin,
        Err(error) => {
            println!("skipped PostgresAudit: PostgreSQL not reachable at {url}: {error}");
            return None;
        }
    };
    for statement in [
        "DROP SCHEMA IF EXISTS tw_bench_audit CASCADE",
        "CREATE SCHEMA tw_bench_audit",
    ] {
        sqlx::raw_sql(statement).execute(&admin).await.unwrap();
    }
    admin.close().await;
    let pool = PgPoolOptions::new()
        .max_connections(4)
        .connect_with(options.options([("search_path", "tw_bench_audit")]))
        .await
        .unwrap();
    let trail = PostgresAudit::connect(pool).await.unwrap();
    Some(builder().audit(trail).build().unwrap())
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut variants = vec![
        ("no trail", builder().build().unwrap()),
        ("SqliteAudit (file, WAL)", runtime.block_on(sqlite())),
    ];
    if let Some(executor) = runtime.block_on(postgres()) {
        variants.push(("PostgresAudit (127.0.0.1)", executor));
    }
    let caller = Caller("alice");
    let mut group = c.benchmark_group("audit: invoke of a write tool");
    for (name, executor) in &variants {
        // Every call writes: check once that it succeeds.
        let arguments = json!({"sku": "ACME-ANVIL", "quantity": 2});
        runtime
            .block_on(executor.invoke("place_order", arguments.clone(), &caller))
            .unwrap();
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        let result = executor
                            .invoke("place_order", black_box(arguments.clone()), &caller)
                            .await;
                        black_box(result.unwrap());
                    }
                    start.elapsed()
                })
            });
        });
    }
    group.finish();
}

criterion_group!(audit, benches);

fn main() {
    audit();
    Criterion::default().configure_from_args().final_summary();
}
