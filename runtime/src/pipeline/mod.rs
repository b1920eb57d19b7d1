//! Steps 2 to 7 of a call, written once for the JSON and the typed path.
//!
//! ```text
//! json::<T>   read the JSON arguments (arguments.rs) ─┐
//! typed::<T>  check the typed arguments (arguments.rs) ┴─ run::<T> (steps.rs) ── serialize (json only)
//!                                     hooks → scope → body under timeout, panics caught (body.rs) → close
//! ```
//!
//! The executor wraps either in [`traced`] (trace.rs): the call's span, the
//! catch of any panic outside the body, and the one place that records the
//! outcome. A registration stores `json::<T>` as a plain fn pointer
//! ([`JsonCall`]): the one seam between a name looked up at run time and
//! the tool's own types.

mod arguments;
mod body;
mod steps;
mod trace;

use std::time::Duration;

use serde_json::Value;

pub(crate) use arguments::Validation;
pub(crate) use trace::traced;

use crate::context::ErasedContext;
use crate::error::CallError;
use crate::scope::Container;
use crate::tool::Tool;
use crate::util::BoxFuture;

/// What every call shares: the container its scopes draw from, and the
/// timeout of tools that declare none.
#[derive(Debug)]
pub(crate) struct Services {
    pub(crate) container: Container,
    pub(crate) default_timeout: Option<Duration>,
}

/// One call's surroundings: the shared services, its tool's schema and
/// validator, and the caller's context.
#[derive(Clone, Copy)]
pub(crate) struct Env<'a> {
    pub(crate) services: &'a Services,
    pub(crate) validation: &'a Validation,
    pub(crate) schema: &'a Value,
    pub(crate) ctx: ErasedContext<'a>,
}

/// How a registration starts a JSON call of its tool: [`json`] for its type.
pub(crate) type JsonCall = for<'a> fn(Env<'a>, Value) -> BoxFuture<'a, Result<Value, CallError>>;

/// A JSON call of `T`: its arguments read (step 2), steps 3 to 7, and its
/// output serialized. The call's one allocation.
pub(crate) fn json<'a, T: Tool>(
    env: Env<'a>,
    arguments: Value,
) -> BoxFuture<'a, Result<Value, CallError>> {
    Box::pin(async move {
        let args: T = arguments::read(&env, T::KEY, &arguments)?;
        drop(arguments);
        let output = steps::run(env, args).await?;
        crate::util::json::to_value(&output).map_err(|source| CallError::Output {
            key: T::KEY,
            source,
        })
    })
}

/// A typed call of `T`: its arguments checked against the schema's
/// constraints (step 2), then steps 3 to 7.
pub(crate) async fn typed<T: Tool>(env: Env<'_>, args: T) -> Result<T::Output, CallError> {
    arguments::check_typed(&env, T::KEY, &args)?;
    steps::run(env, args).await
}
