//! The mix of calls the soak sends, and how each kind is made and judged.

use std::fmt::Debug;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use serde_json::json;
use toolwright::{CallError, Executor, scope::Outcome};

use crate::tools::{Caller, DELIBERATE_PANIC, Refused};

tokio::task_local! {
    /// The kind of call the current task is making. The request provider
    /// reads it while the call builds its dependency, so every build, and
    /// the finalizer it registers, is attributed to the kind of call that
    /// caused it.
    pub(crate) static CALL_KIND: Kind;
}

/// How long a caller waits before it abandons a call ([`Kind::Abandoned`]).
const CALLER_PATIENCE: Duration = Duration::from_millis(1);

/// One kind of call, by the way it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The tool returns a value.
    Ok,
    /// The tool returns an error.
    ToolError,
    /// The tool panics.
    Panic,
    /// The tool outlives its `timeout = "1ms"`; the executor cancels it.
    Timeout,
    /// The arguments break the schema; nothing runs.
    InvalidArguments,
    /// The caller is not allowed; nothing runs.
    Denied,
    /// The caller polls the call once, then drops it mid-flight.
    Dropped,
    /// The body has returned and the caller drops the call while the
    /// finalizer is running (it yields once), after one poll.
    DroppedWhileClosing,
    /// The caller wraps the call in a 1 ms `tokio::time::timeout` and gives up.
    Abandoned,
    /// A tool with nothing to inject (the executor's direct path) returns
    /// a value.
    DirectOk,
    /// A tool with nothing to inject panics.
    DirectPanic,
    /// A tool with nothing to inject outlives its `timeout = "1ms"`.
    DirectTimeout,
    /// A call of a tool with nothing to inject is polled once, then dropped.
    DirectDropped,
}

/// Whether calls of a kind build the request dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builds {
    /// Every call runs its body, so builds it exactly once.
    EveryCall,
    /// A call may be cancelled before it gets as far as building it (when
    /// tokio's cooperative budget makes its first poll yield early and the
    /// 1 ms deadline passes before the next one), so at most once.
    AtMostEveryCall,
    /// No call runs its body.
    Never,
}

impl Kind {
    /// Every kind, in the order of the summary table.
    pub(crate) const ALL: [Kind; 13] = [
        Kind::Ok,
        Kind::ToolError,
        Kind::Panic,
        Kind::Timeout,
        Kind::InvalidArguments,
        Kind::Denied,
        Kind::Dropped,
        Kind::DroppedWhileClosing,
        Kind::Abandoned,
        Kind::DirectOk,
        Kind::DirectPanic,
        Kind::DirectTimeout,
        Kind::DirectDropped,
    ];

    /// How many kinds there are.
    pub(crate) const COUNT: usize = Kind::ALL.len();

    /// Calls of this kind per thousand. The three cancelled kinds each hold
    /// a caller for a millisecond or two, so they stay a small share.
    const fn per_mille(self) -> u64 {
        match self {
            Kind::Ok => 530,
            Kind::ToolError => 100,
            Kind::Panic => 50,
            Kind::Timeout => 20,
            Kind::InvalidArguments => 50,
            Kind::Denied => 50,
            Kind::Dropped => 20,
            Kind::DroppedWhileClosing => 20,
            Kind::Abandoned => 10,
            Kind::DirectOk => 120,
            Kind::DirectPanic => 10,
            Kind::DirectTimeout => 10,
            Kind::DirectDropped => 10,
        }
    }

    /// The kind of the `call`-th call: a fixed pseudo-random interleaving,
    /// the same on every run.
    pub(crate) fn of_call(call: u64) -> Kind {
        let mut slot = splitmix64(call) % 1000;
        for kind in Kind::ALL {
            if slot < kind.per_mille() {
                return kind;
            }
            slot -= kind.per_mille();
        }
        unreachable!("the shares sum to 1000")
    }

