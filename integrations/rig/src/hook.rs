//! The hook [`RigTools::run`](crate::RigTools::run) adds to each run: it
//! answers replayed calls from the log, notes calls that wait for
//! approval, and ends the run before the model hears about them.

use std::sync::{Arc, Mutex, PoisonError};

use rig_agent::agent::{
    CompletionCallAction, CompletionCallEvent, DispatchAction, DispatchEvent, OutcomeAction,
    OutcomeEvent,
};
use rig_agent::{AgentHook, HookContext};
use rig_core::effect::Outcome;
use rig_core::tool::{ContextValue, ToolOutput};
use serde::{Deserialize, Serialize};
use toolwright::ApprovalRequest;

use crate::deferred::DeferredCall;
use crate::log::CallLog;

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

/// One run's hook.
pub(crate) struct RunHook {
    log: Arc<CallLog>,
    waiting: Waiting,
}

impl RunHook {
    /// A hook for one run, and the calls it will find waiting.
    pub(crate) fn new(log: Arc<CallLog>) -> (Self, Waiting) {
        let waiting = Waiting::default();
        let hook = RunHook {
            log,
            waiting: waiting.clone(),
        };
        (hook, waiting)
    }
}

impl AgentHook for RunHook {
    fn name(&self) -> Option<String> {
        Some("toolwright-rig/approvals".to_owned())
    }

    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        // A call answered before (rig replays a resumed turn's calls) does
        // not reach the executor again; `on_outcome` puts the answer back.
        match event.call_id {
            Some(id) if event.tool_name().is_some() && self.log.answered(id).is_some() => {
                DispatchAction::skip("answered before")
            }
            _ => DispatchAction::Proceed,
        }
    }

    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        let (Some(id), Some(result)) = (event.call_id, event.tool_result()) else {
            return OutcomeAction::Proceed;
        };
        if result.is_skipped()
            && let Some(earlier) = self.log.answered(id)
        {
            return OutcomeAction::replace(Ok(Outcome::ToolResult { result: earlier }));
        }
        let mark = event
            .tool_context()
            .and_then(|context| context.result::<ApprovalMark>().ok().flatten());
        match mark {
            Some(ApprovalMark::Required(request)) => {
                self.log.wait(id, request.clone());
                self.waiting.push(DeferredCall {
                    call_id: id.clone(),
                    request,
                });
                OutcomeAction::Proceed
            }
            Some(ApprovalMark::Rejected) => {
                let text = self.log.rejection(id).await;
                let result = result.clone().with_output(ToolOutput::text(text));
                self.log.answer(id, result.clone());
                OutcomeAction::replace(Ok(Outcome::ToolResult { result }))
            }
            None => {
                self.log.answer(id, result.clone());
                OutcomeAction::Proceed
            }
        }
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
