//! What an approval ledger stores and the operations every store offers.

use std::fmt;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::error::BoxError;
use crate::request::{ApprovalId, ApprovalRequest, Digest};
use crate::util::BoxFuture;

/// Where an approval stands.
///
/// ```text
/// pending ──approve──▶ approved ──consume──▶ consumed ──settle──▶ settled
///    └─────reject────▶ rejected
/// ```
///
/// A pending or approved request past its expiry can no longer be
/// approved or consumed. A consumed request that never settles (the
/// process died mid-call) is "outcome unknown": it is never run again by
/// itself, and [`Approvals::unsettled`](crate::approval::Approvals::unsettled) lists
/// it for a person to reconcile.
///
/// ```
/// use toolwright::approval::Status;
///
/// assert_eq!(serde_json::to_string(&Status::Pending).unwrap(), r#""pending""#);
/// assert_eq!("consumed".parse::<Status>().unwrap(), Status::Consumed);
/// assert_eq!(Status::Settled.as_str(), "settled");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Status {
    /// Waiting for a person's decision.
    Pending,
    /// Approved: the requester's identical call may run, once.
    Approved,
    /// Rejected: the identical call is refused until the request expires.
    Rejected,
    /// Used by a call whose outcome is not recorded (yet).
    Consumed,
    /// Used, and the call's outcome recorded.
    Settled,
}

impl Status {
    /// The status as it is stored and serialized.
    ///
    /// ```
    /// use toolwright::approval::Status;
    /// assert_eq!(Status::Rejected.as_str(), "rejected");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Rejected => "rejected",
            Status::Consumed => "consumed",
            Status::Settled => "settled",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text was not a status.
///
/// ```
/// use toolwright::approval::{Status, UnknownStatus};
/// assert_eq!("maybe".parse::<Status>(), Err(UnknownStatus("maybe".into())));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an approval status")]
pub struct UnknownStatus(pub String);

impl std::str::FromStr for Status {
    type Err = UnknownStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let all = [
            Status::Pending,
            Status::Approved,
            Status::Rejected,
            Status::Consumed,
            Status::Settled,
        ];
        named(all, Status::as_str, s)
    }
}

/// How the call that consumed an approval ended.
///
/// ```
/// use toolwright::approval::Settlement;
///
/// assert_eq!("failed".parse::<Settlement>().unwrap(), Settlement::Failed);
/// assert_eq!(serde_json::to_string(&Settlement::Unknown).unwrap(), r#""unknown""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Settlement {
    /// The call returned its result (and its scope committed).
    Succeeded,
    /// The call failed before it could have changed anything it commits.
    Failed,
    /// Nobody knows: the call timed out or panicked mid-way, or a person
    /// reconciling an unsettled approval could not tell.
    Unknown,
}

impl Settlement {
    /// The settlement as it is stored and serialized.
    ///
    /// ```
    /// use toolwright::approval::Settlement;
    /// assert_eq!(Settlement::Succeeded.as_str(), "succeeded");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Settlement::Succeeded => "succeeded",
            Settlement::Failed => "failed",
            Settlement::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Settlement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Settlement {
    type Err = UnknownStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let all = [
            Settlement::Succeeded,
            Settlement::Failed,
            Settlement::Unknown,
        ];
        named(all, Settlement::as_str, s)
    }
}

/// The one of `all` whose stored name is `s`.
fn named<T: Copy, const N: usize>(
    all: [T; N],
    name: fn(T) -> &'static str,
    s: &str,
) -> Result<T, UnknownStatus> {
    all.into_iter()
        .find(|&one| name(one) == s)
        .ok_or_else(|| UnknownStatus(s.to_owned()))
}

