//! The durable audit trail: every call of a `write` or `destructive` tool
//! and every approval decision is in the table, with secrets masked; `read`
//! calls are not; a trail that cannot record fails the call closed (its
//! transaction rolls back) and keeps a decision from being made.
//!
//! PostgreSQL: `TOOLWRIGHT_TEST_DATABASE_URL`, or
//! `postgres://postgres@127.0.0.1:5432/test`, in a schema of the test's
//! own. Unreachable, a test says it is skipped, and with `CI=true` it fails.

mod databases;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use databases::{Db, Shared, postgres_pool, sqlite_pool};
use serde_json::json;
use sqlx::Row as _;
use sqlx::sqlite::SqlitePoolOptions;
use toolwright::approval::{LedgerError, MemoryLedger, Status};
use toolwright::audit::{AuditError, AuditRecord, AuditTrail, SqliteAudit};
use toolwright::observe::{ExecutionLog, OutcomeClass, REDACTED};
use toolwright::{
    CallError, Catalog, Container, Effect, Executor, Inject, Invocation, Principal,
    approval::Approvals,
    executor::BoxFuture,
    registry::{DynamicTool, Policy, Registry, Rule, Selector},
    scope::{Outcome, ResolveError, Scope},
    tool,
};

// ---------------------------------------------------------------------------
// The application: a caller, a transaction whose finalizer commits or rolls
// back, and tools of every effect.

struct Caller(&'static str);

impl Principal for Caller {
    fn id(&self) -> &str {
        self.0
    }
}

/// The call's transaction; its finalizer notes how the call ended, and
/// fails the commit when told to.
struct Tx;

#[derive(Default)]
struct Journal {
    closes: Mutex<Vec<Outcome>>,
    fail_commit: Mutex<bool>,
}

#[derive(Debug)]
struct CommitRefused;

impl std::fmt::Display for CommitRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("serialization failure")
    }
}

impl std::error::Error for CommitRefused {}

fn container(journal: &Arc<Journal>) -> Container {
    let journal = journal.clone();
    Container::builder()
        .request::<Tx>(move |scope: Scope| {
            let journal = journal.clone();
            async move {
                scope.on_close(move |outcome| async move {
                    journal.closes.lock().unwrap().push(outcome);
                    match *journal.fail_commit.lock().unwrap() && outcome.is_ok() {
                        true => Err(CommitRefused),
                        false => Ok(()),
                    }
                });
                Ok::<_, ResolveError>(Tx)
            }
        })
        .build()
}

/// Read a note.
#[tool(key = "notes.read", effect = read, authorize = public)]
async fn read_note(id: u64) -> String {
    format!("note {id}")
}

/// Place an order, in the call's transaction.
#[tool(key = "orders.place", effect = write, authorize = public, approve = always)]
async fn place_order(sku: String, _tx: Inject<Tx>) -> Result<u64, std::io::Error> {
    match sku.as_str() {
        "none" => Err(std::io::Error::other("out of stock")),
        _ => Ok(1),
    }
}

async fn always(_: &Caller, _: &Invocation<'_, PlaceOrderArgs>) -> bool {
    true
}

/// Wait for a reply that never comes.
#[tool(key = "mail.wait", effect = write, authorize = public, approve = always_wait)]
async fn wait_for_reply(thread: u64) -> bool {
    std::future::pending::<()>().await;
    thread > 0
}

async fn always_wait(_: &Caller, _: &Invocation<'_, WaitForReplyArgs>) -> bool {
    true
}

/// Delete an account, once a person approved.
#[tool(key = "accounts.delete", effect = destructive, authorize = public,
       approve = Caller::approval_ledger)]
async fn delete_account(account: u64) -> bool {
    account > 0
}

/// A tool built at run time whose `password` is a secret (`writeOnly`).
fn store_credential() -> DynamicTool {
    DynamicTool::builder("vault.store", "store_credential")
        .description("Store a credential.")
        .effect(Effect::Write)
        .input_schema(json!({
            "type": "object",
            "properties": {
                "user": {"type": "string"},
                "password": {"type": "string", "writeOnly": true},
            },
            "required": ["user", "password"],
        }))
        .approve(
            |_: &Caller, _: &Invocation<'_, toolwright::registry::Arguments>| {
                Box::pin(async { true })
            },
        )
        .handler(|_| Box::pin(async { Ok(json!(true)) }))
        .build()
        .unwrap()
}

