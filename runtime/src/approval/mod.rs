//! Approvals end to end: a ledger of requests and decisions, the rules
//! they meet, and the hook that consumes an approval for exactly one call.
//!
//! The flow, for a `write` or `destructive` tool whose `approve` hook is
//! [`Principal::approval_ledger`](crate::Principal::approval_ledger):
//!
//! 1. **Ask.** A call with no approval fails with
//!    [`CallError::ApprovalRequired`](crate::CallError::ApprovalRequired);
//!    the request (tool, canonical arguments, digest, requester) is in the
//!    ledger, and the error carries its id.
//!    [`Executor::preflight`](crate::Executor::preflight) asks the same
//!    without calling.
//! 2. **Decide.** A person lists [`Approvals::pending`](crate::approval::Approvals::pending)
//!    and approves or rejects one; by default not the requester (four eyes).
//! 3. **Resume.** The requester's identical call runs, once: the approval is
//!    consumed atomically, for that actor only, before it expires.
//! 4. **Audit.** The call settles the approval with how it ended. One that
//!    never settled (the process died mid-call) is listed by
//!    [`Approvals::unsettled`](crate::approval::Approvals::unsettled) and never
//!    re-runs by itself.
//!
//! Ledgers: [`MemoryLedger`] here; `SqliteLedger` and `PostgresLedger`
//! (one type, `SqlLedger`, on either database) behind the `sqlite` and
//! `postgres` features (sqlx 0.8 pools).

mod approvals;
mod ledger;
mod memory;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;

pub use crate::request::{ApprovalId, ApprovalRequest, Digest, ParseDigestError};
pub(crate) use approvals::Admission;
pub use approvals::{Approvals, ApprovalsBuilder, DEFAULT_APPROVAL_TTL, DEFAULT_MAX_PENDING};
pub(crate) use approvals::{DecisionTap, DecisionTrail};
pub use ledger::{
    Approval, ApprovalLedger, LedgerError, NewApproval, Review, Settlement, Status, UnknownStatus,
};
pub use memory::MemoryLedger;
#[cfg(feature = "postgres")]
pub use sql::PostgresLedger;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sql::SqlLedger;
#[cfg(feature = "sqlite")]
pub use sql::SqliteLedger;
