//! Hooks: what `authorize` and `approve` answer, and how the pipeline asks them.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use crate::approval::LedgerError;
use crate::context::ErasedContext;
use crate::error::{BoxError, CallError, HookKind};
use crate::invocation::Invocation;
use crate::tool_str::ToolStr;

/// A hook's answer: run, refuse, or wait for a person.
///
/// `async` hooks may return `bool`, a `Verdict`, or a `Result` of either
/// (see [`IntoVerdict`]); a hook that never waits may be a plain `fn`
/// returning a `Verdict`. `Pending` only makes sense from an `approve`
/// hook: the call then fails with [`CallError::ApprovalRequired`], carrying
/// what a person needs to approve. An `authorize` hook that answers
/// `Pending` denies.
///
/// ```
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Executor, Invocation, executor::Verdict};
///
/// /// Refund an order.
/// #[tool(key = "orders.refund", effect = write, authorize = public, approve = by_amount)]
/// async fn refund(order_id: u64, cents: u64) -> bool { true }
///
/// async fn by_amount(_: &(), call: &Invocation<'_, RefundArgs>) -> Verdict {
///     match call.cents {
///         0..=5_000 => Verdict::Allow,
///         5_001..=100_000 => Verdict::Pending,
///         _ => Verdict::Deny,
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<RefundArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
///
/// let small = executor.invoke("refund", json!({"order_id": 1, "cents": 1_000}), &()).await;
/// assert!(small.is_ok());
/// let large = executor.invoke("refund", json!({"order_id": 1, "cents": 20_000}), &()).await;
/// assert!(matches!(large, Err(CallError::ApprovalRequired(_))));
/// let huge = executor.invoke("refund", json!({"order_id": 1, "cents": 500_000}), &()).await;
/// assert!(matches!(huge, Err(CallError::NotApproved { .. })));
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Verdict {
    /// Go on.
    Allow,
    /// Refuse; nothing runs.
    Deny,
    /// Not decided yet: a person must approve this exact call.
    Pending,
}

/// `true` allows, `false` denies: the answer of a plain `fn` hook that
/// decides yes or no.
///
/// ```
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Executor, Invocation, executor::Verdict};
///
/// struct Actor { admin: bool }
///
/// /// Delete a report.
/// #[tool(key = "reports.delete", effect = destructive, authorize = admins, approve = admins)]
/// async fn delete_report(id: u64) -> u64 { id }
///
/// // Never waits, so a plain `fn`: asked in the call's first poll.
/// fn admins<A>(actor: &Actor, _: &Invocation<'_, A>) -> Verdict {
///     Verdict::from(actor.admin)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<DeleteReportArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// let args = json!({"id": 7});
/// let admin = executor.invoke("delete_report", args.clone(), &Actor { admin: true }).await;
/// assert_eq!(admin.unwrap(), json!(7));
/// let other = executor.invoke("delete_report", args, &Actor { admin: false }).await;
/// assert!(matches!(other, Err(CallError::Denied { .. })));
/// # }
/// ```
impl From<bool> for Verdict {
    fn from(allow: bool) -> Self {
        if allow { Verdict::Allow } else { Verdict::Deny }
    }
}

/// What an `async` hook may return (a plain `fn` hook returns a [`Verdict`]):
/// `bool`, [`Verdict`], or `Result<_, E>` of either
/// with `E: Into<Box<dyn Error + Send + Sync>>`.
///
/// ```
/// use toolwright::{executor::{IntoVerdict, Verdict}};
/// assert_eq!(true.into_verdict().unwrap(), Verdict::Allow);
/// let failed: Result<bool, std::io::Error> = Err(std::io::Error::other("policy store down"));
/// assert!(failed.into_verdict().is_err());
/// ```
#[diagnostic::on_unimplemented(
    message = "a toolwright hook cannot return `{Self}`",
    label = "this hook's return type",
    note = "an `authorize` or `approve` hook returns `bool`, `toolwright::executor::Verdict`, or `Result<_, E>` of either"
)]
pub trait IntoVerdict {
    /// Converts the hook's answer; an `Err` becomes [`CallError::Hook`].
    ///
    /// ```
    /// use toolwright::{executor::{IntoVerdict, Verdict}};
    ///
    /// assert_eq!(false.into_verdict().unwrap(), Verdict::Deny);
    /// assert_eq!(Verdict::Pending.into_verdict().unwrap(), Verdict::Pending);
    /// let lookup: Result<Verdict, std::io::Error> = Err(std::io::Error::other("store down"));
    /// assert_eq!(lookup.into_verdict().unwrap_err().to_string(), "store down");
    /// ```
    fn into_verdict(self) -> Result<Verdict, BoxError>;
}

