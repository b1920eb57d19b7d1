//! The ledger in memory: for tests, demos and single-process tools.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use super::ledger::{
    Approval, ApprovalLedger, Decision, LedgerError, NewApproval, Settlement, Status,
};
use crate::request::{ApprovalId, Digest};
use crate::util::BoxFuture;

/// An [`ApprovalLedger`] in memory. Everything in it is lost when the
/// process ends, so an approval consumed by a call that never settled
/// simply disappears with it: use a database ledger where that matters.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use serde_json::json;
/// use toolwright::approval::{ApprovalLedger, Decision, MemoryLedger, NewApproval, Status};
/// use toolwright::{ApprovalRequest, Digest};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let ledger = MemoryLedger::new();
/// let arguments = json!({"sku": "A-1", "qty": 2});
/// let digest = Digest::of("orders.place", &arguments);
/// let now = SystemTime::now();
/// let request = ApprovalRequest {
///     key: "orders.place".into(), name: "place_order".into(), arguments, digest,
///     id: None, requested_by: None,
/// };
/// let new = NewApproval {
///     request, requested_by: "alice".into(),
///     requested_at: now, expires_at: now + Duration::from_secs(600),
/// };
/// let recorded = ledger.record(new).await.unwrap();
/// assert_eq!(recorded.status, Status::Pending);
///
/// let decision = Decision { approve: true, by: "bob".into(), reason: None, at: now };
/// ledger.decide(recorded.id, decision).await.unwrap();
/// // Once, and only for the requester.
/// assert!(ledger.consume(&digest, "mallory", now).await.unwrap().is_none());
/// assert!(ledger.consume(&digest, "alice", now).await.unwrap().is_some());
/// assert!(ledger.consume(&digest, "alice", now).await.unwrap().is_none());
/// # }
/// ```
#[derive(Debug, Default)]
pub struct MemoryLedger {
    /// Every request, in id order (the id is its place plus one).
    approvals: Mutex<Vec<Approval>>,
}

impl MemoryLedger {
    /// An empty ledger.
    ///
    /// ```
    /// let ledger = toolwright::approval::MemoryLedger::new();
    /// ```
    pub fn new() -> Self {
        MemoryLedger::default()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Approval>> {
        // Every change below is a single assignment after its checks, so
        // a panic elsewhere never leaves a half-made change behind.
        self.approvals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

fn find(approvals: &mut [Approval], id: ApprovalId) -> Result<&mut Approval, LedgerError> {
    usize::try_from(id.0)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| approvals.get_mut(i))
        .ok_or(LedgerError::Unknown(id))
}

fn ready<'a, T: Send + 'a>(value: T) -> BoxFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl ApprovalLedger for MemoryLedger {
    fn record(&self, new: NewApproval) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        let mut approvals = self.lock();
        let waiting = approvals.iter().rev().find(|a| {
            a.status == Status::Pending
                && a.requested_by == new.requested_by
                && a.request.digest == new.request.digest
                && !a.is_expired(new.requested_at)
        });
        if let Some(waiting) = waiting {
            return ready(Ok(waiting.clone()));
        }
        let id = ApprovalId(approvals.len() as u64 + 1);
        let mut request = new.request;
        request.id = Some(id);
        request.requested_by = Some(new.requested_by.clone());
        let approval = Approval {
            id,
            request,
            requested_by: new.requested_by,
            requested_at: new.requested_at,
            expires_at: new.expires_at,
            status: Status::Pending,
            decided_by: None,
            decided_at: None,
            reason: None,
            consumed_at: None,
            settled_at: None,
            settlement: None,
        };
        approvals.push(approval.clone());
        ready(Ok(approval))
    }

    fn get(&self, id: ApprovalId) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        let mut approvals = self.lock();
        ready(find(&mut approvals, id).map(|a| a.clone()))
    }

    fn latest<'a>(
        &'a self,
        digest: &'a Digest,
        requested_by: &'a str,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>> {
        let approvals = self.lock();
        let latest = approvals
            .iter()
            .rev()
            .find(|a| a.request.digest == *digest && a.requested_by == requested_by);
        ready(Ok(latest.cloned()))
    }

    fn list(
        &self,
        status: Status,
        now: SystemTime,
    ) -> BoxFuture<'_, Result<Vec<Approval>, LedgerError>> {
        let approvals = self.lock();
        let listed = approvals
            .iter()
            .filter(|a| a.status == status && !a.is_expired(now))
            .cloned()
            .collect();
        ready(Ok(listed))
    }

    fn decide(
        &self,
        id: ApprovalId,
        decision: Decision,
    ) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        let mut approvals = self.lock();
        let decided = find(&mut approvals, id).and_then(|approval| {
            if approval.status != Status::Pending {
                return Err(LedgerError::NotPending {
                    id,
                    status: approval.status,
                });
            }
            if approval.is_expired(decision.at) {
                return Err(LedgerError::Expired(id));
            }
            approval.status = if decision.approve {
                Status::Approved
            } else {
                Status::Rejected
            };
            approval.decided_by = Some(decision.by);
            approval.decided_at = Some(decision.at);
            approval.reason = decision.reason;
            Ok(approval.clone())
        });
        ready(decided)
    }

    fn consume<'a>(
        &'a self,
        digest: &'a Digest,
        requested_by: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>> {
        let mut approvals = self.lock();
        let usable = approvals.iter_mut().find(|a| {
            a.status == Status::Approved
                && a.request.digest == *digest
                && a.requested_by == requested_by
                && !a.is_expired(now)
        });
        let consumed = usable.map(|approval| {
            approval.status = Status::Consumed;
            approval.consumed_at = Some(now);
            approval.clone()
        });
        ready(Ok(consumed))
    }

    fn settle(
        &self,
        id: ApprovalId,
        settlement: Settlement,
        at: SystemTime,
    ) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        let mut approvals = self.lock();
        let settled = find(&mut approvals, id).and_then(|approval| {
            if approval.status != Status::Consumed {
                return Err(LedgerError::NotConsumed {
                    id,
                    status: approval.status,
                });
            }
            approval.status = Status::Settled;
            approval.settled_at = Some(at);
            approval.settlement = Some(settlement);
            Ok(approval.clone())
        });
        ready(settled)
    }
}
