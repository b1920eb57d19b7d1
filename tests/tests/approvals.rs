//! Approvals through the executor with the library's ledger: bound to the
//! requester, four eyes, single use, expiry, rejection, settlement,
//! preflight, and a ledger that fails closed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use toolwright::approval::{
    Approval, ApprovalId, ApprovalLedger, LedgerError, MemoryLedger, NewApproval, Review,
    Settlement, Status,
};
use toolwright::{
    CallError, Catalog, Container, Effect, Executor, Inject, Invocation, Principal,
    approval::{Approvals, Digest},
    executor::{BoxFuture, Preflight, Verdict},
    registry::{Arguments, DynamicTool, Registry},
    tool,
};

struct Caller(&'static str);

impl Principal for Caller {
    fn id(&self) -> &str {
        self.0
    }
}

const ALICE: Caller = Caller("alice");
const BOB: Caller = Caller("bob");
const MALLORY: Caller = Caller("mallory");

/// Runs counted by the tools below.
#[derive(Default)]
struct Runs(AtomicUsize);

impl Runs {
    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Pay a supplier; `mode` says how the body ends.
#[tool(key = "payments.pay", effect = destructive, authorize = public,
       approve = Caller::approval_ledger)]
async fn pay(
    supplier: String,
    cents: u64,
    mode: Option<String>,
    runs: Inject<Runs>,
) -> Result<u64, String> {
    runs.0.fetch_add(1, Ordering::SeqCst);
    match mode.as_deref() {
        Some("fail") => Err(format!("the bank refused to pay {supplier}")),
        Some("panic") => panic!("the payment client crashed"),
        Some("hang") => std::future::pending().await,
        _ => Ok(cents),
    }
}

struct Setup {
    executor: Executor,
    approvals: Approvals,
    runs: Arc<Runs>,
}

fn setup(approvals: Approvals) -> Setup {
    let runs = Arc::new(Runs::default());
    let catalog = Catalog::builder().register::<PayArgs>().build().unwrap();
    let container = Container::builder().app::<Runs>(runs.clone()).build();
    let executor = Executor::builder(catalog, container)
        .approvals(approvals.clone())
        .default_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    Setup {
        executor,
        approvals,
        runs,
    }
}

fn memory() -> Setup {
    setup(Approvals::new(MemoryLedger::new()))
}

fn payment(mode: Option<&str>) -> Value {
    match mode {
        Some(mode) => json!({"supplier": "ACME", "cents": 1200, "mode": mode}),
        None => json!({"supplier": "ACME", "cents": 1200}),
    }
}

/// Calls `pay` as `caller`, expecting it to wait for approval: the id.
async fn ask(setup: &Setup, args: Value, caller: &Caller) -> ApprovalId {
    match setup.executor.invoke("pay", args, caller).await {
        Err(CallError::ApprovalRequired(request)) => {
            assert_eq!(request.requested_by.as_deref(), Some(caller.0));
            // The model is told the id a person decides by.
            let id = request.id.expect("a ledger request has an id");
            let told = CallError::ApprovalRequired(request.clone()).model_message();
            assert!(told.contains(&format!("(request {id})")), "{told}");
            request.id.expect("a ledger request has an id")
        }
        other => panic!("expected the call to wait for approval, got {other:?}"),
    }
}

#[tokio::test]
async fn an_approval_runs_one_call_of_the_requester_and_no_one_else() {
    let setup = memory();
    let id = ask(&setup, payment(None), &ALICE).await;
    setup
        .approvals
        .approve(id, &BOB, "invoice checked")
        .await
        .unwrap();

    // Mallory sends the identical call: it waits for an approval of its own.
    let theirs = ask(&setup, payment(None), &MALLORY).await;
    assert_ne!(theirs, id);
    assert_eq!(setup.runs.count(), 0);

    // Alice's call runs, once; her next identical call asks again.
    let paid = setup.executor.invoke("pay", payment(None), &ALICE).await;
    assert_eq!(paid.unwrap(), json!(1200));
    let again = ask(&setup, payment(None), &ALICE).await;
    assert_ne!(again, id);
    assert_eq!(setup.runs.count(), 1);

    let approval = setup.approvals.get(id).await.unwrap();
    assert_eq!(approval.status, Status::Settled);
    assert_eq!(approval.settlement, Some(Settlement::Succeeded));
    assert_eq!(approval.decided_by.as_deref(), Some("bob"));
    assert_eq!(approval.reason.as_deref(), Some("invoice checked"));
}

