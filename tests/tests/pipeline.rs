//! The executor pipeline as a caller sees it: validation, authorization,
//! approval, errors that keep their source, and the typed path.

use std::error::Error as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolwright::{
    CallError, Catalog, Container, Context, Executor, Inject, Invocation,
    approval::Digest,
    executor::{HookKind, Verdict},
    tool,
};

/// Who is calling, and what the test wants the hooks to answer.
#[derive(Clone)]
struct Actor {
    may_call: bool,
    approval: Verdict,
}

impl Actor {
    fn allowed() -> Self {
        Actor {
            may_call: true,
            approval: Verdict::Allow,
        }
    }
}

static AUTHORIZED: AtomicUsize = AtomicUsize::new(0);
static APPROVED: AtomicUsize = AtomicUsize::new(0);
static TRANSFERS: AtomicUsize = AtomicUsize::new(0);
static ECHOES: AtomicUsize = AtomicUsize::new(0);

async fn may_call<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool {
    AUTHORIZED.fetch_add(1, Ordering::SeqCst);
    actor.may_call
}

async fn per_actor<A>(actor: &Actor, _: &Invocation<'_, A>) -> Verdict {
    APPROVED.fetch_add(1, Ordering::SeqCst);
    actor.approval
}

/// A ledger the transfer tool writes to.
trait Ledger: Send + Sync {
    fn record(&self, from: &str, to: &str, cents: u64) -> u64;
}

struct CountingLedger;

impl Ledger for CountingLedger {
    fn record(&self, _: &str, _: &str, cents: u64) -> u64 {
        cents
    }
}

/// Move money between two accounts.
#[tool(key = "bank.transfer", effect = write, authorize = may_call, approve = per_actor)]
async fn transfer(
    /// Account to take the money from.
    from: String,
    /// Account to put the money in.
    to: String,
    /// Amount in cents.
    #[schemars(range(min = 1, max = 1_000_000))]
    cents: u64,
    /// A note for the statement.
    #[default = String::from("transfer")]
    memo: String,
    ledger: Inject<dyn Ledger>,
    actor: Context<Actor>,
) -> u64 {
    TRANSFERS.fetch_add(1, Ordering::SeqCst);
    let _ = (&memo, &actor.may_call);
    ledger.record(&from, &to, cents)
}

/// Repeat a word.
#[tool(key = "demo.echo", effect = read, authorize = may_call)]
async fn echo(
    /// The word to repeat.
    #[schemars(length(min = 1, max = 10))]
    word: String,
    /// How many times.
    #[schemars(range(min = 1, max = 3))]
    times: Option<u8>,
) -> String {
    ECHOES.fetch_add(1, Ordering::SeqCst);
    word.repeat(usize::from(times.unwrap_or(1)))
}

/// An error of the application's own type.
#[derive(Debug, PartialEq)]
struct OutOfStock {
    sku: String,
}

impl std::fmt::Display for OutOfStock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is out of stock", self.sku)
    }
}

impl std::error::Error for OutOfStock {}

/// Reserve one unit of a product.
#[tool(key = "stock.reserve", effect = read, authorize = public)]
async fn reserve(sku: String) -> Result<u32, OutOfStock> {
    Err(OutOfStock { sku })
}

#[derive(Debug)]
struct PolicyDown;

impl std::fmt::Display for PolicyDown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the policy service is down")
    }
}

impl std::error::Error for PolicyDown {}

async fn failing_policy(_: &Actor, _: &Invocation<'_, AuditArgs>) -> Result<bool, PolicyDown> {
    Err(PolicyDown)
}

/// Read the audit log.
#[tool(key = "audit.read", effect = read, authorize = failing_policy)]
async fn audit() -> Vec<String> {
    Vec::new()
}

fn executor() -> Executor {
    let catalog = Catalog::discover().expect("no duplicate tools in this test binary");
    let container = Container::builder()
        .app::<dyn Ledger>(Arc::new(CountingLedger))
        .build();
    Executor::new(catalog, container).expect("every injected type is provided")
}