/// One request in a ledger, with everything that happened to it.
///
/// Times serialize as milliseconds since the Unix epoch.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use toolwright::approval::{Approval, Status};
/// # use serde_json::json;
/// # use toolwright::{approval::ApprovalId, approval::{ApprovalRequest, Digest}};
/// # let arguments = json!({"sku": "A-1"});
/// # let approval = Approval {
/// #     id: ApprovalId(1),
/// #     request: ApprovalRequest {
/// #         key: "orders.place".into(), name: "place_order".into(),
/// #         digest: Digest::of("orders.place", &arguments), arguments,
/// #         id: Some(ApprovalId(1)), requested_by: Some("alice".into()),
/// #     },
/// #     requested_by: "alice".into(),
/// #     requested_at: SystemTime::UNIX_EPOCH,
/// #     expires_at: SystemTime::UNIX_EPOCH + Duration::from_secs(60),
/// #     status: Status::Pending,
/// #     decided_by: None, decided_at: None, reason: None,
/// #     consumed_at: None, settled_at: None, settlement: None,
/// # };
/// let late = SystemTime::UNIX_EPOCH + Duration::from_secs(61);
/// assert_eq!(approval.status, Status::Pending);
/// assert!(approval.is_expired(late));
/// let json = serde_json::to_value(&approval).unwrap();
/// assert_eq!(json["expires_at"], 60_000);
/// assert_eq!(json["request"]["key"], "orders.place");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    /// The ledger's id.
    pub id: ApprovalId,
    /// What a person decides on: tool, arguments, digest (with `id` and
    /// `requested_by` filled in).
    pub request: ApprovalRequest,
    /// The actor who asked; only they can consume the approval.
    pub requested_by: String,
    /// When it was asked for.
    #[serde(with = "crate::util::time::unix_ms")]
    pub requested_at: SystemTime,
    /// After this, it can be neither approved nor consumed.
    #[serde(with = "crate::util::time::unix_ms")]
    pub expires_at: SystemTime,
    /// Where it stands.
    pub status: Status,
    /// Who approved or rejected it.
    pub decided_by: Option<String>,
    /// When.
    #[serde(with = "crate::util::time::unix_ms::option")]
    pub decided_at: Option<SystemTime>,
    /// Why, in the decider's words.
    pub reason: Option<String>,
    /// When a call used it.
    #[serde(with = "crate::util::time::unix_ms::option")]
    pub consumed_at: Option<SystemTime>,
    /// When that call's outcome was recorded.
    #[serde(with = "crate::util::time::unix_ms::option")]
    pub settled_at: Option<SystemTime>,
    /// How that call ended.
    pub settlement: Option<Settlement>,
}

impl Approval {
    /// Whether it is pending or approved and its time is up.
    ///
    /// ```
    /// # use std::time::{Duration, SystemTime};
    /// # use serde_json::json;
    /// # use toolwright::approval::{Approval, ApprovalId, Status};
    /// # use toolwright::{approval::{ApprovalRequest, Digest}};
    /// # let arguments = json!({});
    /// # let mut approval = Approval {
    /// #     id: ApprovalId(1),
    /// #     request: ApprovalRequest { key: "a.b".into(), name: "b".into(),
    /// #         digest: Digest::of("a.b", &arguments), arguments, id: None, requested_by: None },
    /// #     requested_by: "alice".into(), requested_at: SystemTime::UNIX_EPOCH,
    /// #     expires_at: SystemTime::UNIX_EPOCH + Duration::from_secs(60),
    /// #     status: Status::Approved, decided_by: Some("bob".into()), decided_at: None,
    /// #     reason: None, consumed_at: None, settled_at: None, settlement: None,
    /// # };
    /// let late = SystemTime::UNIX_EPOCH + Duration::from_secs(60);
    /// assert!(approval.is_expired(late));
    /// approval.status = Status::Consumed;
    /// // What was used is history, not expired.
    /// assert!(!approval.is_expired(late));
    /// ```
    pub fn is_expired(&self, now: SystemTime) -> bool {
        matches!(self.status, Status::Pending | Status::Approved) && self.expires_at <= now
    }
}

/// A request to record: what [`ApprovalLedger::record`] stores.
#[derive(Debug, Clone, PartialEq)]
pub struct NewApproval {
    /// The tool, the canonical validated arguments and the digest.
    pub request: ApprovalRequest,
    /// The actor who asked.
    pub requested_by: String,
    /// When.
    pub requested_at: SystemTime,
    /// When it lapses.
    pub expires_at: SystemTime,
}

/// A person's decision on a pending request: what
/// [`ApprovalLedger::decide`] records. (A [`Policy`](crate::registry::Policy)'s
/// answer is a [`Decision`](crate::registry::Decision); this is a person's.)
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    /// Approve (`true`) or reject.
    pub approve: bool,
    /// Who decides.
    pub by: String,
    /// Why, if they said.
    pub reason: Option<String>,
    /// When.
    pub at: SystemTime,
}