#[tokio::test]
async fn the_request_is_recorded_once_per_requester_and_call() {
    let setup = memory();
    let first = ask(&setup, payment(None), &ALICE).await;
    let second = ask(&setup, payment(None), &ALICE).await;
    assert_eq!(first, second);
    let pending = setup.approvals.pending().await.unwrap();
    assert_eq!(pending.len(), 1);
    let request = &pending[0].request;
    assert_eq!(request.key, "payments.pay");
    assert_eq!(request.name, "pay");
    // The canonical arguments: what the body will receive, `None` included.
    let canonical = json!({"supplier": "ACME", "cents": 1200, "mode": null});
    assert_eq!(request.arguments, canonical);
    assert_eq!(request.digest, Digest::of("payments.pay", &canonical));
}

#[tokio::test]
async fn past_the_default_cap_a_requester_is_told_how_many_wait_and_nothing_is_recorded() {
    let setup = memory();
    let cents = |n: u64| json!({"supplier": "ACME", "cents": n});
    let mut asked = Vec::new();
    for n in 1..=100 {
        asked.push(ask(&setup, cents(n), &ALICE).await);
    }
    let refused = setup.executor.invoke("pay", cents(101), &ALICE).await;
    let Err(error) = refused else {
        panic!("{refused:?}")
    };
    let CallError::TooManyPending {
        key,
        requested_by,
        pending,
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(
        (key.as_str(), requested_by.as_str(), *pending),
        ("payments.pay", "alice", 100)
    );
    assert_eq!(
        error.model_message(),
        "You already have 100 requests waiting for a person's approval, the most allowed, \
         so this call was not recorded. Tell the user; do not retry until some are decided."
    );
    let preflight = setup.executor.preflight("pay", cents(102), &ALICE).await;
    assert!(
        matches!(preflight, Err(CallError::TooManyPending { .. })),
        "{preflight:?}"
    );
    assert_eq!(setup.approvals.pending().await.unwrap().len(), 100);
    assert_eq!(setup.runs.count(), 0);

    // Asking again for a call that waits is not one more; anyone else asks.
    assert_eq!(ask(&setup, cents(1), &ALICE).await, asked[0]);
    ask(&setup, cents(101), &BOB).await;
    // One decided makes room for one more.
    setup.approvals.reject(asked[5], &BOB, "no").await.unwrap();
    ask(&setup, cents(101), &ALICE).await;
    let again = setup.executor.invoke("pay", cents(102), &ALICE).await;
    assert!(
        matches!(again, Err(CallError::TooManyPending { pending: 100, .. })),
        "{again:?}"
    );
}

#[tokio::test]
async fn a_requester_cannot_approve_their_own_call_under_four_eyes() {
    let setup = memory();
    let id = ask(&setup, payment(None), &ALICE).await;
    let own = setup.approvals.approve(id, &ALICE, "").await.unwrap_err();
    assert!(matches!(own, LedgerError::OwnRequest { ref by, .. } if by == "alice"));
    let own = setup.approvals.reject(id, &ALICE, "").await.unwrap_err();
    assert!(matches!(own, LedgerError::OwnRequest { .. }));
    assert_eq!(
        setup.approvals.get(id).await.unwrap().status,
        Status::Pending
    );
    let still = setup.executor.invoke("pay", payment(None), &ALICE).await;
    assert!(matches!(still, Err(CallError::ApprovalRequired(_))));
    assert_eq!(setup.runs.count(), 0);
}

#[tokio::test]
async fn self_approval_works_only_when_allowed() {
    let setup = setup(
        Approvals::builder(MemoryLedger::new())
            .allow_self_approval()
            .build(),
    );
    let id = ask(&setup, payment(None), &ALICE).await;
    setup.approvals.approve(id, &ALICE, "my own").await.unwrap();
    assert!(
        setup
            .executor
            .invoke("pay", payment(None), &ALICE)
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn decisions_on_decided_unknown_or_expired_requests_are_typed_errors() {
    let setup = memory();
    let id = ask(&setup, payment(None), &ALICE).await;
    setup.approvals.reject(id, &BOB, "no").await.unwrap();
    let again = setup.approvals.approve(id, &BOB, "").await.unwrap_err();
    assert!(matches!(
        again,
        LedgerError::NotPending {
            status: Status::Rejected,
            ..
        }
    ));
    let unknown = setup
        .approvals
        .approve(ApprovalId(404), &BOB, "")
        .await
        .unwrap_err();
    assert!(matches!(unknown, LedgerError::Unknown(ApprovalId(404))));

    let lapsing = setup_with_ttl(Duration::from_millis(30));
    let id = ask(&lapsing, payment(None), &ALICE).await;
    tokio::time::sleep(Duration::from_millis(60)).await;
    let late = lapsing.approvals.approve(id, &BOB, "").await.unwrap_err();
    assert!(matches!(late, LedgerError::Expired(_)));
    assert!(lapsing.approvals.pending().await.unwrap().is_empty());
}

fn setup_with_ttl(ttl: Duration) -> Setup {
    setup(Approvals::builder(MemoryLedger::new()).ttl(ttl).build())
}

#[tokio::test]
async fn an_approval_that_expired_before_the_call_is_not_consumed() {
    let setup = setup_with_ttl(Duration::from_millis(100));
    let id = ask(&setup, payment(None), &ALICE).await;
    setup.approvals.approve(id, &BOB, "").await.unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let fresh = ask(&setup, payment(None), &ALICE).await;
    assert_ne!(fresh, id);
    assert_eq!(setup.runs.count(), 0);
    assert_eq!(
        setup.approvals.get(id).await.unwrap().status,
        Status::Approved
    );
}

#[tokio::test]
async fn a_rejected_call_is_refused_and_never_runs() {
    let setup = memory();
    let id = ask(&setup, payment(None), &ALICE).await;
    setup
        .approvals
        .reject(id, &BOB, "wrong supplier")
        .await
        .unwrap();
    for _ in 0..2 {
        let refused = setup.executor.invoke("pay", payment(None), &ALICE).await;
        assert!(matches!(
            &refused,
            Err(CallError::NotApproved { key }) if key == "payments.pay"
        ));
    }
    assert_eq!(setup.runs.count(), 0);
    // Other arguments are another call, with a request of their own.
    let other = json!({"supplier": "ACME", "cents": 99});
    assert_ne!(ask(&setup, other, &ALICE).await, id);
}

/// Asks, approves, runs: the settled approval.
async fn approved_run(setup: &Setup, mode: &str) -> (Result<Value, CallError>, Approval) {
    let id = ask(setup, payment(Some(mode)), &ALICE).await;
    setup.approvals.approve(id, &BOB, "").await.unwrap();
    let result = setup
        .executor
        .invoke("pay", payment(Some(mode)), &ALICE)
        .await;
    (result, setup.approvals.get(id).await.unwrap())
}

#[tokio::test]
async fn a_failed_call_settles_as_failed() {
    let setup = memory();
    let (result, approval) = approved_run(&setup, "fail").await;
    assert!(matches!(result, Err(CallError::Tool { .. })));
    assert_eq!(approval.status, Status::Settled);
    assert_eq!(approval.settlement, Some(Settlement::Failed));
    assert!(approval.settled_at.is_some());
}

#[tokio::test]
async fn a_call_that_panicked_or_timed_out_settles_as_unknown() {
    let setup = memory();
    let (result, approval) = approved_run(&setup, "panic").await;
    assert!(matches!(result, Err(CallError::Panicked { .. })));
    assert_eq!(approval.settlement, Some(Settlement::Unknown));
    let (result, approval) = approved_run(&setup, "hang").await;
    assert!(matches!(result, Err(CallError::Timeout { .. })));
    assert_eq!(approval.settlement, Some(Settlement::Unknown));
    assert_eq!(setup.runs.count(), 2);
}

#[tokio::test]
async fn a_call_dropped_mid_way_stays_unsettled_and_never_reruns() {
    let setup = memory();
    let id = ask(&setup, payment(Some("hang")), &ALICE).await;
    setup.approvals.approve(id, &BOB, "").await.unwrap();
    // The caller gives up (a killed process looks the same to the ledger).
    let call = setup.executor.invoke("pay", payment(Some("hang")), &ALICE);
    let gave_up = tokio::time::timeout(Duration::from_millis(50), call).await;
    assert!(gave_up.is_err());

    let unsettled = setup.approvals.unsettled().await.unwrap();
    assert_eq!(unsettled.len(), 1);
    assert_eq!(unsettled[0].id, id);
    assert!(unsettled[0].consumed_at.is_some());
    // The same call asks again rather than using the approval twice.
    assert_ne!(ask(&setup, payment(Some("hang")), &ALICE).await, id);
    assert_eq!(setup.runs.count(), 1);

    // A person finds out and records it.
    let reconciled = setup
        .approvals
        .settle(id, Settlement::Failed)
        .await
        .unwrap();
    assert_eq!(reconciled.status, Status::Settled);
    assert!(setup.approvals.unsettled().await.unwrap().is_empty());
    let twice = setup
        .approvals
        .settle(id, Settlement::Failed)
        .await
        .unwrap_err();
    assert!(matches!(twice, LedgerError::NotConsumed { .. }));
}

#[tokio::test]
async fn preflight_neither_runs_nor_consumes() {
    let setup = memory();
    let asked = setup
        .executor
        .preflight("pay", payment(None), &ALICE)
        .await
        .unwrap();
    let Preflight::NeedsApproval(request) = asked else {
        panic!("expected a request, got {asked:?}");
    };
    let id = request.id.unwrap();
    // The preflight recorded the request a person can decide now.
    assert_eq!(setup.approvals.pending().await.unwrap()[0].id, id);
    setup.approvals.approve(id, &BOB, "").await.unwrap();

    for _ in 0..2 {
        let asked = setup
            .executor
            .preflight("pay", payment(None), &ALICE)
            .await
            .unwrap();
        assert!(matches!(asked, Preflight::WouldRun));
    }
    assert_eq!(setup.runs.count(), 0);
    assert_eq!(
        setup.approvals.get(id).await.unwrap().status,
        Status::Approved
    );
    // Mallory's preflight of the same call needs an approval of their own.
    let theirs = setup
        .executor
        .preflight("pay", payment(None), &MALLORY)
        .await
        .unwrap();
    assert!(matches!(theirs, Preflight::NeedsApproval(_)));

    assert!(
        setup
            .executor
            .invoke("pay", payment(None), &ALICE)
            .await
            .is_ok()
    );
    assert_eq!(setup.runs.count(), 1);
}

#[tokio::test]
async fn preflight_reports_rejections_and_bad_input() {
    let setup = memory();
    let id = ask(&setup, payment(None), &ALICE).await;
    setup.approvals.reject(id, &BOB, "").await.unwrap();
    let asked = setup
        .executor
        .preflight("pay", payment(None), &ALICE)
        .await
        .unwrap();
    assert!(matches!(
        asked,
        Preflight::Denied(CallError::NotApproved { .. })
    ));

    let invalid = setup
        .executor
        .preflight("pay", json!({"cents": "lots"}), &ALICE)
        .await;
    assert!(matches!(invalid, Err(CallError::InvalidArguments { .. })));
    let unknown = setup.executor.preflight("refund", json!({}), &ALICE).await;
    assert!(matches!(unknown, Err(CallError::UnknownTool { .. })));
}

#[tokio::test]
async fn without_a_ledger_the_hook_refuses_and_nothing_runs() {
    let runs = Arc::new(Runs::default());
    let catalog = Catalog::builder().register::<PayArgs>().build().unwrap();
    let container = Container::builder().app::<Runs>(runs.clone()).build();
    let executor = Executor::new(catalog, container).unwrap();
    let error = executor
        .invoke("pay", payment(None), &ALICE)
        .await
        .unwrap_err();
    let CallError::Hook { source, .. } = &error else {
        panic!("expected a hook error, got {error:?}");
    };
    assert!(matches!(
        source.downcast_ref::<LedgerError>(),
        Some(LedgerError::NoLedger)
    ));
    assert_eq!(runs.count(), 0);
}

/// A ledger whose store is down: every operation fails.
struct Down;

impl Down {
    fn error<'a, T: Send + 'a>() -> BoxFuture<'a, Result<T, LedgerError>> {
        Box::pin(async {
            Err(LedgerError::unavailable(std::io::Error::other(
                "connection refused",
            )))
        })
    }
}

impl ApprovalLedger for Down {
    fn record(&self, _: NewApproval) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        Down::error()
    }
    fn get(&self, _: ApprovalId) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        Down::error()
    }
    fn latest<'a>(
        &'a self,
        _: &'a Digest,
        _: &'a str,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>> {
        Down::error()
    }
    fn list(&self, _: Status, _: SystemTime) -> BoxFuture<'_, Result<Vec<Approval>, LedgerError>> {
        Down::error()
    }
    fn decide(&self, _: ApprovalId, _: Review) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        Down::error()
    }
    fn consume<'a>(
        &'a self,
        _: &'a Digest,
        _: &'a str,
        _: SystemTime,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>> {
        Down::error()
    }
    fn settle(
        &self,
        _: ApprovalId,
        _: Settlement,
        _: SystemTime,
    ) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        Down::error()
    }
}