fn transfer_args() -> Value {
    json!({"from": "alice", "to": "bob", "cents": 500})
}

// The counters are shared by every test in this binary, so each test uses
// differences over its own calls, and tests that count run under one lock.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test]
async fn authorized_and_approved_write_runs_once() {
    let _serial = SERIAL.lock().await;
    let before = TRANSFERS.load(Ordering::SeqCst);
    let result = executor()
        .invoke("transfer", transfer_args(), &Actor::allowed())
        .await;
    assert_eq!(result.unwrap(), json!(500));
    assert_eq!(TRANSFERS.load(Ordering::SeqCst), before + 1);
}

#[tokio::test]
async fn denied_call_runs_neither_approve_nor_body() {
    let _serial = SERIAL.lock().await;
    let (approved, ran) = (
        APPROVED.load(Ordering::SeqCst),
        TRANSFERS.load(Ordering::SeqCst),
    );
    let actor = Actor {
        may_call: false,
        approval: Verdict::Allow,
    };
    let result = executor().invoke("transfer", transfer_args(), &actor).await;
    assert!(matches!(
        result,
        Err(CallError::Denied { ref key }) if key == "bank.transfer"
    ));
    assert_eq!(APPROVED.load(Ordering::SeqCst), approved);
    assert_eq!(TRANSFERS.load(Ordering::SeqCst), ran);
}

#[tokio::test]
async fn write_without_approval_never_runs() {
    let _serial = SERIAL.lock().await;
    let ran = TRANSFERS.load(Ordering::SeqCst);
    let actor = Actor {
        may_call: true,
        approval: Verdict::Deny,
    };
    let result = executor().invoke("transfer", transfer_args(), &actor).await;
    assert!(matches!(
        result,
        Err(CallError::NotApproved { ref key }) if key == "bank.transfer"
    ));
    assert_eq!(TRANSFERS.load(Ordering::SeqCst), ran);
}

#[tokio::test]
async fn pending_approval_returns_the_request_bound_to_the_arguments() {
    let _serial = SERIAL.lock().await;
    let ran = TRANSFERS.load(Ordering::SeqCst);
    let actor = Actor {
        may_call: true,
        approval: Verdict::Pending,
    };
    let exec = executor();
    let request = |args: Value| {
        let exec = exec.clone();
        let actor = actor.clone();
        async move {
            match exec.invoke("transfer", args, &actor).await {
                Err(CallError::ApprovalRequired(request)) => request,
                other => panic!("expected ApprovalRequired, got {other:?}"),
            }
        }
    };
    let first = request(json!({"from": "alice", "to": "bob", "cents": 500})).await;
    let reordered = request(json!({"cents": 500, "to": "bob", "from": "alice"})).await;
    let explicit_default =
        request(json!({"cents": 500, "to": "bob", "from": "alice", "memo": "transfer"})).await;
    let changed = request(json!({"from": "alice", "to": "bob", "cents": 501})).await;

    assert_eq!(first.key, "bank.transfer");
    assert_eq!(first.name, "transfer");
    assert_eq!(
        first.arguments,
        json!({"from": "alice", "to": "bob", "cents": 500, "memo": "transfer"}),
        "the canonical arguments have the default applied"
    );
    assert_eq!(first.digest, reordered.digest);
    assert_eq!(first.digest, explicit_default.digest);
    assert_ne!(first.digest, changed.digest);
    assert_eq!(first.digest, Digest::of("bank.transfer", &first.arguments));
    assert_eq!(
        TRANSFERS.load(Ordering::SeqCst),
        ran,
        "a pending call never runs"
    );
}

static DEPOSITS: AtomicUsize = AtomicUsize::new(0);

