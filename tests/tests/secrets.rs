//! `#[secret]`: one recognisable secret sent through every path a call
//! can take, and every sink searched for it: the execution log, tracing
//! output, errors (their text, their sources, what a model is told),
//! provider result messages, MCP results and elicitation, and the approval
//! ledgers. The digest still binds the real value.
//!
//! A sink is checked with [`assert_no_secret`]; a new sink is one more call.
//! Alone in its test binary: the tracing subscriber is the process's.

mod mcp_client;

use std::collections::HashSet;
use std::error::Error as _;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use toolwright::approval::{ApprovalLedger, MemoryLedger, SqliteLedger};
use toolwright::audit::{AuditError, AuditRecord, AuditTrail};
use toolwright::mcp::{McpServer, approval_request};
use toolwright::observe::{ExecutionLog, REDACTED};
use toolwright::providers::{self, Format, ToolCall};
use toolwright::{
    CallError, Catalog, Container, Executor, Invocation, Principal,
    approval::{Approvals, Digest},
    executor::BoxFuture,
    tool,
};

use mcp_client::{call, connect, text};

/// The secret every test sends.
const SECRET: &str = "sk-LEAK-4f1c9a";

/// Fails when `text`, what the sink `sink` holds, contains the secret.
#[track_caller]
fn assert_no_secret(sink: &str, text: &str) {
    assert!(
        !text
            .to_ascii_lowercase()
            .contains(&SECRET.to_ascii_lowercase()),
        "the secret leaked into {sink}, in some case: {text}"
    );
}

/// Every text an error offers: `Display`, `Debug`, each source's
/// `Display`, and what a model is told.
fn error_texts(error: &CallError) -> String {
    let mut texts = vec![
        error.to_string(),
        format!("{error:?}"),
        error.model_message(),
    ];
    let mut source = error.source();
    while let Some(error) = source {
        texts.push(error.to_string());
        texts.push(format!("{error:?}"));
        source = error.source();
    }
    texts.join("\n")
}

#[track_caller]
fn assert_no_secret_in_error(sink: &str, error: &CallError) {
    assert_no_secret(sink, &error_texts(error));
}

// ------------------------------------------------------------------ tools

struct Caller(&'static str);

impl Principal for Caller {
    fn id(&self) -> &str {
        self.0
    }
}

/// Why the mail server refused a login; it quotes the token, as careless
/// errors do.
#[derive(Debug)]
struct Refused {
    token: String,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the server refused token {}", self.token)
    }
}

impl std::error::Error for Refused {}

/// An error that quotes no secret, which a caller can still downcast.
#[derive(Debug)]
struct Offline;

impl fmt::Display for Offline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the mail server is offline")
    }
}

impl std::error::Error for Offline {}

/// Sign in to the mail server.
#[tool(key = "mail.login", effect = read, authorize = public)]
async fn login(
    user: String,
    /// The account's API token.
    #[secret]
    token: String,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    match user.as_str() {
        "ann" => Ok(format!("welcome, {user}")),
        "panic" => panic!("cannot use token {token}"),
        "offline" => Err(Box::new(Offline)),
        // Shouted, as some servers echo what they were sent.
        "shout" => Err(Box::new(Refused {
            token: token.to_uppercase(),
        })),
        _ => Err(Box::new(Refused { token })),
    }
}

/// Unlock a door with its PIN code; the schema quotes a value that breaks it.
#[tool(key = "doors.unlock", effect = read, authorize = public)]
async fn unlock(
    door: u32,
    #[secret]
    #[schemars(length(max = 8))]
    code: String,
) -> bool {
    door > 0 && !code.is_empty()
}

/// Rotate a key; its authorize hook fails quoting the key, or panics.
#[tool(key = "keys.rotate", effect = read, authorize = checked)]
async fn rotate(#[secret] key: String, hook: String) -> bool {
    !key.is_empty() && !hook.is_empty()
}

async fn checked(_: &Caller, call: &Invocation<'_, RotateArgs>) -> Result<bool, std::io::Error> {
    match call.hook.as_str() {
        "panic" => panic!("the hook choked on {}", call.key),
        _ => Err(std::io::Error::other(format!(
            "key {} is revoked",
            call.key
        ))),
    }
}

