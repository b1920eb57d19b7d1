//! What a watched call finds out on its way, for the call's event: the
//! policy's ruling, the arguments as validated with their digest, and the
//! approval it consumed. An unwatched call (no observer) carries `None`
//! and pays a branch where a watched one writes.

use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use serde_json::Value;

use super::Ruling;
use crate::decision::Decision;
use crate::error::CallError;
use crate::request::{ApprovalId, Digest};
use crate::secret::Secrets;
use crate::util::BoxFuture;

/// Someone following one call: the executor's recording of it, when the
/// executor has observers.
pub(crate) trait Watch: Sync {
    /// The call's number, which its span carries too.
    fn id(&self) -> u64;

    /// Where the steps leave what they find.
    fn findings(&self) -> &Findings;

    /// The call ended: `Err` with its error, `Ok` when it succeeded, or
    /// `None` when it was dropped before it ended (cancelled).
    fn ended(&self, result: Option<Result<(), &CallError>>);

    /// Whether the call is recorded in an audit trail.
    fn audits(&self) -> bool;

    /// Records the call in the audit trail as it would read had it ended
    /// with `result` (before its scope closes), its `secrets` scrubbed:
    /// [`CallError::AuditFailed`] when the trail could not.
    fn audit<'a>(
        &'a self,
        secrets: &'a Secrets,
        result: Result<(), &'a CallError>,
    ) -> BoxFuture<'a, Result<(), CallError>>;
}

/// What the steps of one call found; each is set at most once.
#[derive(Default)]
pub(crate) struct Findings {
    /// The policy's ruling and the rule that made it (`None`: the fallback).
    pub(crate) ruling: OnceLock<(Decision, Option<String>)>,
    /// The arguments as the call's event shows them, taken when it ends.
    pub(crate) arguments: Mutex<Option<Shown>>,
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

    /// The arguments validated (defaults applied), with their digest when
    /// the call computed it; otherwise the event's builder does, off the
    /// call's thread.
    pub(crate) fn validated(&self, arguments: Value, digest: Option<Digest>) {
        self.show(Shown::Validated { arguments, digest });
    }

    /// The arguments as the caller sent them, valid: `reread` gives them
    /// as validated, off the call's thread (see [`Shown::Sent`]).
    pub(crate) fn sent(&self, arguments: Value, reread: Reread) {
        self.show(Shown::Sent { arguments, reread });
    }

    /// The arguments as the caller sent them, when they did not validate.
    pub(crate) fn unreadable(&self, arguments: Value) {
        self.show(Shown::Unreadable(arguments));
    }

    fn show(&self, shown: Shown) {
        let mut arguments = self
            .arguments
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        arguments.get_or_insert(shown);
    }

    /// The arguments found, as they are now.
    pub(crate) fn shown(&self) -> MutexGuard<'_, Option<Shown>> {
        self.arguments
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The arguments found, with their real values (secrets included).
    pub(crate) fn real_arguments(&self) -> Option<Value> {
        match &*self.shown() {
            Some(Shown::Validated { arguments, .. } | Shown::Unreadable(arguments)) => {
                Some(arguments.clone())
            }
            Some(Shown::Sent { arguments, reread }) => Some(reread(arguments)),
            None => None,
        }
    }

    /// The arguments found, taken (each call's event takes them once).
    pub(crate) fn take_arguments(&self) -> Option<Shown> {
        self.arguments
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// A call's arguments, for its event.
#[derive(Clone)]
pub(crate) enum Shown {
    /// As validated, defaults applied; the digest when it was computed.
    Validated {
        arguments: Value,
        digest: Option<Digest>,
    },
    /// As the caller sent them, valid, for `reread` to give them as
    /// validated: a call that builds no invocation hands over the JSON it
    /// was given rather than serialize its arguments again.
    Sent { arguments: Value, reread: Reread },
    /// As sent, when they did not validate: no digest binds them.
    Unreadable(Value),
}

impl Shown {
    /// The arguments as the event shows them (before redaction), and
    /// their digest as tool `key`'s when they validated.
    pub(crate) fn event_parts(&self, key: &str) -> (Value, Option<Digest>) {
        match self {
            Shown::Validated { arguments, digest } => {
                let digest = digest.unwrap_or_else(|| Digest::of(key, arguments));
                (arguments.clone(), Some(digest))
            }
            Shown::Sent { arguments, reread } => {
                let arguments = reread(arguments);
                let digest = Digest::of(key, &arguments);
                (arguments, Some(digest))
            }
            Shown::Unreadable(arguments) => (arguments.clone(), None),
        }
    }
}

/// The validated arguments of one tool's call, as JSON, from valid JSON
/// arguments its caller sent.
pub(crate) type Reread = fn(&Value) -> Value;