/// Put money in an account (a write that injects nothing: its hooks and
/// body are one future).
#[tool(key = "bank.deposit", effect = write, authorize = may_call, approve = per_actor)]
async fn deposit(to: String, cents: u64) -> u64 {
    DEPOSITS.fetch_add(1, Ordering::SeqCst);
    let _ = to;
    cents
}

#[tokio::test]
async fn a_write_that_injects_nothing_runs_only_authorized_and_approved() {
    let _serial = SERIAL.lock().await;
    let exec = executor();
    let args = json!({"to": "bob", "cents": 700});
    let with = |may_call: bool, approval: Verdict| Actor { may_call, approval };
    let (asked, ran) = (
        APPROVED.load(Ordering::SeqCst),
        DEPOSITS.load(Ordering::SeqCst),
    );

    let denied = exec
        .invoke("deposit", args.clone(), &with(false, Verdict::Allow))
        .await;
    assert!(
        matches!(
            &denied,
            Err(CallError::Denied { key }) if key == "bank.deposit"
        ),
        "{denied:?}"
    );
    assert_eq!(
        APPROVED.load(Ordering::SeqCst),
        asked,
        "denied: approve is not asked"
    );

    let refused = exec
        .invoke("deposit", args.clone(), &with(true, Verdict::Deny))
        .await;
    assert!(
        matches!(
            &refused,
            Err(CallError::NotApproved { key }) if key == "bank.deposit"
        ),
        "{refused:?}"
    );
    match exec
        .invoke("deposit", args.clone(), &with(true, Verdict::Pending))
        .await
    {
        Err(CallError::ApprovalRequired(request)) => {
            assert_eq!(request.arguments, args);
            assert_eq!(request.digest, Digest::of("bank.deposit", &args));
        }
        other => panic!("expected ApprovalRequired, got {other:?}"),
    }
    assert_eq!(
        DEPOSITS.load(Ordering::SeqCst),
        ran,
        "nothing ran unapproved"
    );

    let approved = exec
        .invoke("deposit", args, &with(true, Verdict::Allow))
        .await;
    assert_eq!(approved.unwrap(), json!(700));
    assert_eq!(DEPOSITS.load(Ordering::SeqCst), ran + 1);
    assert_eq!(APPROVED.load(Ordering::SeqCst), asked + 3);
}

#[tokio::test]
async fn injected_and_context_parameters_cannot_be_supplied() {
    let _serial = SERIAL.lock().await;
    let ran = TRANSFERS.load(Ordering::SeqCst);
    let authorized = AUTHORIZED.load(Ordering::SeqCst);
    for smuggled in ["ledger", "actor"] {
        let mut args = transfer_args();
        args[smuggled] = json!({"may_call": true});
        let result = executor().invoke("transfer", args, &Actor::allowed()).await;
        match result {
            Err(CallError::InvalidArguments { violations, .. }) => {
                assert!(
                    violations.0.iter().any(|v| v.message.contains(smuggled)),
                    "the violation names `{smuggled}`: {violations}"
                );
            }
            other => panic!("expected InvalidArguments for `{smuggled}`, got {other:?}"),
        }
    }
    assert_eq!(TRANSFERS.load(Ordering::SeqCst), ran);
    assert_eq!(
        AUTHORIZED.load(Ordering::SeqCst),
        authorized,
        "hooks never see invalid input"
    );
}

#[tokio::test]
async fn injected_and_context_parameters_are_absent_from_the_schema() {
    let catalog = Catalog::discover().unwrap();
    let schema = catalog.get("transfer").unwrap().input_schema();
    let properties = schema["properties"].as_object().unwrap();
    let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["cents", "from", "memo", "to"]);
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(schema["required"], json!(["from", "to", "cents"]));
    assert_eq!(
        properties["cents"]["description"],
        json!("Amount in cents.")
    );
    assert_eq!(properties["memo"]["default"], json!("transfer"));
}