impl IntoVerdict for bool {
    fn into_verdict(self) -> Result<Verdict, BoxError> {
        Ok(Verdict::from(self))
    }
}

impl IntoVerdict for Verdict {
    fn into_verdict(self) -> Result<Verdict, BoxError> {
        Ok(self)
    }
}

impl<V: IntoVerdict, E: Into<BoxError>> IntoVerdict for Result<V, E> {
    fn into_verdict(self) -> Result<Verdict, BoxError> {
        self.map_err(Into::into)?.into_verdict()
    }
}

/// The answer of a hook, or the error it returned.
fn verdict<R: IntoVerdict>(
    answer: R,
    tool: &'static str,
    hook: HookKind,
) -> Result<Verdict, CallError> {
    answer.into_verdict().map_err(|source| CallError::Hook {
        key: ToolStr::from_static(tool),
        hook,
        source,
    })
}

/// Calls an `authorize` or `approve` hook: downcasts the caller's context
/// to the type the hook takes and converts its answer.
///
/// Generated code passes the hook as a value, after the invocation that
/// fixes `A`, so that a hook of the wrong shape fails one bound, on the
/// hook's path, showing the signature that was expected.
pub fn call_hook<'a, C, A, H, R>(
    ctx: ErasedContext<'a>,
    call: &'a Invocation<'a, A>,
    hook: H,
    tool: &'static str,
    kind: HookKind,
) -> HookCall<R::Answer>
where
    C: Any + Sync,
    Invocation<'a, A>: Sync,
    H: FnOnce(&'a C, &'a Invocation<'a, A>) -> R + Send + 'a,
    R: HookReturn,
    R::Resolved: IntoVerdict,
    R::Answer: Send + 'a,
{
    match ctx.downcast::<C>(tool) {
        Ok(ctx) => hook(ctx, call).ask(tool, kind),
        Err(error) => HookCall::answered(Err(error)),
    }
}

pin_project_lite::pin_project! {
    /// A hook's answer on its way: the future `F` of an `async` hook, or
    /// the answer itself, from a hook that is a plain `fn`.
    ///
    /// A `Future` for every `F`, through `poll`, which [`HookReturn`]
    /// chose where its bounds hold: so that a hook of the wrong shape
    /// fails those bounds, once, and nothing that awaits this type
    /// reports the same mistake again.
    #[doc(hidden)]
    #[project = HookCallProjection]
    pub enum HookCall<F> {
        /// An `async` hook was called: its future `answer`, polled by `poll`.
        Asked {
            #[pin]
            answer: F,
            poll: PollHook<F>,
            tool: &'static str,
            kind: HookKind,
        },
        /// The answer: a plain `fn` hook's, or the error of a caller whose
        /// context is not the type the hook takes.
        Answered {
            answer: Option<Result<Verdict, CallError>>,
        },
    }
}

impl<F> HookCall<F> {
    /// A call whose answer is known.
    pub(crate) fn answered(answer: Result<Verdict, CallError>) -> Self {
        HookCall::Answered {
            answer: Some(answer),
        }
    }
}

/// How [`HookCall`] polls a hook's future `F`.
pub type PollHook<F> = fn(
    Pin<&mut F>,
    &mut TaskContext<'_>,
    &'static str,
    HookKind,
) -> Poll<Result<Verdict, CallError>>;

fn poll_hook<F>(
    answer: Pin<&mut F>,
    cx: &mut TaskContext<'_>,
    tool: &'static str,
    kind: HookKind,
) -> Poll<Result<Verdict, CallError>>
where
    F: Future,
    F::Output: IntoVerdict,
{
    answer.poll(cx).map(|answer| verdict(answer, tool, kind))
}

impl<F> HookCall<F> {
    /// The hook's answer, as the steps (compiled once for every tool) wait
    /// for it: given already, or a future boxed only when the hook is `async`.
    pub(crate) fn erased<'b>(self) -> Asked<'b>
    where
        F: Send + 'b,
    {
        match self {
            HookCall::Answered { answer } => Asked::Answered(answer),
            asked => Asked::Waiting(Box::pin(asked)),
        }
    }
}

/// A hook's answer, whatever the hook's type: see [`HookCall::erased`].
pub(crate) enum Asked<'b> {
    /// A plain `fn` hook's, or one the context's type refused.
    Answered(Option<Result<Verdict, CallError>>),
    /// An `async` hook's, to wait for.
    Waiting(crate::util::BoxFuture<'b, Result<Verdict, CallError>>),
}

impl Future for Asked<'_> {
    type Output = Result<Verdict, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Asked::Answered(answer) => Poll::Ready(
                answer
                    .take()
                    .expect("a hook's answer was polled after it was given"),
            ),
            Asked::Waiting(answer) => answer.as_mut().poll(cx),
        }
    }
}

