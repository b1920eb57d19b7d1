#![doc = include_str!("../../docs/audit.md")]

#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;

use std::sync::Arc;
use std::time::SystemTime;

use serde::Serialize;
use serde_json::Value;

use crate::approval::{Approval, DecisionTrail, LedgerError, Review, Status};
use crate::effect::Effect;
pub use crate::error::AuditError;
use crate::observe::{CallEvent, CallTrail};
use crate::request::ApprovalId;
use crate::util::BoxFuture;

#[cfg(feature = "postgres")]
pub use sql::PostgresAudit;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sql::SqlAudit;
#[cfg(feature = "sqlite")]
pub use sql::SqliteAudit;

/// A durable record of what changed state: every call of a `write` or
/// `destructive` tool and every approval decision, written before the
/// call's or the decision's effect is committed; and each change an
/// operator makes to the registry through the admin API, written once it
/// is made.
///
/// `SqliteAudit` and `PostgresAudit` (features `sqlite`, `postgres`; one
/// type, `SqlAudit`, on either database) keep the records in a table; an application may write its own, to a
/// store of its choice. `record` must return `Ok` only once the record is
/// durable: the executor commits the call (its scope's finalizers) only
/// after that, and fails the call with
/// [`CallError::AuditFailed`](crate::CallError::AuditFailed) when it returns
/// `Err`.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use toolwright::audit::{AuditError, AuditRecord, AuditTrail};
/// use toolwright::executor::BoxFuture;
///
/// /// Records kept in memory (a test double; nothing durable).
/// #[derive(Default, Clone)]
/// struct Kept(Arc<Mutex<Vec<AuditRecord>>>);
///
/// impl AuditTrail for Kept {
///     fn record<'a>(&'a self, record: &'a AuditRecord) -> BoxFuture<'a, Result<(), AuditError>> {
///         self.0.lock().unwrap().push(record.clone());
///         Box::pin(async { Ok(()) })
///     }
/// }
/// # let _ = Kept::default();
/// ```
pub trait AuditTrail: Send + Sync + 'static {
    /// Writes `record` durably, or says why it could not.
    fn record<'a>(&'a self, record: &'a AuditRecord) -> BoxFuture<'a, Result<(), AuditError>>;
}

/// One entry of an [`AuditTrail`]. Arguments in it are masked as in call
/// events: every property whose schema says `"writeOnly": true` reads
/// [`REDACTED`](crate::observe::REDACTED); the digest still binds the
/// real values.
///
/// ```
/// use toolwright::audit::AuditRecord;
///
/// fn tool_of(record: &AuditRecord) -> Option<&str> {
///     match record {
///         AuditRecord::Call(call) => call.event.key.as_deref(),
///         AuditRecord::Decision(decision) => Some(&decision.approval.request.key),
///         _ => None,
///     }
/// }
/// # let _ = tool_of;
/// ```
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AuditRecord {
    /// A call of a `write` or `destructive` tool ended, or was refused.
    Call(CallRecord),
    /// A person approved or rejected a request: recorded before the
    /// ledger is told, so that a decision the trail could not record is
    /// not made.
    Decision(DecisionRecord),
    /// The ledger refused a decision the trail had recorded already (it
    /// had been decided or had expired meanwhile): the decision was not made.
    DecisionRefused(DecisionRefused),
    /// An operator changed the registry's state through the admin API:
    /// restored a state, or switched a tool off or on.
    Registry(RegistryRecord),
}

/// A call of a `write` or `destructive` tool, as it ended.
///
/// The event is the call's [`CallEvent`] (its `id` is the event's, so the
/// trail and the [`ExecutionLog`](crate::observe::ExecutionLog) agree),
/// with the arguments masked. A call whose body ran is recorded before its
/// scope closes; when a finalizer then fails (a commit), a second record
/// with the same id says
/// [`OutcomeClass::FailedCommit`](crate::observe::OutcomeClass::FailedCommit):
/// the last record of an id is how the call ended.
///
/// ```
/// use toolwright::audit::CallRecord;
/// use toolwright::observe::OutcomeClass;
///
/// fn succeeded(record: &CallRecord) -> bool {
///     record.event.outcome == OutcomeClass::Ok
/// }
/// # let _ = succeeded;
/// ```
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct CallRecord {
    /// The tool's effect: `write` or `destructive`.
    pub effect: Effect,
    /// The call, as observers are told of it.
    #[serde(flatten)]
    pub event: CallEvent,
}

/// A person's decision on an approval request, before the ledger makes it.
///
/// ```
/// use toolwright::audit::DecisionRecord;
///
/// fn who(record: &DecisionRecord) -> Option<&str> {
///     record.approval.decided_by.as_deref()
/// }
/// # let _ = who;
/// ```
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct DecisionRecord {
    /// The request as it will read once decided: its status (`approved`
    /// or `rejected`), who decided, when and why, and the request's tool,
    /// masked arguments, digest and requester.
    pub approval: Approval,
}

/// A decision the ledger refused after the trail recorded it.
///
/// ```
/// use toolwright::audit::DecisionRefused;
///
/// fn why(refused: &DecisionRefused) -> &str {
///     &refused.error
/// }
/// # let _ = why;
/// ```
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct DecisionRefused {
    /// The request.
    pub id: ApprovalId,
    /// Who tried to decide it.
    pub by: String,
    /// When.
    #[serde(serialize_with = "crate::util::time::unix_ms::serialize")]
    pub at: SystemTime,
    /// The ledger's error.
    pub error: String,
}