#[tokio::test]
async fn every_violation_is_reported_with_its_path() {
    let _serial = SERIAL.lock().await;
    let ran = ECHOES.load(Ordering::SeqCst);
    let result = executor()
        .invoke(
            "echo",
            json!({"word": "far too long a word", "times": 9, "extra": 1}),
            &Actor::allowed(),
        )
        .await;
    let Err(CallError::InvalidArguments {
        key: tool,
        violations,
    }) = result
    else {
        panic!("expected InvalidArguments, got {result:?}");
    };
    assert_eq!(tool, "demo.echo");
    let paths: Vec<&str> = violations.0.iter().map(|v| v.path.as_str()).collect();
    assert!(paths.contains(&"/word"), "{violations}");
    assert!(paths.contains(&"/times"), "{violations}");
    assert!(
        paths.contains(&""),
        "the unknown field is reported at the root: {violations}"
    );
    assert_eq!(ECHOES.load(Ordering::SeqCst), ran);
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_invalid() {
    for args in [json!(null), json!([1, 2]), json!("word"), json!(3)] {
        let result = executor()
            .invoke("echo", args.clone(), &Actor::allowed())
            .await;
        assert!(
            matches!(result, Err(CallError::InvalidArguments { .. })),
            "{args} gave {result:?}"
        );
    }
}

#[tokio::test]
async fn an_integral_float_is_accepted_where_the_schema_says_integer() {
    let _serial = SERIAL.lock().await;
    let result = executor()
        .invoke(
            "echo",
            json!({"word": "ab", "times": 2.0}),
            &Actor::allowed(),
        )
        .await;
    assert_eq!(result.unwrap(), json!("abab"));
}

#[tokio::test]
async fn unknown_tool_is_named() {
    let result = executor()
        .invoke("nope", json!({}), &Actor::allowed())
        .await;
    match result {
        Err(CallError::UnknownTool { name }) => assert_eq!(name, "nope"),
        other => panic!("expected UnknownTool, got {other:?}"),
    }
}

#[tokio::test]
async fn tool_error_keeps_its_source() {
    let result = executor()
        .invoke("reserve", json!({"sku": "A-1"}), &Actor::allowed())
        .await;
    let error = result.unwrap_err();
    assert!(matches!(
        &error,
        CallError::Tool { key, .. } if key == "stock.reserve"
    ));
    let source = error
        .source()
        .unwrap()
        .downcast_ref::<OutOfStock>()
        .unwrap();
    assert_eq!(source, &OutOfStock { sku: "A-1".into() });
}

#[tokio::test]
async fn hook_error_keeps_its_source() {
    let result = executor()
        .invoke("audit", json!({}), &Actor::allowed())
        .await;
    let error = result.unwrap_err();
    assert!(matches!(
        &error,
        CallError::Hook {
            key,
            hook: HookKind::Authorize,
            ..
        } if key == "audit.read"
    ));
    assert!(
        error
            .source()
            .unwrap()
            .downcast_ref::<PolicyDown>()
            .is_some()
    );
}

#[tokio::test]
async fn a_context_of_the_wrong_type_is_a_clear_error() {
    let _serial = SERIAL.lock().await;
    let ran = ECHOES.load(Ordering::SeqCst);
    let result = executor()
        .invoke("echo", json!({"word": "hi"}), &"an actor?")
        .await;
    match result {
        Err(error @ CallError::ContextMismatch { .. }) => {
            let message = error.to_string();
            assert!(message.contains("pipeline::Actor"), "{message}");
            assert!(message.contains("&str"), "{message}");
        }
        other => panic!("expected ContextMismatch, got {other:?}"),
    }
    assert_eq!(ECHOES.load(Ordering::SeqCst), ran);
}

#[tokio::test]
async fn typed_call_runs_the_same_pipeline() {
    let _serial = SERIAL.lock().await;
    let exec = executor();
    let ok = exec
        .call(
            EchoArgs {
                word: "ab".into(),
                times: Some(3),
            },
            &Actor::allowed(),
        )
        .await;
    assert_eq!(ok.unwrap(), "ababab");

    // The schema's constraints hold for typed arguments too.
    let too_many = exec
        .call(
            EchoArgs {
                word: "ab".into(),
                times: Some(9),
            },
            &Actor::allowed(),
        )
        .await;
    assert!(matches!(too_many, Err(CallError::InvalidArguments { .. })));

    let denied = exec
        .call(
            EchoArgs {
                word: "ab".into(),
                times: None,
            },
            &Actor {
                may_call: false,
                approval: Verdict::Allow,
            },
        )
        .await;
    assert!(matches!(denied, Err(CallError::Denied { .. })));
}

#[tokio::test]
async fn typed_call_of_a_tool_outside_the_catalog_is_unknown() {
    let catalog = Catalog::builder().register::<EchoArgs>().build().unwrap();
    let exec = Executor::new(catalog, Container::default()).unwrap();
    let result = exec.call(ReserveArgs { sku: "A".into() }, &()).await;
    assert!(matches!(result, Err(CallError::UnknownTool { .. })));
}

/// A word whose deserializer panics on "boom": user code that runs while
/// the arguments are read.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Touchy(#[serde(deserialize_with = "panic_on_boom")] String);

/// How many times a `Touchy` was read.
static READS: AtomicUsize = AtomicUsize::new(0);

fn panic_on_boom<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    READS.fetch_add(1, Ordering::SeqCst);
    let word = <String as serde::Deserialize>::deserialize(deserializer)?;
    assert_ne!(word, "boom", "the deserializer met a boom");
    Ok(word)
}

