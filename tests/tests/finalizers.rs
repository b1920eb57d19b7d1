//! Finalizers that fail: a failed commit fails the call, on the direct and
//! the typed path, and every finalizer still runs exactly once.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolwright::{
    CallError, Catalog, Container, Executor, Inject,
    scope::{Outcome, ResolveError, Scope},
    tool,
};

/// The connection a transaction runs on: released last.
struct Connection;

/// The call's transaction: its commit fails when the journal says so.
struct Transaction;

/// What a commit does, and every close the finalizers saw.
#[derive(Default)]
struct Journal {
    commit: Mutex<Commit>,
    closes: Mutex<Vec<(&'static str, Outcome)>>,
}

#[derive(Default, Clone, Copy, PartialEq, Debug)]
enum Commit {
    #[default]
    Succeeds,
    Fails,
    Panics,
}

impl Journal {
    fn commit(&self, commit: Commit) {
        *self.commit.lock().unwrap() = commit;
    }

    /// The closes since the last call, oldest first.
    fn take(&self) -> Vec<(&'static str, Outcome)> {
        std::mem::take(&mut *self.closes.lock().unwrap())
    }
}

#[derive(Debug)]
struct CommitRefused;

impl std::fmt::Display for CommitRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the commit was refused: deferred constraint violated")
    }
}

impl std::error::Error for CommitRefused {}

fn container(journal: &Arc<Journal>) -> Container {
    let (for_connection, for_transaction) = (journal.clone(), journal.clone());
    Container::builder()
        .request::<Connection>(move |scope: Scope| {
            let journal = for_connection.clone();
            async move {
                scope.on_close(move |outcome| async move {
                    journal.closes.lock().unwrap().push(("release", outcome));
                });
                Ok::<_, ResolveError>(Connection)
            }
        })
        .request::<Transaction>(move |scope: Scope| {
            let journal = for_transaction.clone();
            async move {
                let _connection = scope.resolve::<Connection>().await?;
                scope.on_close(move |outcome| async move {
                    let commit = *journal.commit.lock().unwrap();
                    journal.closes.lock().unwrap().push(("commit", outcome));
                    match commit {
                        Commit::Succeeds => Ok(()),
                        Commit::Fails if outcome.is_ok() => Err(CommitRefused),
                        Commit::Fails => Ok(()),
                        Commit::Panics => panic!("the driver broke while committing"),
                    }
                });
                Ok::<_, ResolveError>(Transaction)
            }
        })
        .build()
}

/// Record a payment.
#[tool(key = "payments.record", effect = read, authorize = public)]
async fn record_payment(cents: u64, _tx: Inject<Transaction>) -> Result<u64, std::io::Error> {
    if cents == 0 {
        return Err(std::io::Error::other("nothing to record"));
    }
    Ok(cents)
}

fn executor(journal: &Arc<Journal>) -> Executor {
    let catalog = Catalog::builder()
        .register::<RecordPaymentArgs>()
        .build()
        .unwrap();
    Executor::new(catalog, container(journal)).unwrap()
}

fn transaction() -> Option<&'static str> {
    Some(std::any::type_name::<Transaction>())
}

#[tokio::test]
async fn a_failed_commit_fails_the_call_and_every_finalizer_runs_once() {
    let journal = Arc::new(Journal::default());
    let exec = executor(&journal);
    journal.commit(Commit::Fails);

    let direct = exec
        .invoke("record_payment", json!({"cents": 250}), &())
        .await;
    assert_commit_failed(direct.map(|_| ()), &journal);
    let typed = exec.call(RecordPaymentArgs { cents: 250 }, &()).await;
    assert_commit_failed(typed.map(|_| ()), &journal);
}

/// The call failed with the commit's error, and each finalizer ran once:
/// the commit saw a call that succeeded; the connection, released after
/// it, a call that failed.
fn assert_commit_failed(result: Result<(), CallError>, journal: &Journal) {
    match result {
        Err(CallError::Finalizer {
            key,
            finalizer,
            source,
        }) => {
            assert_eq!(key, "payments.record");
            assert_eq!(finalizer, transaction());
            assert!(source.downcast_ref::<CommitRefused>().is_some(), "{source}");
        }
        other => panic!("expected the commit's failure, got {other:?}"),
    }
    assert_eq!(
        journal.take(),
        [("commit", Outcome::Ok), ("release", Outcome::Error)]
    );
}

#[tokio::test]
async fn the_error_names_the_finalizer_and_a_model_is_told_it_failed() {
    let journal = Arc::new(Journal::default());
    let exec = executor(&journal);
    journal.commit(Commit::Fails);
    let error = exec
        .invoke("record_payment", json!({"cents": 250}), &())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "tool `payments.record` ran, but closing its scope failed: the finalizer of `{}` failed",
            transaction().unwrap()
        )
    );
    assert_eq!(error.model_message(), "The tool failed.");
    assert_eq!(error.key(), Some("payments.record"));
}