#[tokio::test]
async fn an_unreachable_ledger_fails_the_call_closed() {
    let setup = setup(Approvals::new(Down));
    let error = setup
        .executor
        .invoke("pay", payment(None), &ALICE)
        .await
        .unwrap_err();
    let CallError::Hook { source, .. } = &error else {
        panic!("expected a hook error, got {error:?}");
    };
    let ledger = source.downcast_ref::<LedgerError>().unwrap();
    assert!(matches!(ledger, LedgerError::Unavailable(_)));
    assert_eq!(ledger.to_string(), "the approval ledger is unavailable");
    assert_eq!(setup.runs.count(), 0);
    let asked = setup.executor.preflight("pay", payment(None), &ALICE).await;
    assert!(matches!(asked, Err(CallError::Hook { .. })));
}

fn ledger_hook<'a>(
    caller: &'a Caller,
    call: &'a Invocation<'a, Arguments>,
) -> BoxFuture<'a, Result<Verdict, LedgerError>> {
    Box::pin(caller.approval_ledger(call))
}

#[tokio::test]
async fn a_tool_built_at_run_time_uses_the_same_ledger_under_its_served_key() {
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    let transfer = DynamicTool::builder("bank.transfer", "transfer")
        .description("Move money.")
        .effect(Effect::Write)
        .input_schema(json!({
            "type": "object",
            "properties": {"cents": {"type": "integer"}},
            "required": ["cents"],
        }))
        .approve(ledger_hook)
        .handler(move |call| {
            counter.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move { Ok(call.into_arguments()) })
        })
        .build()
        .unwrap();
    let bank = Registry::new(Catalog::builder().build().unwrap());
    bank.register(transfer).unwrap();
    let registry = Registry::new(Catalog::builder().build().unwrap());
    registry.mount("eu", bank).unwrap();
    let approvals = Approvals::new(MemoryLedger::new());
    let executor = Executor::builder(registry, Container::default())
        .approvals(approvals.clone())
        .build()
        .unwrap();

    let args = json!({"cents": 5});
    let asked = executor.invoke("eu_transfer", args.clone(), &ALICE).await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("expected a request, got {asked:?}");
    };
    // Bound to the key the tool is served under.
    assert_eq!(request.key, "eu.bank.transfer");
    assert_eq!(request.digest, Digest::of("eu.bank.transfer", &args));
    approvals
        .approve(request.id.unwrap(), &BOB, "")
        .await
        .unwrap();
    assert_eq!(
        executor
            .invoke("eu_transfer", args.clone(), &ALICE)
            .await
            .unwrap(),
        args
    );
    assert!(matches!(
        executor.invoke("eu_transfer", args, &ALICE).await,
        Err(CallError::ApprovalRequired(_))
    ));
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn concurrent_identical_approved_calls_run_once() {
    let setup = Arc::new(memory());
    let id = ask(&setup, payment(None), &ALICE).await;
    setup.approvals.approve(id, &BOB, "").await.unwrap();
    let calls: Vec<_> = (0..50)
        .map(|_| {
            let setup = setup.clone();
            tokio::spawn(async move {
                setup
                    .executor
                    .invoke("pay", payment(None), &ALICE)
                    .await
                    .is_ok()
            })
        })
        .collect();
    let mut ran = 0;
    for call in calls {
        ran += usize::from(call.await.unwrap());
    }
    assert_eq!(ran, 1);
    assert_eq!(setup.runs.count(), 1);
}

