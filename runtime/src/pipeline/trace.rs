//! The call's span, the catch of a panic outside the body (a hook's, a
//! deserializer's), and the one place that records how the call ended.

use std::future::Future;
use std::pin::pin;

use tracing::Instrument;

use crate::effect::Effect;
use crate::error::CallError;
use crate::util::panic::CatchUnwind;

/// Runs `call`, a call of tool `key`, inside its `toolwright.call` span and
/// records its outcome there.
pub(crate) async fn traced<R>(
    key: &'static str,
    name: &'static str,
    effect: Effect,
    call: impl Future<Output = Result<R, CallError>>,
) -> Result<R, CallError> {
    let span = tracing::info_span!(
        "toolwright.call",
        key,
        name,
        effect = effect.as_str(),
        outcome = tracing::field::Empty,
    );
    let mut call = pin!(CatchUnwind::new(call).instrument(span));
    let result = match call.as_mut().await {
        Ok(result) => result,
        Err(message) => Err(CallError::Panicked { key, message }),
    };
    call.span().record("outcome", outcome(&result));
    result
}

/// The span's `outcome` field.
fn outcome<R>(result: &Result<R, CallError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(CallError::InvalidArguments { .. }) => "invalid_arguments",
        Err(CallError::Denied { .. }) => "denied",
        Err(CallError::NotApproved { .. }) => "not_approved",
        Err(CallError::ApprovalRequired(_)) => "approval_required",
        Err(CallError::Panicked { .. }) => "panicked",
        Err(CallError::Timeout { .. }) => "timeout",
        Err(CallError::Finalizer { .. }) => "finalizer_failed",
        Err(_) => "error",
    }
}