#[tokio::test]
async fn a_panicking_commit_fails_the_call_too() {
    let journal = Arc::new(Journal::default());
    let exec = executor(&journal);
    journal.commit(Commit::Panics);
    match exec
        .invoke("record_payment", json!({"cents": 250}), &())
        .await
    {
        Err(CallError::Finalizer {
            finalizer, source, ..
        }) => {
            assert_eq!(finalizer, transaction());
            assert!(
                source
                    .to_string()
                    .contains("the driver broke while committing")
            );
        }
        other => panic!("expected the commit's failure, got {other:?}"),
    }
    assert_eq!(
        journal.take(),
        [("commit", Outcome::Ok), ("release", Outcome::Error)]
    );
}

#[tokio::test]
async fn a_failed_call_keeps_its_own_error_when_a_finalizer_fails_after_it() {
    let journal = Arc::new(Journal::default());
    let exec = executor(&journal);
    journal.commit(Commit::Panics);
    let result = exec
        .invoke("record_payment", json!({"cents": 0}), &())
        .await;
    assert!(
        matches!(
            &result,
            Err(CallError::Tool { key, .. }) if key == "payments.record"
        ),
        "{result:?}"
    );
    assert_eq!(
        journal.take(),
        [("commit", Outcome::Error), ("release", Outcome::Error)]
    );
}

#[tokio::test]
async fn a_commit_that_succeeds_leaves_the_call_as_it_was() {
    let journal = Arc::new(Journal::default());
    let exec = executor(&journal);
    let paid = exec
        .invoke("record_payment", json!({"cents": 250}), &())
        .await;
    assert_eq!(paid.unwrap(), json!(250));
    assert_eq!(
        journal.take(),
        [("commit", Outcome::Ok), ("release", Outcome::Ok)]
    );
}

/// Wait for a payment that never comes.
#[tool(key = "payments.wait", effect = read, authorize = public)]
async fn wait_for_payment(_tx: Inject<Transaction>) -> u64 {
    std::future::pending::<()>().await;
    0
}

#[test]
fn a_call_dropped_outside_any_runtime_runs_its_finalizers_on_that_thread() {
    let journal = Arc::new(Journal::default());
    let catalog = Catalog::builder()
        .register::<WaitForPaymentArgs>()
        .build()
        .unwrap();
    let exec = Executor::new(catalog, container(&journal)).unwrap();
    // Driven by hand, with no tokio runtime anywhere.
    let mut call = Box::pin(exec.invoke("wait_for_payment", json!({}), &()));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(call.as_mut().poll(&mut cx).is_pending());
    assert!(journal.take().is_empty());
    drop(call);
    assert_eq!(
        journal.take(),
        [
            ("commit", Outcome::Cancelled),
            ("release", Outcome::Cancelled)
        ]
    );
}

/// A connection the body locks while it works, and the finalizer locks to
/// roll back, as the shop's transaction does.
struct Locked(tokio::sync::Mutex<()>);

/// Lock the connection, then wait past the tool's timeout.
#[tool(key = "payments.stuck", effect = read, authorize = public, timeout = "50ms")]
async fn stuck_payment(conn: Inject<Locked>) -> u64 {
    let _held = conn.0.lock().await;
    std::future::pending::<()>().await;
    0
}

#[tokio::test]
async fn a_timed_out_body_is_dropped_before_the_finalizers_run() {
    let rolled_back = Arc::new(Mutex::new(None));
    let seen = rolled_back.clone();
    let container = Container::builder()
        .request::<Locked>(move |scope: Scope| {
            let seen = seen.clone();
            async move {
                let conn = Arc::new(Locked(tokio::sync::Mutex::new(())));
                let closing = conn.clone();
                scope.on_close(move |outcome| async move {
                    // Waits forever if the timed-out body still holds the lock.
                    let _lock = closing.0.lock().await;
                    *seen.lock().unwrap() = Some(outcome);
                });
                Ok::<_, ResolveError>(conn)
            }
        })
        .build();
    let catalog = Catalog::builder()
        .register::<StuckPaymentArgs>()
        .build()
        .unwrap();
    let exec = Executor::new(catalog, container).unwrap();
    // A generous bound: a hang, not a speed, is what fails here.
    let call = exec.invoke("stuck_payment", json!({}), &());
    let result = tokio::time::timeout(std::time::Duration::from_secs(20), call)
        .await
        .expect("the call hung: its finalizer waited for a lock the timed-out body still held");
    assert!(
        matches!(result, Err(CallError::Timeout { .. })),
        "{result:?}"
    );
    assert_eq!(*rolled_back.lock().unwrap(), Some(Outcome::Cancelled));
}