const SECRET: &str = "hunter2-d0-not-l0g";

fn catalog() -> Catalog {
    Catalog::builder()
        .register::<ReadNoteArgs>()
        .register::<PlaceOrderArgs>()
        .register::<DeleteAccountArgs>()
        .register::<WaitForReplyArgs>()
        .build()
        .unwrap()
}

fn executor(
    trail: impl AuditTrail,
    journal: &Arc<Journal>,
    approvals: &Approvals,
    log: Option<ExecutionLog>,
) -> Executor {
    let registry = Registry::new(catalog());
    registry.register(store_credential()).unwrap();
    let mut builder = Executor::builder(registry, container(journal))
        .principal::<Caller>()
        .approvals(approvals.clone())
        .audit(trail);
    if let Some(log) = log {
        builder = builder.observe(log);
    }
    builder.build().unwrap()
}

// ---------------------------------------------------------------------------
// The stores.

/// A row of `toolwright_audit`, as both stores read back.
#[derive(Debug, Clone)]
struct Row {
    kind: String,
    call_id: Option<i64>,
    tool_key: Option<String>,
    tool_name: Option<String>,
    effect: Option<String>,
    actor: Option<String>,
    arguments: Option<String>,
    digest: Option<String>,
    policy: Option<String>,
    policy_rule: Option<String>,
    approval_id: Option<i64>,
    approval_use: Option<String>,
    outcome: String,
    error: Option<String>,
    reason: Option<String>,
    requested_by: Option<String>,
}

const SELECT: &str = "SELECT kind, call_id, tool_key, tool_name, effect, actor, \
    CAST(arguments AS TEXT) AS arguments, digest, policy, policy_rule, approval_id, \
    approval_use, outcome, error, reason, requested_by FROM toolwright_audit ORDER BY seq";

/// The rows, read by column name from either store's rows.
macro_rules! rows {
    ($rows:expr) => {
        $rows
            .iter()
            .map(|row| Row {
                kind: row.get("kind"),
                call_id: row.get("call_id"),
                tool_key: row.get("tool_key"),
                tool_name: row.get("tool_name"),
                effect: row.get("effect"),
                actor: row.get("actor"),
                arguments: row.get("arguments"),
                digest: row.get("digest"),
                policy: row.get("policy"),
                policy_rule: row.get("policy_rule"),
                approval_id: row.get("approval_id"),
                approval_use: row.get("approval_use"),
                outcome: row.get("outcome"),
                error: row.get("error"),
                reason: row.get("reason"),
                requested_by: row.get("requested_by"),
            })
            .collect()
    };
}

impl Db {
    async fn rows(&self) -> Vec<Row> {
        match self {
            Db::Sqlite(pool) => rows!(sqlx::query(SELECT).fetch_all(pool).await.unwrap()),
            Db::Postgres(pool) => rows!(sqlx::query(SELECT).fetch_all(pool).await.unwrap()),
        }
    }

    async fn trail(&self) -> Arc<dyn AuditTrail> {
        self.connect_trail().await.unwrap()
    }
}