    /// The kind's position in [`Kind::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The kind's name in the summary.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Kind::Ok => "ok",
            Kind::ToolError => "tool error",
            Kind::Panic => "panic",
            Kind::Timeout => "timeout (1 ms)",
            Kind::InvalidArguments => "invalid arguments",
            Kind::Denied => "denied",
            Kind::Dropped => "dropped after 1 poll",
            Kind::DroppedWhileClosing => "dropped while closing",
            Kind::Abandoned => "abandoned (1 ms)",
            Kind::DirectOk => "direct: ok",
            Kind::DirectPanic => "direct: panic",
            Kind::DirectTimeout => "direct: timeout (1 ms)",
            Kind::DirectDropped => "direct: dropped",
        }
    }

    /// The tool this kind's calls invoke. A direct kind's tool is the twin
    /// of its kind's that injects nothing.
    fn tool(self) -> &'static str {
        match self {
            Kind::Ok | Kind::InvalidArguments | Kind::Denied | Kind::DroppedWhileClosing => "echo",
            Kind::ToolError => "fail",
            Kind::Panic => "explode",
            Kind::Timeout => "stall",
            Kind::Dropped | Kind::Abandoned => "linger",
            Kind::DirectOk => "next",
            Kind::DirectPanic => "explode_direct",
            Kind::DirectTimeout => "stall_direct",
            Kind::DirectDropped => "linger_direct",
        }
    }

    /// The outcome the finalizers of this kind's calls must receive.
    pub(crate) fn outcome(self) -> Option<Outcome> {
        match self {
            // The body returned before the caller left: the call's outcome.
            Kind::Ok | Kind::DroppedWhileClosing => Some(Outcome::Ok),
            Kind::ToolError => Some(Outcome::Error),
            Kind::Panic => Some(Outcome::Panicked),
            Kind::Timeout | Kind::Dropped | Kind::Abandoned => Some(Outcome::Cancelled),
            // Nothing injected, so no dependency and no finalizer.
            Kind::InvalidArguments
            | Kind::Denied
            | Kind::DirectOk
            | Kind::DirectPanic
            | Kind::DirectTimeout
            | Kind::DirectDropped => None,
        }
    }

    /// Whether this kind's calls build the request dependency.
    pub(crate) fn builds(self) -> Builds {
        match self {
            Kind::Ok
            | Kind::ToolError
            | Kind::Panic
            | Kind::Dropped
            | Kind::DroppedWhileClosing => Builds::EveryCall,
            Kind::Timeout | Kind::Abandoned => Builds::AtMostEveryCall,
            Kind::InvalidArguments
            | Kind::Denied
            | Kind::DirectOk
            | Kind::DirectPanic
            | Kind::DirectTimeout
            | Kind::DirectDropped => Builds::Never,
        }
    }

    /// Makes the `call`-th call, of this kind, and checks what the caller
    /// got back; an unexpected answer comes back as its `Debug` text.
    pub(crate) async fn make(self, executor: &Executor, call: u64) -> Result<(), String> {
        let admin = &Caller { admin: true };
        match self {
            Kind::Ok => {
                let n = call % 1000;
                let result = executor.invoke(self.tool(), json!({ "n": n }), admin).await;
                expect(
                    matches!(&result, Ok(value) if *value == json!({ "next": n + 1 })),
                    &result,
                )
            }
            Kind::ToolError => {
                let result = executor.invoke(self.tool(), json!({}), admin).await;
                expect(
                    matches!(&result, Err(CallError::Tool { source, .. }) if source.is::<Refused>()),
                    &result,
                )
            }
            Kind::Panic | Kind::DirectPanic => {
                let result = executor.invoke(self.tool(), json!({}), admin).await;
                expect(
                    matches!(&result, Err(CallError::Panicked { message, .. }) if message == DELIBERATE_PANIC),
                    &result,
                )
            }
            Kind::Timeout | Kind::DirectTimeout => {
                let result = executor.invoke(self.tool(), json!({}), admin).await;
                expect(
                    matches!(&result, Err(CallError::Timeout { after, .. }) if *after == Duration::from_millis(1)),
                    &result,
                )
            }
            Kind::InvalidArguments => {
                let result = executor
                    .invoke(self.tool(), json!({ "n": "seven" }), admin)
                    .await;
                expect(
                    matches!(&result, Err(CallError::InvalidArguments { .. })),
                    &result,
                )
            }
            Kind::Denied => {
                let stranger = &Caller { admin: false };
                let result = executor
                    .invoke(self.tool(), json!({ "n": 1 }), stranger)
                    .await;
                expect(matches!(&result, Err(CallError::Denied { .. })), &result)
            }
            Kind::Dropped | Kind::DirectDropped => {
                // Unconstrained, so that tokio's cooperative budget cannot
                // make this single poll yield before the call's scope opens:
                // every such call builds its dependency, then is dropped
                // while the body sleeps, and the executor hands the
                // finalizer to the runtime.
                let mut call = pin!(tokio::task::unconstrained(executor.invoke(
                    self.tool(),
                    json!({}),
                    admin
                )));
                let first = std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await;
                expect(first.is_pending(), &first)
            }
            Kind::DroppedWhileClosing => {
                // Unconstrained, as above: in its one poll the call builds
                // its dependency, runs its body to the end and starts the
                // finalizer, which yields; the call is dropped there, and
                // the executor hands the rest of the close to the runtime.
                let n = call % 1000;
                let mut call = pin!(tokio::task::unconstrained(executor.invoke(
                    self.tool(),
                    json!({ "n": n }),
                    admin
                )));
                let first = std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await;
                expect(first.is_pending(), &first)
            }
            Kind::Abandoned => {
                let invoke = executor.invoke(self.tool(), json!({}), admin);
                let result = tokio::time::timeout(CALLER_PATIENCE, invoke).await;
                expect(result.is_err(), &result)
            }
            Kind::DirectOk => {
                let n = call % 1000;
                let result = executor.invoke(self.tool(), json!({ "n": n }), admin).await;
                expect(
                    matches!(&result, Ok(value) if *value == json!(n + 1)),
                    &result,
                )
            }
        }
    }
}