impl<F> Future for HookCall<F> {
    type Output = Result<Verdict, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        match self.project() {
            HookCallProjection::Asked {
                answer,
                poll,
                tool,
                kind,
            } => poll(answer, cx, tool, *kind),
            HookCallProjection::Answered { answer } => Poll::Ready(
                answer
                    .take()
                    .expect("a hook's answer was polled after it was given"),
            ),
        }
    }
}

/// What a hook returns: a future, because a hook is an `async fn`; or a
/// [`Verdict`], from a hook that is a plain `fn` and never waits.
#[diagnostic::on_unimplemented(
    message = "a toolwright hook is an `async fn`, or a `fn` returning `toolwright::executor::Verdict`; this one returns `{Self}`",
    label = "this hook is neither `async` nor returns a `Verdict`",
    note = "write the hook as `async fn hook(ctx: &C, call: &toolwright::Invocation<'_, Args>) -> bool`, or as `fn hook(ctx: &C, call: &toolwright::Invocation<'_, Args>) -> toolwright::executor::Verdict`"
)]
pub trait HookReturn {
    /// The hook's answer: its future's output, or the [`Verdict`].
    type Resolved;
    /// What [`HookCall`] holds: the hook's future, or [`Answered`].
    type Answer;
    /// The answer on its way.
    fn ask(self, tool: &'static str, kind: HookKind) -> HookCall<Self::Answer>
    where
        Self::Resolved: IntoVerdict;
}

// No bound on the output here, but on `HookReturn::Resolved` where the hook
// is called: so that a hook returning a future of the wrong output is told
// about the output (`IntoVerdict`), one that is not `async` at all about that.
#[diagnostic::do_not_recommend]
impl<F: Future> HookReturn for F {
    type Resolved = F::Output;
    type Answer = F;

    fn ask(self, tool: &'static str, kind: HookKind) -> HookCall<F>
    where
        F::Output: IntoVerdict,
    {
        HookCall::Asked {
            answer: self,
            poll: poll_hook::<F>,
            tool,
            kind,
        }
    }
}

impl HookReturn for Verdict {
    type Resolved = Verdict;
    type Answer = Answered;

    fn ask(self, tool: &'static str, kind: HookKind) -> HookCall<Answered> {
        HookCall::answered(verdict(self, tool, kind))
    }
}

/// The [`HookReturn::Answer`] of a hook that is a plain `fn`: it has
/// answered, so there is nothing to await.
pub enum Answered {}

/// Step 3: what the `authorize` hook's answer means.
pub(crate) fn authorized(
    answer: Result<Verdict, CallError>,
    key: &ToolStr,
) -> Result<(), CallError> {
    match answer? {
        Verdict::Allow => Ok(()),
        Verdict::Deny | Verdict::Pending => Err(CallError::Denied { key: key.clone() }),
    }
}

/// Step 4: what the `approve` hook's answer means: approved (`true`), or
/// waiting for a person (`false`: the call answers
/// [`CallError::ApprovalRequired`]).
pub(crate) fn approved(
    answer: Result<Verdict, CallError>,
    key: &ToolStr,
) -> Result<bool, CallError> {
    match answer.map_err(too_many_pending)? {
        Verdict::Allow => Ok(true),
        Verdict::Deny => Err(CallError::NotApproved { key: key.clone() }),
        Verdict::Pending => Ok(false),
    }
}

/// An `approve` hook's ledger error that says the requester has too many
/// requests waiting, as the call's own error; any other error as it is.
fn too_many_pending(error: CallError) -> CallError {
    let CallError::Hook {
        key,
        hook: HookKind::Approve,
        source,
    } = error
    else {
        return error;
    };
    match source.downcast::<LedgerError>() {
        Ok(ledger) => match *ledger {
            LedgerError::TooManyPending {
                requested_by,
                pending,
            } => CallError::TooManyPending {
                key,
                requested_by,
                pending,
            },
            ledger => CallError::Hook {
                key,
                hook: HookKind::Approve,
                source: Box::new(ledger),
            },
        },
        Err(source) => CallError::Hook {
            key,
            hook: HookKind::Approve,
            source,
        },
    }
}
