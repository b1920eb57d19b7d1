//! Steps 3 to 7 on validated arguments: authorize, approve, open the scope,
//! run the body, close the scope with how it ended.

use std::pin::pin;

use super::{Env, body};
use crate::error::CallError;
use crate::hook::{approved, authorized};
use crate::invocation::Invocation;
use crate::scope::ScopeGuard;
use crate::tool::Tool;

pub(super) async fn run<T: Tool>(env: Env<'_>, args: T) -> Result<T::Output, CallError> {
    let args = ask_hooks(env, args).await?;
    let timeout = T::TIMEOUT.or(env.services.default_timeout);
    if !T::INJECTS {
        let (result, _) = body::run(T::KEY, timeout, pin!(T::__run(args, env.ctx, None))).await;
        return result;
    }
    let guard = ScopeGuard::open(&env.services.container);
    // The body (which may hold injected values) is dropped at the end of
    // this statement, before the finalizers run.
    let (result, outcome) = body::run(
        T::KEY,
        timeout,
        pin!(T::__run(args, env.ctx, Some(guard.scope()))),
    )
    .await;
    guard.close(T::KEY, outcome, result).await
}

/// Steps 3 and 4: the hooks asked about the validated arguments, which come
/// back for the body.
async fn ask_hooks<T: Tool>(env: Env<'_>, args: T) -> Result<T, CallError> {
    let approves = T::EFFECT.requires_approval();
    if T::PUBLIC && !approves {
        return Ok(args);
    }
    let invocation = Invocation::new(args, T::KEY, T::NAME, T::EFFECT);
    if !T::PUBLIC {
        authorized(T::__authorize(env.ctx, &invocation).await, T::KEY)?;
    }
    if approves && !approved(T::__approve(env.ctx, &invocation).await, T::KEY)? {
        return Err(CallError::ApprovalRequired(Box::new(
            invocation.approval_request(),
        )));
    }
    Ok(invocation.into_args())
}
