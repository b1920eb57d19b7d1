//! The answers a [`RigTools`](crate::RigTools) gave to the calls of
//! deferred turns it resumed, so that a turn resumed again gets them back.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rig_core::message::CallId;
use rig_core::tool::ToolResult;

/// How many answers are remembered: far more than one resumed turn
/// replays, and a bound for a handle that lives as long as the process.
pub(crate) const REMEMBERED_CALLS: usize = 4096;

/// A deferred turn, by its content: the conversation before it and the
/// turn itself. Call ids alone are not enough, since some servers number
/// calls afresh in every reply.
pub(crate) type TurnKey = u64;

/// Answers by turn and call id.
#[derive(Default)]
pub(crate) struct CallLog {
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    answered: HashMap<(TurnKey, CallId), ToolResult>,
    /// `answered`'s keys, oldest first: the next to forget.
    order: VecDeque<(TurnKey, CallId)>,
}

impl CallLog {
    fn lock(&self) -> MutexGuard<'_, Entries> {
        // Every change is complete before the guard drops.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The result call `id` of `turn` was answered with, if it was.
    pub(crate) fn answered(&self, turn: TurnKey, id: &CallId) -> Option<ToolResult> {
        self.lock().answered.get(&(turn, id.clone())).cloned()
    }

    /// Call `id` of `turn` was answered with `result`.
    pub(crate) fn answer(&self, turn: TurnKey, id: &CallId, result: ToolResult) {
        let mut entries = self.lock();
        let key = (turn, id.clone());
        if entries.answered.insert(key.clone(), result).is_none() {
            entries.order.push_back(key);
        }
        while entries.order.len() > REMEMBERED_CALLS {
            if let Some(oldest) = entries.order.pop_front() {
                entries.answered.remove(&oldest);
            }
        }
    }
}
