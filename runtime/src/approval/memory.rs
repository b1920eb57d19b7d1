//! The ledger in memory: for tests, demos and single-process tools.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use super::ledger::{
    Approval, ApprovalLedger, LedgerError, NewApproval, Review, Settlement, Status,
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
/// use toolwright::approval::{ApprovalLedger, Review, MemoryLedger, NewApproval, Status};
/// use toolwright::{approval::{ApprovalRequest, Digest}};
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
/// let decision = Review { approve: true, by: "bob".into(), reason: None, at: now };
/// ledger.decide(recorded.id, decision).await.unwrap();
/// // Once, and only for the requester.
/// assert!(ledger.consume(&digest, "mallory", now).await.unwrap().is_none());
/// assert!(ledger.consume(&digest, "alice", now).await.unwrap().is_some());
/// assert!(ledger.consume(&digest, "alice", now).await.unwrap().is_none());
/// # }
/// ```
#[derive(Debug, Default)]
pub struct MemoryLedger {
    inner: Mutex<Requests>,
}

/// Every request, and where to find one call's requests quickly.
#[derive(Debug, Default)]
struct Requests {
    /// In id order (the id is the place plus one).
    all: Vec<Approval>,
    /// The places of the requests for each digest, oldest first: a call's
    /// requests are found without reading the history.
    by_digest: HashMap<Digest, Vec<usize>>,
}

impl Requests {
    /// The places of `requested_by`'s requests for `digest`, newest first.
    fn of_call<'a>(
        &'a self,
        digest: &Digest,
        requested_by: &'a str,
    ) -> impl Iterator<Item = usize> + 'a {
        self.by_digest
            .get(digest)
            .into_iter()
            .flat_map(|places| places.iter().rev().copied())
            .filter(move |&place| self.all[place].requested_by == requested_by)
    }
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

    fn lock(&self) -> MutexGuard<'_, Requests> {
        // Every change below is made after its checks, with nothing that
        // can panic in between, so a poisoned lock holds whole requests.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
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
        let mut requests = self.lock();
        let waiting = requests
            .of_call(&new.request.digest, &new.requested_by)
            .map(|place| &requests.all[place])
            .find(|a| a.status == Status::Pending && !a.is_expired(new.requested_at));
        if let Some(waiting) = waiting {
            return ready(Ok(waiting.clone()));
        }
        let place = requests.all.len();
        let id = ApprovalId(place as u64 + 1);
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
        requests
            .by_digest
            .entry(approval.request.digest)
            .or_default()
            .push(place);
        requests.all.push(approval.clone());
        ready(Ok(approval))
    }

    fn get(&self, id: ApprovalId) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        let mut requests = self.lock();
        ready(find(&mut requests.all, id).map(|a| a.clone()))
    }

    fn latest<'a>(
        &'a self,
        digest: &'a Digest,
        requested_by: &'a str,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>> {
        let requests = self.lock();
        let latest = requests.of_call(digest, requested_by).next();
        ready(Ok(latest.map(|place| requests.all[place].clone())))
    }

    fn list(
        &self,
        status: Status,
        now: SystemTime,
    ) -> BoxFuture<'_, Result<Vec<Approval>, LedgerError>> {
        let requests = self.lock();
        let listed = requests
            .all
            .iter()
            .filter(|a| a.status == status && !a.is_expired(now))
            .cloned()
            .collect();
        ready(Ok(listed))
    }

    fn list_after(
        &self,
        status: Status,
        now: SystemTime,
        after: Option<ApprovalId>,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<Approval>, LedgerError>> {
        let requests = self.lock();
        // The id is the place plus one: the page starts at the place `after`.
        let start = after.map_or(0, |after| usize::try_from(after.0).unwrap_or(usize::MAX));
        let listed = requests
            .all
            .iter()
            .skip(start)
            .filter(|a| a.status == status && !a.is_expired(now))
            .take(limit)
            .cloned()
            .collect();
        ready(Ok(listed))
    }

    fn pending_count<'a>(
        &'a self,
        requested_by: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<usize, LedgerError>> {
        let requests = self.lock();
        let count = requests
            .all
            .iter()
            .filter(|a| {
                a.status == Status::Pending && !a.is_expired(now) && a.requested_by == requested_by
            })
            .count();
        ready(Ok(count))
    }

    fn decide(
        &self,
        id: ApprovalId,
        decision: Review,
    ) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        let mut requests = self.lock();
        let decided = find(&mut requests.all, id).and_then(|approval| {
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
        let mut requests = self.lock();
        let usable = requests.of_call(digest, requested_by).find(|&place| {
            let a = &requests.all[place];
            a.status == Status::Approved && !a.is_expired(now)
        });
        let consumed = usable.map(|place| {
            let approval = &mut requests.all[place];
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
        let mut requests = self.lock();
        let settled = find(&mut requests.all, id).and_then(|approval| {
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