/// Pay a supplier with a one-time password, which a person approves.
#[tool(key = "payments.pay", effect = write, authorize = public, approve = Caller::approval_ledger)]
async fn pay(to: String, cents: u64, #[secret] otp: String) -> String {
    format!(
        "paid {cents} to {to} with a {}-character password",
        otp.len()
    )
}

/// Refund a card; the bank refuses, quoting the card's number.
#[tool(key = "payments.refund", effect = write, authorize = public, approve = refundable)]
async fn refund(#[secret] card: String) -> Result<bool, std::io::Error> {
    Err(std::io::Error::other(format!("card {card} is closed")))
}

async fn refundable(_: &Caller, _: &Invocation<'_, RefundArgs>) -> bool {
    true
}

/// A card number, checked when read; its error quotes the value, as
/// careless ones do.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(try_from = "String", into = "String")]
#[schemars(with = "String")]
struct CardNumber(String);

impl TryFrom<String> for CardNumber {
    type Error = String;

    fn try_from(number: String) -> Result<Self, String> {
        match number.bytes().all(|b| b.is_ascii_digit()) {
            true => Ok(CardNumber(number)),
            false => Err(format!("{number} is not a card number")),
        }
    }
}

impl From<CardNumber> for String {
    fn from(card: CardNumber) -> String {
        card.0
    }
}

/// Check a card's number.
#[tool(key = "payments.check_card", effect = read, authorize = public)]
async fn check_card(#[secret] card: CardNumber) -> bool {
    !card.0.is_empty()
}

// ------------------------------------------------------------------ sinks

/// An audit trail that keeps every record, as JSON.
struct KeptTrail;

impl AuditTrail for KeptTrail {
    fn record<'a>(&'a self, record: &'a AuditRecord) -> BoxFuture<'a, Result<(), AuditError>> {
        let json = serde_json::to_string(record).unwrap();
        audited()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_str(&json);
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Every audit record written by the tests' executors so far.
fn audited() -> &'static Mutex<String> {
    static AUDITED: OnceLock<Mutex<String>> = OnceLock::new();
    AUDITED.get_or_init(Mutex::default)
}

/// Every span (name and fields, as made and as recorded later) and every
/// event that toolwright gave the process's tracing subscriber, as text.
///
/// Only toolwright's: rmcp logs every message it sends and receives, the
/// arguments of a `tools/call` included, at DEBUG level under its own
/// target (`rmcp`), which an application keeps at INFO or above.
fn traced() -> String {
    captured()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

fn captured() -> &'static Mutex<String> {
    static TRACED: OnceLock<Mutex<String>> = OnceLock::new();
    TRACED.get_or_init(|| {
        let subscriber = Capture::default();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        Mutex::new(String::new())
    })
}

/// A subscriber that writes toolwright's spans, records and events as text.
#[derive(Default)]
struct Capture {
    last: std::sync::atomic::AtomicU64,
    /// The ids of toolwright's spans.
    ours: Mutex<HashSet<u64>>,
}

fn toolwright(metadata: &tracing::Metadata<'_>) -> bool {
    metadata.target().starts_with("toolwright")
}

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

fn write(line: String) {
    captured()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push_str(&line);
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let id = 1 + self.last.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if toolwright(span.metadata()) {
            self.ours
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(id);
            let mut fields = Fields(format!("span {}", span.metadata().name()));
            span.record(&mut fields);
            write(fields.0 + "\n");
        }
        tracing::span::Id::from_u64(id)
    }

