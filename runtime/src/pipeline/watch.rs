//! What a watched call finds out on its way, for the call's event: the
//! policy's ruling, the arguments as validated with their digest, and the
//! approval it consumed. An unwatched call (no observer) carries `None`
//! and pays a branch where a watched one writes.

use std::sync::OnceLock;

use serde_json::Value;

use super::{Decision, Ruling};
use crate::error::CallError;
use crate::observe::CallEvent;
use crate::request::{ApprovalId, Digest};

/// Someone following one call: the executor's recording of it, when the
/// executor has observers.
pub(crate) trait Watch: Sync {
    /// Where the steps leave what they find.
    fn findings(&self) -> &Findings;

    /// The call ended: `Err` with its error, `Ok` when it succeeded, or
    /// `None` when it was dropped before it ended (cancelled).
    fn ended(&self, result: Option<Result<(), &CallError>>);

    /// The call's event as it would read had it ended with `result`, for
    /// the audit trail (which records it before the call's scope closes).
    fn event(&self, result: Option<Result<(), &CallError>>) -> CallEvent;
}

/// What the steps of one call found; each is set at most once.
#[derive(Default)]
pub(crate) struct Findings {
    /// The policy's ruling and the rule that made it (`None`: the fallback).
    pub(crate) ruling: OnceLock<(Decision, Option<String>)>,
    /// The arguments as validated (defaults applied) and their digest; the
    /// raw arguments, without a digest, when they did not validate.
    pub(crate) arguments: OnceLock<(Value, Option<Digest>)>,
    /// The ledger approval the call consumed.
    pub(crate) consumed: OnceLock<ApprovalId>,
    /// Set when the steps recorded the call in the audit trail (after its
    /// body); a call that ends without it is recorded as it ends.
    pub(crate) audited: OnceLock<()>,
}

impl Findings {
    pub(crate) fn ruled(&self, ruling: Ruling<'_>) {
        _ = self
            .ruling
            .set((ruling.decision.clone(), ruling.rule.map(str::to_owned)));
    }

    pub(crate) fn validated(&self, arguments: Value, digest: Digest) {
        _ = self.arguments.set((arguments, Some(digest)));
    }

    pub(crate) fn unreadable(&self, arguments: Value) {
        _ = self.arguments.set((arguments, None));
    }
}