/// Show the balance of an account.
#[tool(key = "accounts.balance", effect = read, authorize = public)]
async fn balance(account: u64, runs: Inject<Runs>) -> u64 {
    runs.0.fetch_add(1, Ordering::SeqCst);
    account * 100
}

#[tokio::test]
async fn a_policy_ask_on_a_read_tool_goes_through_the_ledger_for_the_identified_caller() {
    let runs = Arc::new(Runs::default());
    let catalog = Catalog::builder()
        .register::<BalanceArgs>()
        .build()
        .unwrap();
    let container = Container::builder().app::<Runs>(runs.clone()).build();
    let approvals = Approvals::new(MemoryLedger::new());
    let executor = Executor::builder(catalog, container)
        .approvals(approvals.clone())
        .principal::<Caller>()
        .build()
        .unwrap();
    executor
        .registry()
        .set_policy(
            toolwright::registry::Policy::new().rule(toolwright::registry::Rule::ask(
                "balances are private",
                toolwright::registry::Selector::name("balance"),
            )),
        );
    let args = json!({"account": 7});

    let asked = executor
        .preflight("balance", args.clone(), &ALICE)
        .await
        .unwrap();
    let Preflight::NeedsApproval(request) = asked else {
        panic!("expected a request, got {asked:?}");
    };
    let id = request.id.unwrap();
    let own = approvals.approve(id, &ALICE, "").await.unwrap_err();
    assert!(matches!(own, LedgerError::OwnRequest { .. }));
    approvals.approve(id, &BOB, "").await.unwrap();
    // Mallory's identical read is not covered by Alice's approval.
    let theirs = executor.invoke("balance", args.clone(), &MALLORY).await;
    assert!(matches!(theirs, Err(CallError::ApprovalRequired(_))));
    assert_eq!(
        executor
            .invoke("balance", args.clone(), &ALICE)
            .await
            .unwrap(),
        json!(700)
    );
    assert_eq!(
        approvals.get(id).await.unwrap().settlement,
        Some(Settlement::Succeeded)
    );
    assert!(matches!(
        executor.invoke("balance", args, &ALICE).await,
        Err(CallError::ApprovalRequired(_))
    ));
    assert_eq!(runs.count(), 1);
}