/// Count a word's letters (public: the direct path).
#[tool(key = "words.count", effect = read, authorize = public)]
async fn count_letters(word: Touchy) -> usize {
    word.0.len()
}

/// Count a word's letters (public, with an `.await`: the direct path, its
/// body's future boxed).
#[tool(key = "words.count_later", effect = read, authorize = public)]
async fn count_letters_later(word: Touchy) -> usize {
    std::future::ready(()).await;
    word.0.len()
}

/// Count a word's letters (behind a hook: hooks and body in one future).
#[tool(key = "words.count_checked", effect = read, authorize = may_call)]
async fn count_letters_checked(word: Touchy) -> usize {
    word.0.len()
}

/// Count a word's letters (behind a hook, with an injected value: hooks,
/// scope and body in one future).
#[tool(key = "words.count_injected", effect = read, authorize = may_call)]
async fn count_letters_injected(word: Touchy, _ledger: Inject<dyn Ledger>) -> usize {
    word.0.len()
}

#[tokio::test]
async fn a_panicking_deserializer_is_the_calls_error_and_the_executor_goes_on() {
    let _serial = SERIAL.lock().await;
    let exec = executor();
    let authorized = AUTHORIZED.load(Ordering::SeqCst);
    for tool in [
        "count_letters",
        "count_letters_later",
        "count_letters_checked",
        "count_letters_injected",
    ] {
        match exec
            .invoke(tool, json!({"word": "boom"}), &Actor::allowed())
            .await
        {
            Err(CallError::Panicked { key, message }) => {
                assert!(key.starts_with("words.count"), "{key}");
                assert!(message.contains("the deserializer met a boom"), "{message}");
            }
            other => panic!("{tool}: expected Panicked, got {other:?}"),
        }
        let fine = exec
            .invoke(tool, json!({"word": "fine"}), &Actor::allowed())
            .await;
        assert_eq!(fine.unwrap(), json!(4), "{tool}");
    }
    // The hook ran for the good calls only: nothing after step 2 runs on
    // arguments that could not be read.
    assert_eq!(AUTHORIZED.load(Ordering::SeqCst), authorized + 2);
}

