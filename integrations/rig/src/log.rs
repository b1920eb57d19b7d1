//! What a [`RigTools`](crate::RigTools) remembers about tool calls, by
//! rig's call id: the results it gave, and the calls that wait for a person.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rig_core::message::CallId;
use rig_core::tool::ToolResult;
use toolwright::{ApprovalRequest, Approvals};

/// How many answered calls are remembered: far more than one deferred
/// turn replays, and a bound for a handle that lives as long as the
/// process.
pub(crate) const REMEMBERED_CALLS: usize = 4096;

/// The calls of every run of one handle.
pub(crate) struct CallLog {
    approvals: Option<Approvals>,
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    answered: HashMap<CallId, ToolResult>,
    /// `answered`'s ids, oldest first: the next to forget.
    order: VecDeque<CallId>,
    awaiting: HashMap<CallId, ApprovalRequest>,
}

impl CallLog {
    pub(crate) fn new(approvals: Option<Approvals>) -> Self {
        CallLog {
            approvals,
            entries: Mutex::new(Entries::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        // Every change is complete before the guard drops.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The result call `id` was answered with, if it was.
    pub(crate) fn answered(&self, id: &CallId) -> Option<ToolResult> {
        self.lock().answered.get(id).cloned()
    }

    /// Call `id` was answered with `result`: a replay gets the same.
    pub(crate) fn answer(&self, id: &CallId, result: ToolResult) {
        let mut entries = self.lock();
        entries.awaiting.remove(id);
        if entries.answered.insert(id.clone(), result).is_none() {
            entries.order.push_back(id.clone());
        }
        while entries.order.len() > REMEMBERED_CALLS {
            if let Some(oldest) = entries.order.pop_front() {
                entries.answered.remove(&oldest);
            }
        }
    }

    /// Call `id` waits for a person to decide `request`.
    pub(crate) fn wait(&self, id: &CallId, request: ApprovalRequest) {
        self.lock().awaiting.insert(id.clone(), request);
    }

    /// What the model reads for call `id`, which a person rejected: their
    /// reason, when the call waited here and the ledger kept one.
    pub(crate) async fn rejection(&self, id: &CallId) -> String {
        let approval = self.lock().awaiting.get(id).and_then(|request| request.id);
        let reason = match (approval, &self.approvals) {
            (Some(approval), Some(approvals)) => approvals
                .get(approval)
                .await
                .ok()
                .and_then(|approval| approval.reason),
            _ => None,
        };
        match reason {
            Some(reason) => format!("A person rejected this call: {reason}"),
            None => "A person rejected this call.".to_owned(),
        }
    }
}