    fn record(&self, span: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let ours = self.ours.lock().unwrap_or_else(PoisonError::into_inner);
        if ours.contains(&span.into_u64()) {
            let mut fields = Fields("record".to_owned());
            values.record(&mut fields);
            write(fields.0 + "\n");
        }
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        if !toolwright(event.metadata()) {
            return;
        }
        let mut fields = Fields(format!("event {}", event.metadata().target()));
        event.record(&mut fields);
        write(fields.0 + "\n");
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

/// An executor serving the tools above, logging every call, with
/// `approvals` for the ledger hook.
fn executor(log: &ExecutionLog, approvals: Approvals) -> Executor {
    let catalog = Catalog::builder()
        .register::<LoginArgs>()
        .register::<UnlockArgs>()
        .register::<RotateArgs>()
        .register::<PayArgs>()
        .register::<RefundArgs>()
        .register::<CheckCardArgs>()
        .build()
        .unwrap();
    Executor::builder(catalog, Container::default())
        .observe(log.clone())
        .audit(KeptTrail)
        .approvals(approvals)
        .principal::<Caller>()
        .build()
        .unwrap()
}

/// The calls that fail with the secret in hand, one per way an error is
/// made: a tool's error, its panic, a schema violation, a hook's error
/// and a hook's panic.
fn failing_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("login", json!({"user": "bob", "token": SECRET})),
        ("login", json!({"user": "panic", "token": SECRET})),
        ("unlock", json!({"door": 1, "code": SECRET})),
        ("rotate", json!({"key": SECRET, "hook": "error"})),
        ("rotate", json!({"key": SECRET, "hook": "panic"})),
        ("refund", json!({"card": SECRET})),
        ("login", json!({"user": "shout", "token": SECRET})),
        ("check_card", json!({"card": SECRET})),
    ]
}

/// Waits for the log to hold `count` entries and checks them, as JSON.
async fn assert_log_clean(log: &ExecutionLog, count: u64) {
    let entries = tokio::time::timeout(Duration::from_secs(10), log.wait_for(count))
        .await
        .expect("every call's event reaches the log");
    let json = serde_json::to_string(&entries).unwrap();
    assert_no_secret("the execution log", &json);
    assert!(json.contains(REDACTED), "the log shows the mask: {json}");
}

// ------------------------------------------------------------------ tests

#[tokio::test]
async fn a_secret_never_leaves_through_a_failing_call() {
    captured();
    let log = ExecutionLog::new(100).unwrap();
    let executor = executor(&log, Approvals::new(MemoryLedger::new()));
    let calls = failing_calls();
    for (name, arguments) in &calls {
        let error = executor
            .invoke(name, arguments.clone(), &Caller("ann"))
            .await
            .unwrap_err();
        assert_no_secret_in_error(&format!("the error of `{name}`"), &error);
    }
    assert_log_clean(&log, calls.len() as u64).await;
    assert_no_secret("tracing output", &traced());
    // The refund is a write: recorded, error text and all, before the
    // call's error is scrubbed on its way out.
    let audited = audited().lock().unwrap().clone();
    assert!(audited.contains("is closed"), "{audited}");
    assert_no_secret("the audit trail", &audited);
}

#[tokio::test]
async fn errors_say_what_happened_with_the_secret_masked() {
    captured();
    let log = ExecutionLog::new(100).unwrap();
    let executor = executor(&log, Approvals::new(MemoryLedger::new()));
    let ann = Caller("ann");

    let refused = executor
        .invoke("login", json!({"user": "bob", "token": SECRET}), &ann)
        .await
        .unwrap_err();
    let source = refused.source().unwrap().to_string();
    assert_eq!(source, format!("the server refused token {REDACTED}"));

    let panicked = executor
        .invoke("login", json!({"user": "panic", "token": SECRET}), &ann)
        .await
        .unwrap_err();
    let CallError::Panicked { message, .. } = &panicked else {
        panic!("{panicked}")
    };
    assert_eq!(*message, format!("cannot use token {REDACTED}"));

    let invalid = executor
        .invoke("unlock", json!({"door": 1, "code": SECRET}), &ann)
        .await
        .unwrap_err();
    let CallError::InvalidArguments { violations, .. } = &invalid else {
        panic!("{invalid}")
    };
    assert_eq!(violations.0[0].path, "/code");
    assert!(violations.0[0].message.contains(REDACTED), "{invalid}");

    let hook = executor
        .invoke("rotate", json!({"key": SECRET, "hook": "error"}), &ann)
        .await
        .unwrap_err();
    let source = hook.source().unwrap().to_string();
    assert_eq!(source, format!("key {REDACTED} is revoked"));

    // An error that quotes no secret is kept as it is, and downcasts.
    let offline = executor
        .invoke("login", json!({"user": "offline", "token": SECRET}), &ann)
        .await
        .unwrap_err();
    assert!(
        offline
            .source()
            .unwrap()
            .downcast_ref::<Offline>()
            .is_some()
    );

    // A call with the secret goes through, and the tool had the real value.
    let welcome = executor
        .invoke("login", json!({"user": "ann", "token": SECRET}), &ann)
        .await
        .unwrap();
    assert_eq!(welcome, json!("welcome, ann"));
}