/// Waits until the table has `n` rows: a call refused before its body is
/// recorded in the background.
async fn rows_at_least(db: &Db, n: usize) -> Vec<Row> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let rows = db.rows().await;
        if rows.len() >= n {
            return rows;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} rows: {rows:#?}",
            rows.len()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

// ---------------------------------------------------------------------------
// What every store records.

async fn records_every_write_and_decision(db: Db) {
    let journal = Arc::new(Journal::default());
    let approvals = Approvals::new(MemoryLedger::new());
    let log = ExecutionLog::new(100).unwrap();
    let exec = executor(
        Shared(db.trail().await),
        &journal,
        &approvals,
        Some(log.clone()),
    );
    let alice = Caller("alice");

    // A read is not recorded; a write is, with its outcome.
    exec.invoke("read_note", json!({"id": 1}), &alice)
        .await
        .unwrap();
    exec.invoke("place_order", json!({"sku": "A-1"}), &alice)
        .await
        .unwrap();
    let failed = exec
        .invoke("place_order", json!({"sku": "none"}), &alice)
        .await;
    assert!(matches!(failed, Err(CallError::Tool { .. })));
    let invalid = exec.invoke("place_order", json!({"sku": 7}), &alice).await;
    assert!(matches!(invalid, Err(CallError::InvalidArguments { .. })));
    rows_at_least(&db, 3).await;
    // A secret, masked in the row; the digest still binds it.
    exec.invoke(
        "store_credential",
        json!({"user": "alice", "password": SECRET}),
        &alice,
    )
    .await
    .unwrap();

    let rows = db.rows().await;
    assert_eq!(rows.len(), 4, "{rows:#?}");
    assert!(rows.iter().all(|row| row.kind == "call"));
    assert!(
        rows.iter()
            .all(|row| row.tool_key.as_deref() != Some("notes.read"))
    );
    let placed = &rows[0];
    assert_eq!(placed.tool_key.as_deref(), Some("orders.place"));
    assert_eq!(placed.tool_name.as_deref(), Some("place_order"));
    assert_eq!(placed.effect.as_deref(), Some("write"));
    assert_eq!(placed.actor.as_deref(), Some("alice"));
    assert_eq!(placed.outcome, "ok");
    assert_eq!(placed.error, None);
    let arguments: serde_json::Value =
        serde_json::from_str(placed.arguments.as_deref().unwrap()).unwrap();
    assert_eq!(arguments, json!({"sku": "A-1"}));
    assert_eq!(placed.digest.as_ref().map(String::len), Some(64));
    assert_eq!(rows[1].outcome, "tool_error");
    assert!(rows[1].error.as_deref().unwrap().contains("out of stock"));
    assert_eq!(rows[2].outcome, "invalid_arguments");
    let stored = &rows[3];
    assert_eq!(stored.tool_key.as_deref(), Some("vault.store"));
    let arguments: serde_json::Value =
        serde_json::from_str(stored.arguments.as_deref().unwrap()).unwrap();
    assert_eq!(arguments, json!({"user": "alice", "password": REDACTED}));
    // The call numbers are the execution log's (five calls, told on the
    // dispatcher thread).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while log.latest() < 5 {
        assert!(
            std::time::Instant::now() < deadline,
            "the log has {}",
            log.latest()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let logged: Vec<u64> = log
        .since(0, 100)
        .entries
        .iter()
        .filter_map(|entry| match &*entry.event {
            toolwright::observe::Event::Call(call) if call.key.as_deref() != Some("notes.read") => {
                Some(call.id)
            }
            _ => None,
        })
        .collect();
    let recorded: Vec<u64> = rows.iter().map(|row| row.call_id.unwrap() as u64).collect();
    assert_eq!(recorded, logged);

    // Refused by the policy: recorded with the ruling.
    exec.registry().set_policy(Policy::new().rule(Rule::deny(
        "frozen",
        Selector::name("place_order"),
        "quarter-end freeze",
    )));
    let denied = exec
        .invoke("place_order", json!({"sku": "A-2"}), &alice)
        .await;
    assert!(matches!(denied, Err(CallError::PolicyDenied { .. })));
    exec.registry().set_policy(Policy::new());
    let row = rows_at_least(&db, 5).await.pop().unwrap();
    assert_eq!(row.outcome, "policy_denied");
    assert_eq!(row.policy.as_deref(), Some("deny: quarter-end freeze"));
    assert_eq!(row.policy_rule.as_deref(), Some("frozen"));

    // An approval asked for, decided, consumed; another rejected.
    let Err(CallError::ApprovalRequired(request)) = exec
        .invoke("delete_account", json!({"account": 9}), &alice)
        .await
    else {
        panic!("the delete needs approval")
    };
    let id = request.id.unwrap();
    rows_at_least(&db, 6).await;
    approvals
        .approve(id, &Caller("bob"), "customer asked in writing")
        .await
        .unwrap();
    exec.invoke("delete_account", json!({"account": 9}), &alice)
        .await
        .unwrap();
    let Err(CallError::ApprovalRequired(other)) = exec
        .invoke("delete_account", json!({"account": 10}), &alice)
        .await
    else {
        panic!("the delete needs approval")
    };
    rows_at_least(&db, 9).await;
    approvals
        .reject(other.id.unwrap(), &Caller("bob"), "wrong account")
        .await
        .unwrap();
    // Decided already: the trail says the ledger refused it.
    let twice = approvals.approve(id, &Caller("carol"), "").await;
    assert!(matches!(twice, Err(LedgerError::NotPending { .. })));

    let rows = db.rows().await;
    let rows = &rows[5..];
    let kinds: Vec<_> = rows
        .iter()
        .map(|row| (row.kind.as_str(), row.outcome.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("call", "approval_required"),
            ("decision", "approved"),
            ("call", "ok"),
            ("call", "approval_required"),
            ("decision", "rejected"),
            ("decision", "approved"),
            ("decision_refused", "refused"),
        ]
    );
    let id = id.0 as i64;
    assert_eq!(rows[0].approval_use.as_deref(), Some("requested"));
    assert_eq!(rows[0].approval_id, Some(id));
    assert_eq!(rows[0].effect.as_deref(), Some("destructive"));
    let decision = &rows[1];
    assert_eq!(decision.approval_id, Some(id));
    assert_eq!(decision.actor.as_deref(), Some("bob"));
    assert_eq!(decision.requested_by.as_deref(), Some("alice"));
    assert_eq!(
        decision.reason.as_deref(),
        Some("customer asked in writing")
    );
    assert_eq!(decision.tool_key.as_deref(), Some("accounts.delete"));
    assert_eq!(decision.digest, rows[0].digest);
    assert_eq!(rows[2].approval_use.as_deref(), Some("consumed"));
    assert_eq!(rows[2].approval_id, Some(id));
    assert_eq!(rows[4].reason.as_deref(), Some("wrong account"));
    assert_eq!(rows[6].actor.as_deref(), Some("carol"));
    assert!(rows[6].error.as_deref().unwrap().contains("not pending"));

    // Nowhere in the table is the secret.
    for row in db.rows().await {
        assert!(!format!("{row:?}").contains(SECRET), "{row:?}");
    }
}

#[tokio::test]
async fn sqlite_records_every_write_and_decision() {
    let pool = sqlite_pool("audit", "records").await;
    records_every_write_and_decision(Db::Sqlite(pool)).await;
}

#[tokio::test]
async fn postgres_records_every_write_and_decision() {
    let Some(pool) = postgres_pool("tw_audit_", "records").await else {
        return;
    };
    records_every_write_and_decision(Db::Postgres(pool)).await;
}

#[tokio::test]
async fn sqlite_in_memory_and_connecting_twice() {
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect("sqlite::memory:")
        .await
        .unwrap();
    SqliteAudit::connect(pool.clone()).await.unwrap();
    let db = Db::Sqlite(pool);
    // Connecting again keeps the table and its rows.
    let journal = Arc::new(Journal::default());
    let approvals = Approvals::new(MemoryLedger::new());
    let exec = executor(Shared(db.trail().await), &journal, &approvals, None);
    exec.invoke("place_order", json!({"sku": "A-1"}), &Caller("al"))
        .await
        .unwrap();
    db.trail().await;
    assert_eq!(db.rows().await.len(), 1);
}

// ---------------------------------------------------------------------------
// Failing closed.

/// A trail that records in memory, or fails every record while down.
#[derive(Default, Clone)]
struct Flaky {
    records: Arc<Mutex<Vec<AuditRecord>>>,
    down: Arc<Mutex<bool>>,
}

const INTERNALS: &str = "connection to 10.0.0.5:5432 refused";

impl AuditTrail for Flaky {
    fn record<'a>(&'a self, record: &'a AuditRecord) -> BoxFuture<'a, Result<(), AuditError>> {
        let result = if *self.down.lock().unwrap() {
            Err(AuditError::new(INTERNALS))
        } else {
            self.records.lock().unwrap().push(record.clone());
            Ok(())
        };
        Box::pin(async move { result })
    }
}

impl Flaky {
    /// Waits until `n` records are kept: a call refused before its body is
    /// recorded in the background.
    async fn wait_for(&self, n: usize) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while self.records.lock().unwrap().len() < n {
            assert!(std::time::Instant::now() < deadline, "never recorded");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    fn down(&self, down: bool) {
        *self.down.lock().unwrap() = down;
    }

    fn outcomes(&self) -> Vec<(String, OutcomeClass)> {
        self.records
            .lock()
            .unwrap()
            .iter()
            .filter_map(|record| match record {
                AuditRecord::Call(call) => Some((call.event.name.clone(), call.event.outcome)),
                _ => None,
            })
            .collect()
    }
}

#[tokio::test]
async fn a_failing_trail_fails_the_call_and_its_transaction_rolls_back() {
    let journal = Arc::new(Journal::default());
    let trail = Flaky::default();
    let approvals = Approvals::new(MemoryLedger::new());
    let exec = executor(trail.clone(), &journal, &approvals, None);
    let alice = Caller("alice");

    exec.invoke("place_order", json!({"sku": "A-1"}), &alice)
        .await
        .unwrap();
    assert_eq!(
        std::mem::take(&mut *journal.closes.lock().unwrap()),
        [Outcome::Ok]
    );

    trail.down(true);
    let error = exec
        .invoke("place_order", json!({"sku": "A-1"}), &alice)
        .await
        .unwrap_err();
    assert!(
        matches!(
            &error,
            CallError::AuditFailed { key, .. } if key == "orders.place"
        ),
        "{error:?}"
    );
    // The finalizer saw a failed call: the transaction rolled back.
    assert_eq!(
        std::mem::take(&mut *journal.closes.lock().unwrap()),
        [Outcome::Error]
    );
    // The caller is told, without the trail's internals.
    assert_eq!(
        error.model_message(),
        "The tool is unavailable right now; the call failed."
    );
    assert!(!error.model_message().contains(INTERNALS));
    assert!(!error.to_string().contains(INTERNALS));
    assert!(error.to_string().contains("audit trail"), "{error}");
    // The typed path fails the same way.
    let typed = exec
        .call(PlaceOrderArgs { sku: "A-1".into() }, &alice)
        .await;
    assert!(matches!(typed, Err(CallError::AuditFailed { .. })));
    assert_eq!(
        std::mem::take(&mut *journal.closes.lock().unwrap()),
        [Outcome::Error]
    );
    // A tool built at run time too.
    let dynamic = exec
        .invoke(
            "store_credential",
            json!({"user": "al", "password": SECRET}),
            &alice,
        )
        .await;
    assert!(matches!(dynamic, Err(CallError::AuditFailed { .. })));

    // A read is not recorded, so it still runs.
    exec.invoke("read_note", json!({"id": 1}), &alice)
        .await
        .unwrap();
    // A refusal stands as it was: nothing ran.
    let invalid = exec.invoke("place_order", json!({"sku": 1}), &alice).await;
    assert!(matches!(invalid, Err(CallError::InvalidArguments { .. })));

    assert_eq!(
        trail.outcomes(),
        [("place_order".to_owned(), OutcomeClass::Ok)]
    );
}

#[tokio::test]
async fn a_commit_that_fails_after_the_record_is_recorded_too() {
    let journal = Arc::new(Journal::default());
    let trail = Flaky::default();
    let approvals = Approvals::new(MemoryLedger::new());
    let exec = executor(trail.clone(), &journal, &approvals, None);
    *journal.fail_commit.lock().unwrap() = true;

    let error = exec
        .invoke("place_order", json!({"sku": "A-1"}), &Caller("al"))
        .await
        .unwrap_err();
    assert!(matches!(error, CallError::Finalizer { .. }), "{error:?}");
    let records = trail.records.lock().unwrap().clone();
    let ids: Vec<u64> = records
        .iter()
        .map(|record| match record {
            AuditRecord::Call(call) => call.event.id,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(ids[0], ids[1], "the same call, twice");
    assert_eq!(
        trail.outcomes(),
        [
            ("place_order".to_owned(), OutcomeClass::Ok),
            ("place_order".to_owned(), OutcomeClass::FailedCommit),
        ]
    );
}

#[tokio::test]
async fn a_decision_the_trail_cannot_record_is_not_made() {
    let journal = Arc::new(Journal::default());
    let trail = Flaky::default();
    let approvals = Approvals::new(MemoryLedger::new());
    let exec = executor(trail.clone(), &journal, &approvals, None);
    let alice = Caller("alice");
    let Err(CallError::ApprovalRequired(request)) = exec
        .invoke("delete_account", json!({"account": 3}), &alice)
        .await
    else {
        panic!("the delete needs approval")
    };
    let id = request.id.unwrap();

    trail.down(true);
    let refused = approvals.approve(id, &Caller("bob"), "ok").await;
    assert!(
        matches!(refused, Err(LedgerError::Unavailable(_))),
        "{refused:?}"
    );
    assert_eq!(approvals.get(id).await.unwrap().status, Status::Pending);
    // So the call still waits.
    trail.down(false);
    let waits = exec
        .invoke("delete_account", json!({"account": 3}), &alice)
        .await;
    assert!(matches!(waits, Err(CallError::ApprovalRequired(_))));

    approvals.approve(id, &Caller("bob"), "ok").await.unwrap();
    let decisions: Vec<_> = trail
        .records
        .lock()
        .unwrap()
        .iter()
        .filter_map(|record| match record {
            AuditRecord::Decision(decision) => Some(decision.approval.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0].status, Status::Approved);
    assert_eq!(decisions[0].decided_by.as_deref(), Some("bob"));
}

fn ledger<'a>(
    caller: &'a Caller,
    call: &'a Invocation<'a, toolwright::registry::Arguments>,
) -> BoxFuture<'a, Result<toolwright::executor::Verdict, LedgerError>> {
    Box::pin(caller.approval_ledger(call))
}

/// A secret in a decision's arguments is masked too.
#[tokio::test]
async fn decisions_mask_secrets() {
    let journal = Arc::new(Journal::default());
    let trail = Flaky::default();
    let approvals = Approvals::new(MemoryLedger::new());
    let registry = Registry::new(Catalog::builder().build().unwrap());
    registry
        .register(
            DynamicTool::builder("vault.rotate", "rotate_credential")
                .description("Rotate a credential, once a person approved.")
                .effect(Effect::Destructive)
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "user": {"type": "string"},
                        "password": {"type": "string", "writeOnly": true},
                    },
                }))
                .approve(ledger)
                .handler(|_| Box::pin(async { Ok(json!(true)) }))
                .build()
                .unwrap(),
        )
        .unwrap();
    let exec = Executor::builder(registry, container(&journal))
        .principal::<Caller>()
        .approvals(approvals.clone())
        .audit(trail.clone())
        .build()
        .unwrap();
    let Err(CallError::ApprovalRequired(request)) = exec
        .invoke(
            "rotate_credential",
            json!({"user": "al", "password": SECRET}),
            &Caller("al"),
        )
        .await
    else {
        panic!("the rotation needs approval")
    };
    // The request is recorded in the background.
    trail.wait_for(1).await;
    approvals
        .approve(request.id.unwrap(), &Caller("bo"), "")
        .await
        .unwrap();
    let records = trail.records.lock().unwrap().clone();
    assert_eq!(records.len(), 2);
    for record in &records {
        assert!(
            !serde_json::to_string(record).unwrap().contains(SECRET),
            "{record:?}"
        );
    }
    let AuditRecord::Decision(decision) = &records[1] else {
        panic!("{records:?}")
    };
    assert_eq!(decision.approval.request.arguments["password"], REDACTED);
}