#[tokio::test]
async fn the_arguments_are_read_when_documented() {
    let _serial = SERIAL.lock().await;
    let exec = executor();
    let actor = Actor::allowed();
    // Read when first polled: a future dropped unpolled reads nothing.
    // Whether public, guarded or injecting.
    for tool in [
        "count_letters",
        "count_letters_later",
        "count_letters_checked",
        "count_letters_injected",
    ] {
        let before = READS.load(Ordering::SeqCst);
        drop(exec.invoke(tool, json!({"word": "fine"}), &actor));
        assert_eq!(READS.load(Ordering::SeqCst), before, "{tool}");
        // And read once when polled.
        let counted = exec.invoke(tool, json!({"word": "fine"}), &actor).await;
        assert_eq!(counted.unwrap(), json!(4), "{tool}");
        assert_eq!(READS.load(Ordering::SeqCst), before + 1, "{tool}");
    }
}

static TALLIES: AtomicUsize = AtomicUsize::new(0);

/// Count calls (public, no `.await`: the whole call runs in one poll).
#[tool(key = "demo.tally", effect = read, authorize = public)]
async fn tally(by: usize) -> usize {
    TALLIES.fetch_add(by, Ordering::SeqCst) + by
}

/// Count calls (public, with an `.await`: the body's future is boxed).
#[tool(key = "demo.tally_later", effect = read, authorize = public)]
async fn tally_later(by: usize) -> usize {
    std::future::ready(()).await;
    TALLIES.fetch_add(by, Ordering::SeqCst) + by
}

#[tokio::test]
async fn a_public_call_runs_when_polled_and_once() {
    let _serial = SERIAL.lock().await;
    let exec = executor();
    for tool in ["tally", "tally_later"] {
        let before = TALLIES.load(Ordering::SeqCst);
        // Not awaited: nothing runs.
        drop(exec.invoke(tool, json!({"by": 1000}), &()));
        assert_eq!(TALLIES.load(Ordering::SeqCst), before, "{tool}");
        // Invalid arguments are the future's error, and nothing runs.
        let invalid = exec.invoke(tool, json!({"by": -1}), &()).await;
        assert!(
            matches!(invalid, Err(CallError::InvalidArguments { .. })),
            "{tool}: {invalid:?}"
        );
        assert_eq!(TALLIES.load(Ordering::SeqCst), before, "{tool}");

        let mut call = std::pin::pin!(exec.invoke(tool, json!({"by": 1}), &()));
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let std::task::Poll::Ready(first) = call.as_mut().poll(&mut cx) else {
            panic!("{tool}: a body that waits for nothing finishes in its first poll");
        };
        assert!(first.unwrap().as_u64().unwrap() > before as u64, "{tool}");
        assert_eq!(TALLIES.load(Ordering::SeqCst), before + 1, "{tool}");
        // Polled again, it panics, as a finished future does, and runs nothing.
        let again =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call.as_mut().poll(&mut cx)));
        assert!(
            again.is_err(),
            "{tool}: a finished call polled again panics"
        );
        assert_eq!(TALLIES.load(Ordering::SeqCst), before + 1, "{tool}");
    }
}

/// Count calls behind an `authorize` hook (its hook and body are one
/// future).
#[tool(key = "demo.tally_checked", effect = read, authorize = may_call)]
async fn tally_checked(by: usize) -> usize {
    TALLIES.fetch_add(by, Ordering::SeqCst) + by
}