/// Reproduces #39's finding 6: a one-character secret scrubbed that
/// letter out of the whole error text, a secret in upper case passed
/// through, and serde's message may quote a value its type refuses.
#[tokio::test]
async fn scrubbing_keeps_short_values_apart_catches_any_case_and_never_quotes_a_refused_value() {
    captured();
    let log = ExecutionLog::new(100).unwrap();
    let executor = executor(&log, Approvals::new(MemoryLedger::new()));
    let ann = Caller("ann");

    // Too short to mean anything: the text is left as it is.
    let short = executor
        .invoke("login", json!({"user": "bob", "token": "k"}), &ann)
        .await
        .unwrap_err();
    assert_eq!(
        short.source().unwrap().to_string(),
        "the server refused token k"
    );

    let shouted = executor
        .invoke("login", json!({"user": "shout", "token": SECRET}), &ann)
        .await
        .unwrap_err();
    assert_eq!(
        shouted.source().unwrap().to_string(),
        format!("the server refused token {REDACTED}")
    );

    let unread = executor
        .invoke("check_card", json!({"card": SECRET}), &ann)
        .await
        .unwrap_err();
    let CallError::InvalidArguments { violations, .. } = &unread else {
        panic!("{unread}")
    };
    assert_eq!(violations.0[0].path, "/card");
    assert!(!violations.0[0].message.contains("card number"), "{unread}");
    assert!(violations.0[0].message.contains("secret"), "{unread}");
}

#[tokio::test]
async fn typed_calls_and_preflights_scrub_the_secret_too() {
    captured();
    let log = ExecutionLog::new(100).unwrap();
    let executor = executor(&log, Approvals::new(MemoryLedger::new()));
    let ann = Caller("ann");
    let typed = LoginArgs {
        user: "bob".into(),
        token: SECRET.into(),
    };
    assert_no_secret("the arguments' Debug", &format!("{typed:?}"));
    let error = executor.call(typed, &ann).await.unwrap_err();
    assert_no_secret_in_error("a typed call's error", &error);
    let asked = executor
        .preflight("rotate", json!({"key": SECRET, "hook": "panic"}), &ann)
        .await
        .unwrap_err();
    assert_no_secret_in_error("a preflight's error", &asked);
    assert_log_clean(&log, 1).await;
    assert_no_secret("tracing output", &traced());
}

#[tokio::test]
async fn provider_result_messages_never_hold_the_secret() {
    captured();
    let log = ExecutionLog::new(100).unwrap();
    let executor = executor(&log, Approvals::new(MemoryLedger::new()));
    let calls: Vec<ToolCall> = failing_calls()
        .into_iter()
        .enumerate()
        .map(|(i, (name, arguments))| ToolCall::new(format!("call_{i}"), name, arguments))
        .collect();
    let count = calls.len() as u64;
    let outcomes = executor.run_calls(calls, &Caller("ann")).await;
    for outcome in &outcomes {
        assert!(outcome.is_error());
        assert_no_secret("a call outcome's model text", &outcome.model_text());
        if let Err(error) = &outcome.result {
            assert_no_secret_in_error("a call outcome's error", error);
        }
    }
    for format in Format::ALL {
        let messages = providers::result_messages(&outcomes, format);
        assert_no_secret(
            &format!("{format:?} result messages"),
            &serde_json::to_string(&messages).unwrap(),
        );
    }
    assert_log_clean(&log, count).await;
}