#[tokio::test]
async fn a_call_dropped_mid_body_is_recorded_as_cancelled() {
    let journal = Arc::new(Journal::default());
    let trail = Flaky::default();
    let approvals = Approvals::new(MemoryLedger::new());
    let exec = executor(trail.clone(), &journal, &approvals, None);
    let call = exec.invoke("wait_for_reply", json!({"thread": 1}), &Caller("al"));
    // The caller gives up: the call is dropped in its body.
    let dropped = tokio::time::timeout(Duration::from_millis(20), call).await;
    assert!(dropped.is_err());
    // Recorded in the background: wait for it.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while trail.outcomes().is_empty() {
        assert!(std::time::Instant::now() < deadline, "never recorded");
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        trail.outcomes(),
        [("wait_for_reply".to_owned(), OutcomeClass::Cancelled)]
    );
}

// ---------------------------------------------------------------------------
// Registry changes an operator makes through the admin API.

const OPS_TOKEN: &str = "ops-token-0123456789abcdef";

/// The tables and rows of `tests/fixtures/schema-v1`, as the first
/// release made them (the trail at version 1, with one row).
async fn first_release(db: &Db) {
    db.execute(match db {
        Db::Sqlite(_) => include_str!("../fixtures/schema-v1/sqlite.sql"),
        Db::Postgres(_) => include_str!("../fixtures/schema-v1/postgres.sql"),
    })
    .await;
}

