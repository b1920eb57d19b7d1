//! Step 6: the body under its timeout, with its panics caught: the one
//! timeout wrapper and the one place a body's end becomes an [`Outcome`].

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use crate::error::CallError;
use crate::scope::Outcome;
use crate::util::panic::CatchUnwind;

/// A tool's body, pinned where its call keeps it.
pub(super) type Body<'a, O> = Pin<&'a mut (dyn Future<Output = Result<O, CallError>> + Send + 'a)>;

/// Runs the body of tool `key` to its end, or until `timeout` less the
/// time the call `waited` for its turn, and says how it ended. Generic only
/// over the output: tools that return the same type share one copy.
pub(super) async fn run<O>(
    key: &'static str,
    timeout: Option<Duration>,
    waited: Duration,
    body: Body<'_, O>,
) -> (Result<O, CallError>, Outcome) {
    let body = CatchUnwind::new(body);
    let ended = match timeout {
        None => body.await,
        // Boxed: a timer is large, and every call's future, with a timeout
        // or not, would otherwise carry its space and be copied with it.
        Some(after) => {
            match Box::pin(tokio::time::timeout(after.saturating_sub(waited), body)).await {
                Ok(ended) => ended,
                Err(_) => return (Err(CallError::Timeout { key, after }), Outcome::Cancelled),
            }
        }
    };
    match ended {
        Ok(Ok(output)) => (Ok(output), Outcome::Ok),
        Ok(Err(error)) => (Err(error), Outcome::Error),
        Err(message) => (Err(CallError::Panicked { key, message }), Outcome::Panicked),
    }
}