#[tokio::test]
async fn a_call_with_a_hook_asks_nothing_until_polled_and_runs_once() {
    let _serial = SERIAL.lock().await;
    let exec = executor();
    let actor = Actor::allowed();
    let (before, asked) = (
        TALLIES.load(Ordering::SeqCst),
        AUTHORIZED.load(Ordering::SeqCst),
    );
    // Not awaited: neither the hook nor the body runs.
    drop(exec.invoke("tally_checked", json!({"by": 1000}), &actor));
    // Invalid arguments: the future's error, and neither runs.
    let invalid = exec
        .invoke("tally_checked", json!({"by": -1}), &actor)
        .await;
    assert!(
        matches!(invalid, Err(CallError::InvalidArguments { .. })),
        "{invalid:?}"
    );
    assert_eq!(TALLIES.load(Ordering::SeqCst), before);
    assert_eq!(AUTHORIZED.load(Ordering::SeqCst), asked);

    let mut call = std::pin::pin!(exec.invoke("tally_checked", json!({"by": 1}), &actor));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let std::task::Poll::Ready(first) = call.as_mut().poll(&mut cx) else {
        panic!("a hook and a body that wait for nothing finish in the first poll");
    };
    assert!(first.unwrap().as_u64().unwrap() > before as u64);
    assert_eq!(TALLIES.load(Ordering::SeqCst), before + 1);
    assert_eq!(AUTHORIZED.load(Ordering::SeqCst), asked + 1);
    // Polled again, it panics, as a finished future does, and asks and
    // runs nothing.
    let again =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call.as_mut().poll(&mut cx)));
    assert!(again.is_err(), "a finished call polled again panics");
    assert_eq!(TALLIES.load(Ordering::SeqCst), before + 1);
    assert_eq!(AUTHORIZED.load(Ordering::SeqCst), asked + 1);

    // Refused: the body does not run.
    let refused = Actor {
        may_call: false,
        ..Actor::allowed()
    };
    let denied = exec
        .invoke("tally_checked", json!({"by": 1}), &refused)
        .await;
    assert!(
        matches!(
            &denied,
            Err(CallError::Denied { key }) if key == "demo.tally_checked"
        ),
        "{denied:?}"
    );
    assert_eq!(TALLIES.load(Ordering::SeqCst), before + 1);
}

/// Let everyone in, after a pause longer than the tools' timeout below.
async fn after_a_pause<A>(_: &(), _: &Invocation<'_, A>) -> bool {
    tokio::time::sleep(std::time::Duration::from_millis(80)).await;
    true
}

/// Sleep for `ms`, under a timeout shorter than its hook's pause.
#[tool(key = "demo.nap", effect = read, authorize = after_a_pause, timeout = "20ms")]
async fn nap(ms: u64) -> u64 {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    ms
}

/// The same, with an injected value: hooks, scope and body in one future.
#[tool(key = "demo.nap_on", effect = read, authorize = after_a_pause, timeout = "20ms")]
async fn nap_on(ms: u64, _ledger: Inject<dyn Ledger>) -> u64 {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    ms
}

#[tokio::test]
async fn a_tools_timeout_limits_its_body_not_its_hooks() {
    let exec = executor();
    for tool in ["nap", "nap_on"] {
        // The hook takes longer than the timeout: the call still runs.
        let quick = exec.invoke(tool, json!({"ms": 0}), &()).await;
        assert_eq!(quick.unwrap(), json!(0), "{tool}");
        // The body takes longer: the call times out.
        match exec.invoke(tool, json!({"ms": 10_000}), &()).await {
            Err(CallError::Timeout { key, after }) => {
                assert!(key.starts_with("demo.nap"), "{key}");
                assert_eq!(after, std::time::Duration::from_millis(20), "{tool}");
            }
            other => panic!("{tool}: expected Timeout, got {other:?}"),
        }
    }
}

/// A macro of the application's own, named like `tracing`'s, that waits.
macro_rules! info {
    ($future:expr) => {
        $future.await
    };
}

/// Wait through a macro named like `tracing::info!`.
#[tool(key = "demo.hidden_wait", effect = read, authorize = public)]
async fn hidden_wait() -> u32 {
    info!(tokio::task::yield_now());
    7
}

#[tokio::test]
async fn a_wait_hidden_in_a_macro_is_awaited_like_any_other() {
    let exec = executor();
    assert_eq!(exec.invoke("hidden_wait", json!({}), &()).await.unwrap(), 7);
    assert_eq!(exec.call(HiddenWaitArgs {}, &()).await.unwrap(), 7);
}
