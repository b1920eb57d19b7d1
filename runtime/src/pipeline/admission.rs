//! Step 5a: a call's turn. After its hooks answered and before its scope
//! opens, a call of a tool with `concurrency = N` takes one of the tool's
//! permits, and on an executor that serves an `exclusive` tool every call
//! takes a pass of the executor's gate (an exclusive one, all of them). The
//! call keeps them until its scope is closed. See [`Concurrency`].

use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;

use super::Env;
use crate::concurrency::Concurrency;
use crate::error::CallError;
use crate::tool_str::ToolStr;

/// The passes of an executor's gate: an ordinary call takes one, an
/// exclusive call every one (tokio's `RwLock` is built the same way). The
/// semaphore is fair, so an exclusive call waiting at the head of the queue
/// holds back the calls behind it.
const PASSES: u32 = u32::MAX >> 3;

/// The gate of an executor that serves an `exclusive` tool.
#[derive(Debug)]
pub(crate) struct Gate(Semaphore);

impl Gate {
    pub(crate) fn new() -> Self {
        Gate(Semaphore::new(PASSES as usize))
    }
}

/// What a call holds while its turn lasts; dropping it ends the turn.
pub(super) struct Turn<'a> {
    _permit: Option<SemaphorePermit<'a>>,
    _pass: Option<SemaphorePermit<'a>>,
    /// How long the call waited, to take from its timeout.
    pub(super) waited: Duration,
}

/// Whether a call of a tool with `concurrency` has anything to wait for:
/// a tool without a limit pays one load of the executor's gate.
pub(super) fn needs_turn(env: &Env<'_>, concurrency: Concurrency) -> bool {
    !matches!(concurrency, Concurrency::Unlimited) || env.exclusive.is_some()
}

/// Waits for the call's turn, at most `timeout` (the tool's). The tool's
/// permit is taken first, then the gate's pass, so that a call queued on
/// its own tool never holds an exclusive call back.
pub(super) async fn take_turn<'a>(
    env: &Env<'a>,
    key: &ToolStr,
    concurrency: Concurrency,
    timeout: Option<Duration>,
) -> Result<Turn<'a>, CallError> {
    let started = Instant::now();
    let wait = async {
        let permit = match env.limiter {
            Some(limiter) => Some(acquire(limiter.acquire()).await),
            None => None,
        };
        let pass = match env.exclusive {
            Some(Gate(gate)) if concurrency == Concurrency::Exclusive => {
                Some(acquire(gate.acquire_many(PASSES)).await)
            }
            Some(Gate(gate)) => Some(acquire(gate.acquire()).await),
            None => None,
        };
        (permit, pass)
    };
    let (permit, pass) = match timeout {
        None => wait.await,
        Some(after) => match tokio::time::timeout_at(started + after, wait).await {
            Ok(taken) => taken,
            Err(_) => {
                return Err(CallError::Timeout {
                    key: key.clone(),
                    after,
                });
            }
        },
    };
    let waited = started.elapsed();
    if timeout.is_some_and(|after| waited >= after) {
        // No time is left for the body: it does not start.
        return Err(CallError::Timeout {
            key: key.clone(),
            after: timeout.unwrap_or_default(),
        });
    }
    Ok(Turn {
        _permit: permit,
        _pass: pass,
        waited,
    })
}

/// A permit; the executor never closes its semaphores.
async fn acquire<'a>(
    acquiring: impl Future<Output = Result<SemaphorePermit<'a>, tokio::sync::AcquireError>>,
) -> SemaphorePermit<'a> {
    match acquiring.await {
        Ok(permit) => permit,
        Err(_) => unreachable!("the executor's semaphores are never closed"),
    }
}
