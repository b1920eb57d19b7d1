//! Step 6: the body under its timeout, with its panics caught: the one
//! timeout wrapper and the one place a body's end becomes an [`Outcome`].

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;
use tokio::time::Sleep;

use super::seam::Call;
use crate::error::CallError;
use crate::scope::Outcome;
use crate::tool_str::ToolStr;

/// The body of tool `key`, started in `call`, run to its end, or until
/// `timeout` less the time the call `waited` for its turn: how it ended.
/// One plain future, polled in place in the steps' own.
#[inline]
pub(super) fn run<'c, 'a>(
    key: &'a ToolStr,
    timeout: Option<Duration>,
    waited: Duration,
    call: Pin<&'c mut (dyn Call<'a> + 'a)>,
) -> Run<'c, 'a> {
    Run {
        key,
        call,
        timer: timeout.map(|after| timer(after, waited)),
    }
}

/// The timer of a body with a timeout of `after`, less what it `waited`.
/// Boxed: a timer is large, and every call's future, with a timeout or
/// not, would otherwise carry its space.
#[cold]
#[inline(never)]
fn timer(after: Duration, waited: Duration) -> (Pin<Box<Sleep>>, Duration) {
    (
        Box::pin(tokio::time::sleep(after.saturating_sub(waited))),
        after,
    )
}

/// See [`run`].
pub(super) struct Run<'c, 'a> {
    key: &'a ToolStr,
    call: Pin<&'c mut (dyn Call<'a> + 'a)>,
    timer: Option<(Pin<Box<Sleep>>, Duration)>,
}

impl Future for Run<'_, '_> {
    type Output = (Result<Value, CallError>, Outcome);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let key = this.key;
        let polled =
            std::panic::catch_unwind(AssertUnwindSafe(|| this.call.as_mut().poll_body(cx)));
        let ended = match polled {
            Ok(Poll::Ready(Ok(output))) => (Ok(output), Outcome::Ok),
            Ok(Poll::Ready(Err(error))) => (Err(error), Outcome::Error),
            Err(payload) => {
                let message = crate::util::panic::message(payload);
                let error = CallError::Panicked {
                    key: key.clone(),
                    message,
                };
                (Err(error), Outcome::Panicked)
            }
            Ok(Poll::Pending) => {
                let Some((timer, after)) = &mut this.timer else {
                    return Poll::Pending;
                };
                if timer.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                (
                    Err(CallError::Timeout {
                        key: key.clone(),
                        after: *after,
                    }),
                    Outcome::Cancelled,
                )
            }
        };
        Poll::Ready(ended)
    }
}

/// The error of a step taken out of order (a body polled before it
/// started, hooks asked after it did), which the steps never do.
#[cold]
pub(super) fn out_of_order(key: ToolStr, what: &str) -> CallError {
    CallError::Panicked {
        key,
        message: format!("toolwright: {what}"),
    }
}
