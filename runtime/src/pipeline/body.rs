//! Step 6: the body under its timeout, with its panics caught: the one
//! timeout wrapper and the one place a body's end becomes an [`Outcome`].

use std::time::Duration;

use serde_json::Value;

use crate::error::CallError;
use crate::scope::Outcome;
use crate::util::BoxFuture;
use crate::util::panic::CatchUnwind;

/// Runs the body of tool `key` to its end, or until `timeout` less the
/// time the call `waited` for its turn, and says how it ended. The body is
/// dropped by the time this returns.
pub(super) async fn run(
    key: &'static str,
    timeout: Option<Duration>,
    waited: Duration,
    body: BoxFuture<'_, Result<Value, CallError>>,
) -> (Result<Value, CallError>, Outcome) {
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
