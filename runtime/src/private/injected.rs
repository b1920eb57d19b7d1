//! The body of a tool with injected parameters, in a debug build: each
//! value resolved, then the rest of the body started with it. Its future
//! is compiled once per injected type and output type, not once per tool,
//! as an `async` block of the tool's own would be (see `expand/call.rs` in
//! the macro crate). A release build runs that `async` block in place.

use std::future::Future;

use super::BodyFuture;
use crate::error::CallError;

/// The rest of a tool's body once its injected value of type `I` is
/// resolved: the next value's resolution, or the fn's own future, boxed.
pub(super) type Then<'a, I, O> =
    Box<dyn FnOnce(I) -> BodyFuture<'a, Result<O, CallError>> + Send + 'a>;

/// Resolves an injected value with `resolve`, then runs the rest of the
/// body, `then`, on it.
pub async fn injected<'a, R, I, O>(resolve: R, then: Then<'a, I, O>) -> Result<O, CallError>
where
    R: Future<Output = Result<I, CallError>>,
{
    let value = resolve.await?;
    then(value).await
}