#[tokio::test]
async fn every_provider_export_of_a_tool_with_a_secret_is_valid() {
    let catalog = Catalog::builder().register::<LoginArgs>().build().unwrap();
    let tool = catalog.get("login").unwrap();
    assert_eq!(
        tool.input_schema()["properties"]["token"]["writeOnly"],
        json!(true)
    );
    for format in Format::ALL {
        let schema = providers::schema_for(tool, format)
            .unwrap_or_else(|e| panic!("{format:?}: {e}"))
            .to_string();
        // The dialects that know the keyword keep it; the others drop it.
        let kept = matches!(
            format,
            Format::Anthropic
                | Format::GeminiJsonSchema
                | Format::OpenAiChat { strict: false }
                | Format::OpenAiResponses { strict: false }
        );
        assert_eq!(schema.contains("writeOnly"), kept, "{format:?}: {schema}");
    }
}

#[tokio::test]
async fn an_mcp_client_sees_no_secret_in_error_results() {
    captured();
    let log = ExecutionLog::new(100).unwrap();
    let executor = executor(&log, Approvals::new(MemoryLedger::new()));
    let server = McpServer::<Caller>::new(executor, "secrets", "1.0.0");
    let client = connect(&server, Caller("ann")).await;
    let calls = failing_calls();
    for (name, arguments) in &calls {
        let result = call(&client, name, arguments.clone()).await;
        assert_eq!(result.is_error, Some(true), "{name}");
        assert_no_secret("an MCP error result's text", &text(&result));
        assert_no_secret(
            "an MCP error result",
            &serde_json::to_string(&result).unwrap(),
        );
    }
    // A call waiting for approval carries its request, masked, in `_meta`.
    let pay = json!({"to": "ACME", "cents": 1200, "otp": SECRET});
    let waiting = call(&client, "pay", pay.clone()).await;
    let request = approval_request(&waiting).unwrap().unwrap();
    assert_eq!(request.arguments["otp"], REDACTED);
    assert_eq!(request.digest, Digest::of("payments.pay", &pay));
    assert_no_secret(
        "an MCP approval-required result",
        &serde_json::to_string(&waiting).unwrap(),
    );
    client.cancel().await.unwrap();
    assert_log_clean(&log, calls.len() as u64 + 1).await;
}

