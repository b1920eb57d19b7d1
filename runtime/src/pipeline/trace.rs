//! The call's span, the catch of a panic outside the body (a hook's, a
//! deserializer's), and the one place that records how the call ended: in
//! the span, and to the call's watch (its event) when it has one, also when
//! the call is dropped before it ends.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tracing::Instrument;
use tracing::instrument::Instrumented;

use super::{Gate, Served, Watch};
use crate::error::CallError;
use crate::util::panic::CatchUnwind;

/// Runs `call`, a call of the tool `served`, inside its `toolwright.call`
/// span and records its outcome there, and the policy's ruling when it
/// was made from the tool alone (`gate`), and tells `watch` how it ended.
///
/// A plain future rather than an `async fn`, which would hold `call` twice
/// (as its argument and as the future it awaits).
pub(crate) fn traced<'w, F: Future>(
    served: &Served,
    gate: Gate<'_>,
    watch: Option<&'w dyn Watch>,
    call: F,
) -> Traced<'w, F> {
    let span = tracing::info_span!(
        "toolwright.call",
        key = served.key,
        name = served.name,
        effect = served.effect.as_str(),
        outcome = tracing::field::Empty,
        policy = tracing::field::Empty,
        policy_rule = tracing::field::Empty,
    );
    if let Gate::Ruled(ruling) = gate {
        ruling.record(&span);
        if let Some(watch) = watch {
            watch.findings().ruled(ruling);
        }
    }
    Traced {
        key: served.key,
        watch,
        call: CatchUnwind::new(call).instrument(span),
    }
}

pin_project_lite::pin_project! {
    /// See [`traced`].
    pub(crate) struct Traced<'w, F> {
        key: &'static str,
        // Taken when the call ends; still here when it is dropped, unended.
        watch: Option<&'w dyn Watch>,
        #[pin]
        call: Instrumented<CatchUnwind<F>>,
    }

    impl<F> PinnedDrop for Traced<'_, F> {
        fn drop(this: Pin<&mut Self>) {
            if let Some(watch) = this.project().watch.take() {
                watch.ended(None);
            }
        }
    }
}

impl<R, F: Future<Output = Result<R, CallError>>> Future for Traced<'_, F> {
    type Output = Result<R, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let result = match ready!(this.call.as_mut().poll(cx)) {
            Ok(Ok(output)) => Ok(output),
            // Generated code names its errors by the key the tool was
            // declared with; a call answers with the key it is served
            // under (a namespace's).
            Ok(Err(error)) => Err(error.served_as(this.key)),
            Err(message) => Err(CallError::Panicked {
                key: this.key,
                message,
            }),
        };
        this.call.span().record("outcome", outcome(&result));
        if let Some(watch) = this.watch.take() {
            watch.ended(Some(result.as_ref().map(|_| ())));
        }
        Poll::Ready(result)
    }
}

/// The span's `outcome` field.
fn outcome<R>(result: &Result<R, CallError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(CallError::InvalidArguments { .. }) => "invalid_arguments",
        Err(CallError::Denied { .. }) => "denied",
        Err(CallError::PolicyDenied { .. }) => "policy_denied",
        Err(CallError::NotApproved { .. }) => "not_approved",
        Err(CallError::ApprovalRequired(_)) => "approval_required",
        Err(CallError::Panicked { .. }) => "panicked",
        Err(CallError::Timeout { .. }) => "timeout",
        Err(CallError::Finalizer { .. }) => "finalizer_failed",
        Err(_) => "error",
    }
}
