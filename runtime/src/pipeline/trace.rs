//! The call's span, the catch of a panic outside the body (a hook's, a
//! deserializer's), and the one place that records how the call ended: in
//! the span, and to the call's watch (its event) when it has one, also when
//! the call is dropped before it ends.
//!
//! The span follows OpenTelemetry's semantic conventions for generative-AI
//! tool execution: `tracing-opentelemetry` exports it as
//! `execute_tool <name>` with the `gen_ai.*` attributes, and an error status
//! with `error.type` when the call fails.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};

use tracing::Instrument;
use tracing::instrument::Instrumented;

use super::{Gate, Served, Watch};
use crate::error::CallError;
use crate::tool_str::ToolStr;
use crate::util::panic::CatchUnwind;

/// The numbers an executor gives its calls, 1, 2, 3…: the call id of
/// their events and their spans. A call takes one only when something
/// shows it (an observer, or a subscriber that wants the span).
#[derive(Debug)]
pub(crate) struct CallNumbers(AtomicU64);

impl Default for CallNumbers {
    fn default() -> Self {
        CallNumbers(AtomicU64::new(1))
    }
}

impl CallNumbers {
    pub(crate) fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }
}

/// Runs `call`, a call of the tool `served` (whose description is
/// `description`), inside its `toolwright.call` span and
/// records its outcome there, and the policy's ruling when it was made
/// from the tool alone (`gate`), and tells `watch` how it ended.
///
/// The span is built only when something could show it ([`shown`]): a call
/// nobody traces takes no number from `numbers` for it.
///
/// A plain future rather than an `async fn`, which would hold `call` twice
/// (as its argument and as the future it awaits).
pub(crate) fn traced<'w, F: Future>(
    served: &'w Served,
    description: &str,
    gate: Gate<'_>,
    watch: Option<&'w dyn Watch>,
    numbers: &CallNumbers,
    call: F,
) -> Traced<'w, F> {
    let span = if shown() {
        tracing::info_span!(
            "toolwright.call",
            otel.name = %format_args!("execute_tool {}", served.name),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = served.name.as_str(),
            gen_ai.tool.type = "function",
            gen_ai.tool.call.id = %watch.map_or_else(|| numbers.next(), |watch| watch.id()),
            gen_ai.tool.description = description,
            key = served.key.as_str(),
            name = served.name.as_str(),
            effect = served.effect.as_str(),
            outcome = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            policy = tracing::field::Empty,
            policy_rule = tracing::field::Empty,
        )
    } else {
        tracing::Span::none()
    };
    if let Gate::Ruled(ruling) = gate {
        ruling.record(&span);
        if let Some(watch) = watch {
            watch.findings().ruled(ruling);
        }
    }
    Traced {
        key: &served.key,
        watch,
        call: CatchUnwind::new(call).instrument(span),
    }
}

pin_project_lite::pin_project! {
    /// See [`traced`].
    pub(crate) struct Traced<'w, F> {
        key: &'w ToolStr,
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
                key: this.key.clone(),
                message,
            }),
        };
        let span = this.call.span();
        let outcome = outcome(&result);
        span.record("outcome", outcome);
        if result.is_err() {
            span.record("error.type", outcome);
            span.record("otel.status_code", "ERROR");
        }
        if let Some(watch) = this.watch.take() {
            watch.ended(Some(result.as_ref().map(|_| ())));
        }
        Poll::Ready(result)
    }
}

/// Whether anything could show a call's span: a `tracing` subscriber that
/// wants INFO, or, when none is set and `tracing`'s `log` feature is on, a
/// `log` logger at INFO. When nothing can, the call has no span: with that
/// feature on, a span nobody shows still evaluates its fields and asks
/// `log` at each step (see BENCHMARKS.md).
fn shown() -> bool {
    tracing::level_enabled!(tracing::Level::INFO) || log::max_level() >= log::LevelFilter::Info
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