/// #39's finding 6 as an MCP client meets it: a one-character secret,
/// too short to scrub from texts, still never reaches the client, and
/// the words around it stay whole. A tool's own error text is not sent;
/// a value its type refuses, quoted by the refusal, is withheld by
/// property, whatever its length.
#[tokio::test]
async fn an_mcp_client_never_sees_a_one_character_secret_and_its_errors_stay_readable() {
    captured();
    let log = ExecutionLog::new(100).unwrap();
    let executor = executor(&log, Approvals::new(MemoryLedger::new()));
    let server = McpServer::<Caller>::new(executor, "secrets", "1.0.0");
    let client = connect(&server, Caller("ann")).await;

    // `e` is in most words: scrubbed, it would leave `Corr[redacted]ct`.
    let refused = call(&client, "check_card", json!({"card": "e"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        text(&refused),
        "Invalid arguments: /card: the value does not read as the parameter's type \
         (the reason is withheld: the value is secret). Correct them and call the tool again."
    );
    let failed = call(&client, "login", json!({"user": "bob", "token": "e"})).await;
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(text(&failed), "The tool failed.");
    client.cancel().await.unwrap();
}

/// The approval flow on `ledger`: the request, the ledger's rows and the
/// pending list show the mask; approved, the real call runs once, and the
/// same call with another secret needs its own approval.
async fn approvals_mask_the_secret_and_bind_it(ledger: Arc<dyn ApprovalLedger>) {
    captured();
    let log = ExecutionLog::new(100).unwrap();
    let approvals = Approvals::builder_shared(ledger).build();
    let executor = executor(&log, approvals.clone());
    let ann = Caller("ann");
    let arguments = json!({"to": "ACME", "cents": 1200, "otp": SECRET});

    let waiting = executor
        .invoke("pay", arguments.clone(), &ann)
        .await
        .unwrap_err();
    assert_no_secret_in_error("an approval-required error", &waiting);
    let CallError::ApprovalRequired(request) = waiting else {
        panic!("{waiting}")
    };
    assert_eq!(request.arguments["otp"], REDACTED);
    assert_eq!(request.arguments["to"], "ACME");
    // The digest binds the real value.
    assert_eq!(request.digest, Digest::of("payments.pay", &arguments));

    let pending = approvals.pending().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_no_secret(
        "the pending approvals",
        &serde_json::to_string(&pending).unwrap(),
    );
    assert_no_secret("a pending approval's Debug", &format!("{pending:?}"));

    // Approved as shown, masked: the real call runs.
    approvals
        .approve(request.id.unwrap(), &Caller("bo"), "the invoice matches")
        .await
        .unwrap();
    let paid = executor
        .invoke("pay", arguments.clone(), &ann)
        .await
        .unwrap();
    assert_eq!(
        paid,
        json!("paid 1200 to ACME with a 14-character password")
    );
    // Another secret is another call, which no approval covers.
    let other = json!({"to": "ACME", "cents": 1200, "otp": "sk-OTHER-000000"});
    let again = executor.invoke("pay", other, &ann).await.unwrap_err();
    assert!(matches!(again, CallError::ApprovalRequired(_)), "{again}");

    let decided = approvals.get(request.id.unwrap()).await.unwrap();
    assert_no_secret(
        "a decided approval",
        &serde_json::to_string(&decided).unwrap(),
    );
    let waiting = approvals.pending().await.unwrap();
    assert_no_secret(
        "the pending approvals",
        &serde_json::to_string(&waiting).unwrap(),
    );
    assert_log_clean(&log, 3).await;
    assert_no_secret("tracing output", &traced());
}

#[tokio::test]
async fn a_memory_ledger_never_holds_the_secret() {
    approvals_mask_the_secret_and_bind_it(Arc::new(MemoryLedger::new())).await;
}

#[tokio::test]
async fn a_sqlite_ledger_never_holds_the_secret() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("secrets");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ledger.db");
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    let options = SqliteConnectOptions::new()
        .filename(&file)
        .create_if_missing(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .unwrap();
    let ledger = SqliteLedger::connect(pool.clone()).await.unwrap();
    approvals_mask_the_secret_and_bind_it(Arc::new(ledger)).await;

    let rows = sqlx::query("SELECT arguments FROM toolwright_approvals")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        let arguments: String = row.get("arguments");
        assert_no_secret("the SQLite ledger's arguments column", &arguments);
    }
    pool.close().await;
    // Nowhere in the database's files either.
    for suffix in ["", "-wal", "-journal"] {
        if let Ok(bytes) = std::fs::read(format!("{}{suffix}", file.display())) {
            let text = String::from_utf8_lossy(&bytes);
            assert_no_secret("the SQLite database file", &text);
        }
    }
}

/// An MCP client whose person approves every request, keeping what they
/// were shown.
#[derive(Clone, Default)]
struct Approver(Arc<Mutex<Vec<String>>>);

impl ClientHandler for Approver {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.0.lock().unwrap().push(message);
        }
        Ok(ElicitResult::new(ElicitationAction::Accept))
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(capabilities, Implementation::new("approver", "1.0.0"))
    }
}

#[tokio::test]
async fn an_mcp_person_approves_the_masked_call_and_the_real_one_runs() {
    captured();
    let log = ExecutionLog::new(100).unwrap();
    let approvals = Approvals::builder(MemoryLedger::new())
        .allow_self_approval()
        .build();
    let executor = executor(&log, approvals);
    let server = McpServer::<Caller>::builder(executor, "secrets", "1.0.0")
        .elicitation(Duration::from_secs(30))
        .build();
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.handler(Caller("ann"));
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let approver = Approver::default();
    let client = approver.clone().serve(client_io).await.unwrap();
    let arguments = json!({"to": "ACME", "cents": 1200, "otp": SECRET});
    let Value::Object(map) = arguments else {
        unreachable!()
    };
    let paid = client
        .call_tool(rmcp::model::CallToolRequestParams::new("pay").with_arguments(map))
        .await
        .unwrap();
    assert_eq!(paid.is_error, Some(false), "{paid:?}");
    assert_eq!(
        text(&paid),
        "paid 1200 to ACME with a 14-character password"
    );
    assert_eq!(approval_request(&paid).unwrap(), None);
    let shown = approver.0.lock().unwrap().join("\n");
    assert!(shown.contains(REDACTED), "{shown}");
    assert_no_secret("the MCP elicitation message", &shown);
    client.cancel().await.unwrap();
    assert_log_clean(&log, 2).await;
}