/// Why a ledger operation did not happen. Nothing runs on any of them.
///
/// ```
/// use toolwright::approval::{ApprovalId, LedgerError, Status};
///
/// let error = LedgerError::NotPending { id: ApprovalId(7), status: Status::Rejected };
/// assert_eq!(error.to_string(), "approval 7 is rejected, not pending");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// No request has this id.
    #[error("no approval request has id {0}")]
    Unknown(ApprovalId),
    /// The request lapsed before it was decided or used.
    #[error("approval {0} has expired")]
    Expired(ApprovalId),
    /// Only a pending request can be decided.
    #[error("approval {id} is {status}, not pending")]
    NotPending {
        /// The request.
        id: ApprovalId,
        /// Where it stands.
        status: Status,
    },
    /// Four eyes: the requester cannot decide their own request.
    #[error("approval {id} was requested by `{by}`, who cannot also decide it")]
    OwnRequest {
        /// The request.
        id: ApprovalId,
        /// The requester, who tried to decide.
        by: String,
    },
    /// The decider lacks the role the approvals require.
    #[error("`{by}` cannot decide approvals: that takes the role `{role}`")]
    NotAnApprover {
        /// Who tried.
        by: String,
        /// The role it takes.
        role: String,
    },
    /// Only a consumed approval can be settled.
    #[error("approval {id} is {status}, not consumed")]
    NotConsumed {
        /// The request.
        id: ApprovalId,
        /// Where it stands.
        status: Status,
    },
    /// The requester already has as many requests waiting for a decision
    /// as the approvals allow
    /// ([`ApprovalsBuilder::max_pending`](crate::approval::ApprovalsBuilder::max_pending)):
    /// this one was not recorded. A call refused so answers
    /// [`CallError::TooManyPending`](crate::CallError::TooManyPending).
    #[error(
        "`{requested_by}` has {pending} approval requests waiting for a decision, the most allowed: no more until some are decided or expire"
    )]
    TooManyPending {
        /// The requester.
        requested_by: String,
        /// How many of their requests wait.
        pending: usize,
    },
    /// The executor has no ledger to ask (see
    /// [`ExecutorBuilder::approvals`](crate::executor::ExecutorBuilder::approvals)).
    #[error("no approval ledger: build the executor with `ExecutorBuilder::approvals`")]
    NoLedger,
    /// The store could not be reached or answered with an error: the
    /// call is refused, never taken as approved.
    #[error("the approval ledger is unavailable")]
    Unavailable(#[source] BoxError),
}

impl LedgerError {
    /// An error from the store underneath (a database's).
    ///
    /// ```
    /// use toolwright::approval::LedgerError;
    /// let error = LedgerError::unavailable(std::io::Error::other("connection refused"));
    /// assert_eq!(std::error::Error::source(&error).unwrap().to_string(), "connection refused");
    /// ```
    pub fn unavailable(source: impl Into<BoxError>) -> Self {
        LedgerError::Unavailable(source.into())
    }
}