/// An operator's change to the registry's state, made through the admin
/// API, recorded once it is made: who, when, what and which tools.
///
/// A restore names the operator who sent the state, never a name the
/// state claims (that stays on each tool as
/// [`originally_by`](crate::disabled::Disabled::originally_by)).
///
/// ```
/// use toolwright::audit::{AuditRecord, RegistryAction};
///
/// /// Who restored a state, for a record that is a restore.
/// fn restored_by(record: &AuditRecord) -> Option<&str> {
///     match record {
///         AuditRecord::Registry(change) if change.action == RegistryAction::Restored => {
///             Some(&change.by)
///         }
///         _ => None,
///     }
/// }
/// # let _ = restored_by;
/// ```
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct RegistryRecord {
    /// What the operator did.
    pub action: RegistryAction,
    /// The operator, as the admin API authenticated them.
    pub by: String,
    /// When.
    #[serde(serialize_with = "crate::util::time::unix_ms::serialize")]
    pub at: SystemTime,
    /// The keys of the tools whose state changed (none when every tool
    /// already had the state asked for).
    pub keys: Vec<String>,
    /// The registry's generation after the change.
    pub generation: u64,
    /// Why, for a tool switched off.
    pub reason: Option<String>,
}

/// What an operator did to the registry, in a [`RegistryRecord`].
///
/// ```
/// use toolwright::audit::RegistryAction;
///
/// assert_eq!(RegistryAction::Restored.as_str(), "restored");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RegistryAction {
    /// Restored a [`RegistryState`](crate::registry::RegistryState)
    /// (`PUT api/state`).
    Restored,
    /// Switched a tool off, with a reason.
    Disabled,
    /// Switched a tool on.
    Enabled,
}

impl RegistryAction {
    /// The action's name, as the trail stores it.
    ///
    /// ```
    /// use toolwright::audit::RegistryAction;
    ///
    /// assert_eq!(RegistryAction::Disabled.as_str(), "disabled");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            RegistryAction::Restored => "restored",
            RegistryAction::Disabled => "disabled",
            RegistryAction::Enabled => "enabled",
        }
    }
}

/// The executor's trail, in its services.
#[derive(Clone)]
pub(crate) struct Trail(pub(crate) Arc<dyn AuditTrail>);

impl std::fmt::Debug for Trail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditTrail")
    }
}

impl CallTrail for Trail {
    fn record(&self, effect: Effect, event: CallEvent) -> BoxFuture<'_, Result<(), AuditError>> {
        Box::pin(async move {
            let record = AuditRecord::Call(CallRecord { effect, event });
            self.0.record(&record).await
        })
    }

    /// In the background: nothing ran, or nothing is left to fail, so a
    /// record that fails is logged.
    #[cold]
    #[inline(never)]
    fn record_detached(&self, effect: Effect, event: CallEvent) {
        let record = AuditRecord::Call(CallRecord { effect, event });
        let trail = self.0.clone();
        let write = async move {
            if let Err(error) = trail.record(&record).await {
                tracing::error!(error = %error, cause = %error.0, "audit trail: a refused or cancelled call could not be recorded");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(write)),
            Err(_) => {
                tracing::error!(
                    "audit trail: a refused or cancelled call could not be recorded outside a tokio runtime"
                );
            }
        }
    }
}

/// Masks the arguments of a request for the tool of a key and name.
pub(crate) type Mask = Box<dyn Fn(&str, &str, &Value) -> Value + Send + Sync>;

/// What records an [`Approvals`](crate::approval::Approvals)' decisions: a trail,
/// and how to mask a request's arguments (by its tool's schema).
pub(crate) struct DecisionAudit {
    pub(crate) trail: Arc<dyn AuditTrail>,
    pub(crate) mask: Mask,
}

impl DecisionAudit {
    /// Records `review` of `approval` before the ledger makes it:
    /// [`LedgerError::Unavailable`] when the trail could not.
    async fn record(&self, approval: &Approval, review: &Review) -> Result<(), LedgerError> {
        let mut approval = approval.clone();
        approval.request.arguments = (self.mask)(
            &approval.request.key,
            &approval.request.name,
            &approval.request.arguments,
        );
        approval.status = if review.approve {
            Status::Approved
        } else {
            Status::Rejected
        };
        approval.decided_by = Some(review.by.clone());
        approval.decided_at = Some(review.at);
        approval.reason.clone_from(&review.reason);
        let record = AuditRecord::Decision(DecisionRecord { approval });
        self.trail.record(&record).await.map_err(|error| {
            tracing::error!(error = %error, cause = %error.0, "audit trail: a decision could not be recorded; it is not made");
            LedgerError::unavailable(error)
        })
    }

    /// Records that the ledger refused a decision recorded before; a
    /// failure is logged (the decision was not made either way).
    async fn record_refused(&self, id: ApprovalId, by: &str, error: &LedgerError) {
        let record = AuditRecord::DecisionRefused(DecisionRefused {
            id,
            by: by.to_owned(),
            at: SystemTime::now(),
            error: error.to_string(),
        });
        if let Err(error) = self.trail.record(&record).await {
            tracing::error!(approval = id.0, error = %error, cause = %error.0, "audit trail: a refused decision could not be recorded");
        }
    }
}

impl DecisionTrail for DecisionAudit {
    fn before<'a>(
        &'a self,
        approval: &'a Approval,
        review: &'a Review,
    ) -> BoxFuture<'a, Result<(), LedgerError>> {
        Box::pin(self.record(approval, review))
    }

    fn refused<'a>(
        &'a self,
        id: ApprovalId,
        by: &'a str,
        error: &'a LedgerError,
    ) -> BoxFuture<'a, ()> {
        Box::pin(self.record_refused(id, by, error))
    }
}