/// `Ok` when the answer is the expected one, its `Debug` text otherwise.
fn expect(expected: bool, got: &impl Debug) -> Result<(), String> {
    if expected {
        Ok(())
    } else {
        Err(format!("{got:?}"))
    }
}

/// A well-mixed hash (SplitMix64's finalizer), to interleave the kinds.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

// The shares are per mille: they must cover every call.
const _: () = {
    let mut sum = 0;
    let mut i = 0;
    while i < Kind::COUNT {
        sum += Kind::ALL[i].per_mille();
        i += 1;
    }
    assert!(sum == 1000, "the kinds' shares must sum to 1000 per mille");
};

/// What the callers saw, per kind.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Calls made.
    pub(crate) sent: [u64; Kind::COUNT],
    /// Calls whose answer was not the one their kind expects.
    pub(crate) unexpected: [u64; Kind::COUNT],
    /// The first unexpected answer, for the report.
    pub(crate) first_unexpected: [Option<String>; Kind::COUNT],
}

impl Tally {
    /// Records one call's answer.
    pub(crate) fn record(&mut self, kind: Kind, answer: Result<(), String>) {
        let i = kind.index();
        self.sent[i] += 1;
        if let Err(got) = answer {
            self.unexpected[i] += 1;
            self.first_unexpected[i].get_or_insert(got);
        }
    }

    /// Adds another caller's tally to this one.
    pub(crate) fn merge(&mut self, other: Tally) {
        for (i, first) in other.first_unexpected.into_iter().enumerate() {
            self.sent[i] += other.sent[i];
            self.unexpected[i] += other.unexpected[i];
            if let Some(got) = first {
                self.first_unexpected[i].get_or_insert(got);
            }
        }
    }

    /// Every call made.
    pub(crate) fn total(&self) -> u64 {
        self.sent.iter().sum()
    }
}
