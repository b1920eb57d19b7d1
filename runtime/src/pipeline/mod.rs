//! The one pipeline: steps 2 to 7 of every call, for JSON and typed
//! arguments, for `#[tool]`s and tools built at run time alike.
//!
//! ```text
//! seam::json::<T>  ── per tool: the call's one future (a box) holding ──┐
//!   step 2: steps::read (arguments.rs), with T's Deserialize           │
//!   Slot<T>: T's arguments, their Invocation, T's body (a Call)        │
//!                                                                      │
//! steps::run  ── compiled once ─────────────────────────────────────────┘
//!   steps 3-4: policy, then the hooks (Call::asking → T's adapters)
//!   step 5a:   the call's turn (admission.rs)
//!   steps 5-7: scope, body under its timeout with panics caught
//!              (body.rs: Call::poll_body, T's output serialized), audit,
//!              close with the outcome
//! ```
//!
//! Everything but the seam (seam.rs) is ordinary code without a type
//! parameter per tool, compiled once: lookup, view, policy, approval,
//! limits, scope, timeout, panic catching, events, audit and span. A
//! registration stores `seam::json::<T>` as a plain fn pointer
//! ([`JsonCall`]); the executor wraps a call in [`traced`] (trace.rs): its
//! span, the catch of any panic outside the body, and the one place that
//! records the outcome.

mod admission;
mod arguments;
mod body;
mod dynamic;
mod gate;
mod object;
mod reading;
mod seam;
mod steps;
mod trace;
mod watch;

use std::time::Duration;

use serde_json::Value;
use tokio::sync::Semaphore;

pub(crate) use admission::Gate as ExclusiveGate;
pub(crate) use arguments::Validation;
pub(crate) use dynamic::json as dynamic_json;
pub(crate) use gate::{ArgumentRules, Gate, Ruling};
pub(crate) use seam::{JsonCall, json, typed};
pub(crate) use trace::{CallNumbers, Traced, traced};
pub(crate) use watch::{Findings, Shown, Watch};

use crate::approval::Approvals;
use crate::concurrency::Concurrency;
use crate::context::ErasedContext;
use crate::effect::Effect;
use crate::idempotency::{Idempotency, Keyed};
use crate::principal::Identify;
use crate::scope::Container;
use crate::tool_str::ToolStr;

/// What every call shares: the container its scopes draw from, the
/// timeout of tools that declare none, the executor's gate for `exclusive`
/// tools, and the bound on the result text front ends show a model for
/// tools that declare none.
#[derive(Debug)]
pub(crate) struct Services {
    pub(crate) container: Container,
    pub(crate) default_timeout: Option<Duration>,
    pub(crate) gate: ExclusiveGate,
    pub(crate) max_result: usize,
    /// Where the ledger hook records requests and consumes approvals.
    pub(crate) approvals: Option<Approvals>,
    /// Where the idempotency keys of writes are claimed.
    pub(crate) idempotency: Option<Idempotency>,
    /// Who calls, for a policy's "ask" on a tool without an `approve` hook.
    pub(crate) principal: Option<Identify>,
    /// The numbers of the calls that events or spans show.
    pub(crate) calls: CallNumbers,
}

/// A tool as it is served: the key and name its calls, errors and approval
/// digests carry (a namespace's, when it is mounted under one), its effect,
/// its own timeout (an operator's override, if any) and how many of its
/// calls may run at once.
#[derive(Debug, Clone)]
pub(crate) struct Served {
    pub(crate) key: ToolStr,
    pub(crate) name: ToolStr,
    pub(crate) effect: Effect,
    pub(crate) timeout: Option<Duration>,
    pub(crate) concurrency: Concurrency,
}

/// One call's surroundings, as its steps hold them: a pointer to them,
/// which the caller keeps while the call runs. Every future of the call
/// then holds (and copies as it is moved) one pointer, not all of them.
#[derive(Clone, Copy)]
pub(crate) struct Env<'a>(pub(crate) &'a Surroundings<'a>);

impl<'a> std::ops::Deref for Env<'a> {
    type Target = Surroundings<'a>;

    fn deref(&self) -> &Surroundings<'a> {
        self.0
    }
}

/// One call's surroundings: the shared services, its tool as served, its
/// schema, validator and policy, and the caller's context.
#[derive(Clone, Copy)]
pub(crate) struct Surroundings<'a> {
    pub(crate) services: &'a Services,
    pub(crate) served: &'a Served,
    pub(crate) validation: &'a Validation,
    pub(crate) schema: &'a Value,
    /// How the permission policy meets the tool's calls.
    pub(crate) gate: Gate<'a>,
    /// The permits of a tool with `concurrency = N`.
    pub(crate) limiter: Option<&'a Semaphore>,
    /// The executor's gate, while the tools it serves include an
    /// `exclusive` one (every call then takes a pass).
    pub(crate) exclusive: Option<&'a ExclusiveGate>,
    pub(crate) ctx: ErasedContext<'a>,
    /// Asked by [`Executor::preflight`](crate::Executor::preflight): hooks
    /// use nothing up (they may record a request), and no body runs.
    pub(crate) preflight: bool,
    /// Who follows the call for its event, when the executor has observers.
    pub(crate) watch: Option<&'a dyn Watch>,
    /// The idempotency key the caller sent, if any, and its claim.
    pub(crate) keyed: Option<&'a Keyed<'a>>,
}
