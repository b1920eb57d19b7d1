//! The hooks the adapter adds to rig runs: one notes the calls that wait
//! for approval and ends the run before the model hears of them; one
//! answers the calls rig executes again when a deferred turn resumes.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use rig_agent::agent::{
    CompletionCallAction, CompletionCallEvent, DispatchAction, DispatchEvent, OutcomeAction,
    OutcomeEvent,
};
use rig_agent::{AgentHook, HookContext};
use rig_core::effect::Outcome;
use rig_core::message::CallId;
use rig_core::tool::{ContextValue, ToolOutput, ToolResult};
use serde::{Deserialize, Serialize};
use toolwright::approval::{ApprovalRequest, Approvals};

use crate::deferred::DeferredCall;
use crate::log::{CallLog, TurnKey};

/// Why a run that [`RigTools::run`](crate::RigTools::run) stopped ended:
/// the reason of rig's `PromptError::Cancelled`.
pub(crate) const DEFERRED: &str = "toolwright-rig: tool calls wait for approval";

/// The host-only mark a tool call leaves in its result context when the
/// executor refused it for approval's sake; never shown to the model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum ApprovalMark {
    /// A person must decide this request first.
    Required(ApprovalRequest),
    /// A person rejected exactly this call.
    Rejected,
}

impl ContextValue for ApprovalMark {
    const KEY: &'static str = "toolwright.approval";
}

/// The calls of one run that wait for a person.
#[derive(Clone, Default)]
pub(crate) struct Waiting(Arc<Mutex<Vec<DeferredCall>>>);

impl Waiting {
    fn push(&self, call: DeferredCall) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(call);
    }

    fn is_empty(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    pub(crate) fn take(&self) -> Vec<DeferredCall> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The hook [`RigTools::run`](crate::RigTools::run) adds to every run: it
/// notes the calls that wait for a person, and ends the run before the
/// model reads their batch.
pub(crate) struct RunHook {
    waiting: Waiting,
}

impl RunHook {
    /// A hook for one run, and the calls it will find waiting.
    pub(crate) fn new() -> (Self, Waiting) {
        let waiting = Waiting::default();
        let hook = RunHook {
            waiting: waiting.clone(),
        };
        (hook, waiting)
    }
}

impl AgentHook for RunHook {
    fn name(&self) -> Option<String> {
        Some("toolwright-rig/defer".to_owned())
    }

    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let (Some(id), Some(ApprovalMark::Required(request))) = (event.call_id, mark(&event)) {
            self.waiting.push(DeferredCall {
                call_id: id.clone(),
                request,
            });
        }
        OutcomeAction::Proceed
    }

    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        // After the whole tool batch ran, before the model reads its
        // results: every waiting call of the batch is known.
        if self.waiting.is_empty() {
            CompletionCallAction::Continue
        } else {
            CompletionCallAction::stop(DEFERRED)
        }
    }
}

/// The mark a resolved tool call left, if any.
fn mark(event: &OutcomeEvent<'_>) -> Option<ApprovalMark> {
    event
        .tool_context()
        .and_then(|context| context.result::<ApprovalMark>().ok().flatten())
}

/// The hook [`RigTools::resume`](crate::RigTools::resume) adds to a resumed
/// run, for the calls of the deferred turn rig executes again: a call
/// answered before gets that answer back without reaching the executor,
/// and a rejected one tells the model the person's reason.
pub(crate) struct ReplayHook {
    pub(crate) turn: TurnKey,
    pub(crate) log: Arc<CallLog>,
    /// Every call of the turn.
    pub(crate) calls: HashSet<CallId>,
    /// The answers the deferred run gave before it stopped.
    pub(crate) before: HashMap<CallId, ToolResult>,
    /// The calls that waited, and what for.
    pub(crate) waited: HashMap<CallId, ApprovalRequest>,
    pub(crate) approvals: Option<Approvals>,
}

impl ReplayHook {
    fn answered(&self, id: &CallId) -> Option<ToolResult> {
        match self.before.get(id) {
            Some(result) => Some(result.clone()),
            None => self.log.answered(self.turn, id),
        }
    }

    /// What the model reads for call `id`, which a person rejected: their
    /// reason, when the ledger kept one.
    async fn rejection(&self, id: &CallId) -> String {
        let approval = self.waited.get(id).and_then(|request| request.id);
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

impl AgentHook for ReplayHook {
    fn name(&self) -> Option<String> {
        Some("toolwright-rig/replay".to_owned())
    }

    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.call_id {
            Some(id) if self.calls.contains(id) && self.answered(id).is_some() => {
                // `on_outcome` puts the earlier answer in its place.
                DispatchAction::skip("answered before")
            }
            _ => DispatchAction::Proceed,
        }
    }

    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        let (Some(id), Some(result)) = (event.call_id, event.tool_result()) else {
            return OutcomeAction::Proceed;
        };
        if !self.calls.contains(id) {
            return OutcomeAction::Proceed;
        }
        if result.is_skipped()
            && let Some(earlier) = self.answered(id)
        {
            return OutcomeAction::replace(Ok(Outcome::ToolResult { result: earlier }));
        }
        match mark(&event) {
            // Still waiting: the run defers again, and nothing is answered.
            Some(ApprovalMark::Required(_)) => OutcomeAction::Proceed,
            Some(ApprovalMark::Rejected) => {
                let text = self.rejection(id).await;
                let result = result.clone().with_output(ToolOutput::text(text));
                self.log.answer(self.turn, id, result.clone());
                OutcomeAction::replace(Ok(Outcome::ToolResult { result }))
            }
            None => {
                self.log.answer(self.turn, id, result.clone());
                OutcomeAction::Proceed
            }
        }
    }
}