/// Where approvals are kept: requests, decisions, single-use consumption
/// and the outcome of the call that used each one.
///
/// Three stores come with toolwright: [`MemoryLedger`](crate::approval::MemoryLedger),
/// and, behind the `sqlite` and `postgres` features, `SqliteLedger` and
/// `PostgresLedger`. Applications use a ledger through
/// [`Approvals`](crate::approval::Approvals), which adds the rules (time to live,
/// four eyes, the approver's role); a store only has to make each
/// operation atomic.
///
/// Every method returns a boxed future, so that a ledger can be shared as
/// `Arc<dyn ApprovalLedger>`. A store that cannot answer returns
/// [`LedgerError::Unavailable`].
pub trait ApprovalLedger: Send + Sync + 'static {
    /// Records a request and returns it with its id. If the same actor
    /// already has a pending, unexpired request for the same digest, that
    /// request is returned instead of a new one.
    fn record(&self, new: NewApproval) -> BoxFuture<'_, Result<Approval, LedgerError>>;

    /// The request `id`, or [`LedgerError::Unknown`].
    fn get(&self, id: ApprovalId) -> BoxFuture<'_, Result<Approval, LedgerError>>;

    /// The newest request of `requested_by` for `digest`, if any.
    fn latest<'a>(
        &'a self,
        digest: &'a Digest,
        requested_by: &'a str,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>>;

    /// The requests with `status`, oldest first. Pending and approved
    /// requests that expired by `now` are left out.
    fn list(
        &self,
        status: Status,
        now: SystemTime,
    ) -> BoxFuture<'_, Result<Vec<Approval>, LedgerError>>;

    /// Up to `limit` of the requests with `status` whose id comes after
    /// `after` (all of them for `None`), oldest first, leaving out what
    /// [`list`](Self::list) leaves out: a page of it, for a screen that
    /// must not read thousands of requests at once.
    ///
    /// The default pages through [`list`](Self::list); the stores that
    /// come with toolwright read only the page.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use serde_json::json;
    /// use toolwright::approval::{ApprovalLedger, MemoryLedger, NewApproval, Status};
    /// use toolwright::{approval::{ApprovalRequest, Digest}};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let ledger = MemoryLedger::new();
    /// let now = SystemTime::now();
    /// for sku in ["A-1", "A-2", "A-3"] {
    ///     let arguments = json!({"sku": sku});
    ///     let request = ApprovalRequest {
    ///         key: "orders.place".into(), name: "place_order".into(),
    ///         digest: Digest::of("orders.place", &arguments), arguments,
    ///         id: None, requested_by: None,
    ///     };
    ///     ledger.record(NewApproval {
    ///         request, requested_by: "alice".into(),
    ///         requested_at: now, expires_at: now + Duration::from_secs(600),
    ///     }).await.unwrap();
    /// }
    /// let first = ledger.list_after(Status::Pending, now, None, 2).await.unwrap();
    /// assert_eq!(first.len(), 2);
    /// let rest = ledger.list_after(Status::Pending, now, Some(first[1].id), 2).await.unwrap();
    /// assert_eq!(rest.len(), 1);
    /// assert_eq!(rest[0].request.arguments["sku"], "A-3");
    /// # }
    /// ```
    fn list_after(
        &self,
        status: Status,
        now: SystemTime,
        after: Option<ApprovalId>,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<Approval>, LedgerError>> {
        Box::pin(async move {
            let listed = self.list(status, now).await?;
            Ok(listed
                .into_iter()
                .filter(|a| after.is_none_or(|after| a.id > after))
                .take(limit)
                .collect())
        })
    }

    /// How many requests of `requested_by` wait for a decision at `now`
    /// (pending, unexpired): what [`Approvals`](crate::approval::Approvals) holds
    /// against its [cap](crate::approval::ApprovalsBuilder::max_pending)
    /// before recording another.
    ///
    /// The default counts [`list`](Self::list)'s; the stores that come
    /// with toolwright count in place.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use serde_json::json;
    /// use toolwright::approval::{ApprovalLedger, MemoryLedger, NewApproval};
    /// use toolwright::{approval::{ApprovalRequest, Digest}};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let ledger = MemoryLedger::new();
    /// let now = SystemTime::now();
    /// let arguments = json!({"sku": "A-1"});
    /// let request = ApprovalRequest {
    ///     key: "orders.place".into(), name: "place_order".into(),
    ///     digest: Digest::of("orders.place", &arguments), arguments,
    ///     id: None, requested_by: None,
    /// };
    /// ledger.record(NewApproval {
    ///     request, requested_by: "alice".into(),
    ///     requested_at: now, expires_at: now + Duration::from_secs(600),
    /// }).await.unwrap();
    /// assert_eq!(ledger.pending_count("alice", now).await.unwrap(), 1);
    /// assert_eq!(ledger.pending_count("bob", now).await.unwrap(), 0);
    /// // Expired requests wait for nothing.
    /// let later = now + Duration::from_secs(601);
    /// assert_eq!(ledger.pending_count("alice", later).await.unwrap(), 0);
    /// # }
    /// ```
    fn pending_count<'a>(
        &'a self,
        requested_by: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<usize, LedgerError>> {
        Box::pin(async move {
            let pending = self.list(Status::Pending, now).await?;
            Ok(pending
                .iter()
                .filter(|a| a.requested_by == requested_by)
                .count())
        })
    }

    /// Approves or rejects a pending request, atomically: a request that
    /// is no longer pending is [`LedgerError::NotPending`], one past its
    /// expiry [`LedgerError::Expired`].
    fn decide(
        &self,
        id: ApprovalId,
        decision: Review,
    ) -> BoxFuture<'_, Result<Approval, LedgerError>>;

    /// Uses an approved, unexpired approval of `requested_by` for `digest`,
    /// atomically and once: of any number of concurrent calls, one gets
    /// it (marked consumed at `now`), the others `None`.
    fn consume<'a>(
        &'a self,
        digest: &'a Digest,
        requested_by: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>>;

    /// Records how the call that consumed `id` ended. Only a consumed
    /// approval can be settled ([`LedgerError::NotConsumed`]).
    fn settle(
        &self,
        id: ApprovalId,
        settlement: Settlement,
        at: SystemTime,
    ) -> BoxFuture<'_, Result<Approval, LedgerError>>;
}