/// The admin API on `exec`, with "ops" as its operator, at `/admin` of a
/// new listener: its root URL.
async fn admin_for(exec: &Executor) -> String {
    use toolwright::admin::{Admin, Operator};
    let admin = Admin::new(exec.clone()).operator(OPS_TOKEN, Operator::new("ops"));
    let app = axum::Router::new().nest("/admin", admin.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let root = format!("http://{}/admin", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    root
}

/// #39's finding 7 in the trail: a state restored through `PUT api/state`
/// is recorded as the operator's, whatever name the state claims; a
/// trail of the first release (schema version 1) is migrated first, its
/// row and its number kept.
async fn a_restore_is_recorded_as_the_operators(db: Db) {
    first_release(&db).await;
    let trail = db.trail().await;
    let journal = Arc::new(Journal::default());
    let approvals = Approvals::new(MemoryLedger::new());
    let exec = executor(Shared(trail), &journal, &approvals, None);
    let root = admin_for(&exec).await;

    let forged = json!({"generation": 0, "tools": {"orders.place": {"disabled": {
        "reason": "by order of the board", "by": "alice-the-ceo", "at": 0,
    }}}});
    let answer = reqwest::Client::new()
        .put(format!("{root}/api/state"))
        .header("authorization", format!("Bearer {OPS_TOKEN}"))
        .header("if-match", format!("\"r{}\"", exec.registry().generation()))
        .header("content-type", "application/json")
        .body(forged.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), reqwest::StatusCode::OK);
    let generation = exec.registry().generation();

    let select = "SELECT seq, kind, actor, outcome, reason, CAST(tool_keys AS TEXT) AS tool_keys, \
        generation FROM toolwright_audit ORDER BY seq";
    macro_rules! read {
        ($rows:expr) => {
            $rows
                .iter()
                .map(|row| {
                    (
                        row.get::<i64, _>("seq"),
                        row.get::<String, _>("kind"),
                        row.get::<Option<String>, _>("actor"),
                        row.get::<String, _>("outcome"),
                        row.get::<Option<String>, _>("tool_keys"),
                        row.get::<Option<i64>, _>("generation"),
                    )
                })
                .collect::<Vec<_>>()
        };
    }
    let rows = match &db {
        Db::Sqlite(pool) => read!(sqlx::query(select).fetch_all(pool).await.unwrap()),
        Db::Postgres(pool) => read!(sqlx::query(select).fetch_all(pool).await.unwrap()),
    };
    assert_eq!(
        rows,
        [
            (
                1,
                "decision_refused".into(),
                Some("carol".into()),
                "refused".into(),
                None,
                None
            ),
            (
                2,
                "registry".into(),
                Some("ops".into()),
                "restored".into(),
                Some(r#"["orders.place"]"#.into()),
                Some(i64::try_from(generation).unwrap()),
            ),
        ]
    );
}

databases::each_database!("audit_admin": a_restore_is_recorded_as_the_operators);