/// A ledger whose approvals are always being consumed by another call:
/// `consume` finds none, while the row still reads `approved` (as a
/// PostgreSQL row locked by a concurrent consumer does until it commits).
struct TakenElsewhere(MemoryLedger);

impl ApprovalLedger for TakenElsewhere {
    fn record(&self, new: NewApproval) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        self.0.record(new)
    }
    fn get(&self, id: ApprovalId) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        self.0.get(id)
    }
    fn latest<'a>(
        &'a self,
        digest: &'a Digest,
        requested_by: &'a str,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>> {
        self.0.latest(digest, requested_by)
    }
    fn list(
        &self,
        status: Status,
        now: SystemTime,
    ) -> BoxFuture<'_, Result<Vec<Approval>, LedgerError>> {
        self.0.list(status, now)
    }
    fn decide(
        &self,
        id: ApprovalId,
        review: Review,
    ) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        self.0.decide(id, review)
    }
    fn consume<'a>(
        &'a self,
        _: &'a Digest,
        _: &'a str,
        _: SystemTime,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>> {
        Box::pin(async { Ok(None) })
    }
    fn settle(
        &self,
        id: ApprovalId,
        settlement: Settlement,
        at: SystemTime,
    ) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        self.0.settle(id, settlement, at)
    }
}

#[tokio::test]
async fn a_call_that_cannot_consume_an_approval_does_not_run_on_it() {
    let setup = setup(Approvals::new(TakenElsewhere(MemoryLedger::new())));
    let id = ask(&setup, payment(None), &ALICE).await;
    setup.approvals.approve(id, &BOB, "ok").await.unwrap();
    // A preflight, which only looks, says the call would run.
    let preflight = setup.executor.preflight("pay", payment(None), &ALICE).await;
    assert!(
        matches!(preflight, Ok(Preflight::WouldRun)),
        "{preflight:?}"
    );
    // The approval reads `approved`, but this call did not get it: it waits.
    let call = setup.executor.invoke("pay", payment(None), &ALICE).await;
    assert!(
        matches!(call, Err(CallError::ApprovalRequired(_))),
        "{call:?}"
    );
    assert_eq!(setup.runs.count(), 0);
}
