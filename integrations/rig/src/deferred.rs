//! How a run ended, and a run whose writes wait for a person: what it
//! asks, and what it takes to continue it.

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use rig_agent::agent::{AgentRunStep, ModelTurn, ModelTurnOutcome, PromptResponse};
use rig_agent::completion::{PromptError, Usage};
use rig_agent::run::AgentRun;
use rig_agent::tool::server::ToolServerError;
use rig_core::completion::ToolDefinition;
use rig_core::message::{self, AssistantMessage, CallId, Message, UserContent};
use rig_core::tool::{ToolExecutionError, ToolOutput, ToolResult};
use serde::{Deserialize, Serialize};
use toolwright::approval::{ApprovalRequest, Approvals};

use crate::hook::{DEFERRED, ReplayHook};
use crate::log::{CallLog, TurnKey};

/// How [`RigTools::run`](crate::RigTools::run) ended.
#[derive(Debug)]
#[non_exhaustive]
// One per run, matched at once: not worth a box around rig's response.
#[allow(clippy::large_enum_variant)]
pub enum Outcome {
    /// The run finished: rig's response, its text in
    /// [`output`](PromptResponse::output).
    Done(PromptResponse),
    /// The run stopped after a tool batch, before the model read its
    /// results, because calls of that batch wait for a person. Nothing of
    /// theirs ran.
    Deferred(Deferred),
}

/// One tool call that waits for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeferredCall {
    /// rig's id of the call: the provider's, or the one rig issued.
    pub call_id: CallId,
    /// What the person decides on: the tool, its canonical arguments, the
    /// digest, the requester, and the ledger's id
    /// ([`ApprovalRequest::id`]) to pass to
    /// [`Approvals::approve`](toolwright::approval::Approvals::approve) or
    /// [`reject`](toolwright::approval::Approvals::reject).
    pub request: ApprovalRequest,
}

/// A run stopped at a model turn whose tool calls include some that wait
/// for approval.
///
/// Show [`calls`](Self::calls) to a person, record their decisions in the
/// ledger, then continue with [`RigTools::resume`](crate::RigTools::resume).
/// It serializes (with serde), so the wait may outlast the process: the
/// conversation before the turn, the turn, and the results of the turn's
/// calls that did run travel with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deferred {
    calls: Vec<DeferredCall>,
    /// The conversation before the turn.
    history: Vec<Message>,
    /// The model turn whose calls wait.
    turn: AssistantMessage,
    /// The results of that turn's calls that ran.
    answered: Vec<message::ToolResult>,
}

impl Deferred {
    /// The calls that wait for a person, in the order the model made them.
    pub fn calls(&self) -> &[DeferredCall] {
        &self.calls
    }

    /// The approval requests of those calls.
    pub fn requests(&self) -> impl Iterator<Item = &ApprovalRequest> {
        self.calls.iter().map(|call| &call.request)
    }

    /// The conversation before the deferred turn: the input history and
    /// the prompt, and the earlier turns of the run. A resumed run's
    /// response (`PromptResponse::messages`) goes on from its last message.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// The model turn whose calls wait: every call the model made in it.
    pub fn turn(&self) -> &AssistantMessage {
        &self.turn
    }

    /// The deferred run that ended with `error`, its waiting calls
    /// `calls`; `None` when `error` is not the hook's stop (or the turn
    /// budget running out just then) over a history with that turn.
    pub(crate) fn from_stopped(error: &PromptError, calls: Vec<DeferredCall>) -> Option<Deferred> {
        let history = match error {
            PromptError::Cancelled {
                chat_history,
                reason,
            } if reason == DEFERRED => chat_history,
            PromptError::MaxTurns { chat_history, .. } => chat_history,
            _ => return None,
        };
        // The turn is the last assistant message; the tool results follow.
        let at = history
            .iter()
            .rposition(|message| matches!(message, Message::Assistant(_)))?;
        let Message::Assistant(turn) = &history[at] else {
            return None;
        };
        let made: BTreeSet<&CallId> = turn.tool_calls().map(|call| &call.id).collect();
        if !calls.iter().all(|call| made.contains(&call.call_id)) {
            return None;
        }
        let waiting: BTreeSet<&CallId> = calls.iter().map(|call| &call.call_id).collect();
        let answered = history[at + 1..]
            .iter()
            .flat_map(|message| match message {
                Message::User { content } => content.as_slice(),
                _ => &[],
            })
            .filter_map(|content| match content {
                UserContent::ToolResult(result) if !waiting.contains(&result.call) => {
                    Some(result.clone())
                }
                _ => None,
            })
            .collect();
        Some(Deferred {
            history: history[..at].to_vec(),
            turn: turn.clone(),
            answered,
            calls,
        })
    }

    /// rig's run positioned where this one stopped (the model turn just
    /// made, its calls to execute; `advertised` are the agent's tools),
    /// and the hook that answers the calls rig executes again.
    pub(crate) fn into_run(
        self,
        log: Arc<CallLog>,
        approvals: Option<Approvals>,
        advertised: Vec<ToolDefinition>,
        max_turns: usize,
    ) -> Result<(AgentRun, ReplayHook), ResumeError> {
        let replay = ReplayHook {
            turn: self.key(),
            log,
            calls: self.turn.tool_calls().map(|call| call.id.clone()).collect(),
            // Answered before the stop: answered so again, here or in a
            // process that only has this value.
            before: self
                .answered
                .into_iter()
                .map(|result| (result.call.clone(), tool_result(result)))
                .collect(),
            waited: self
                .calls
                .into_iter()
                .map(|call| (call.call_id, call.request))
                .collect(),
            approvals,
        };

        let mut history = self.history;
        let prompt = history.pop().ok_or(ResumeError::NoTurn)?;
        // One model call is the deferred turn itself.
        let mut run = AgentRun::new(prompt)
            .with_history(history)
            .max_turns(max_turns.saturating_add(1));
        let turn = match run
            .next_step()
            .map_err(|error| ResumeError::Run(Box::new(error)))?
        {
            AgentRunStep::CallModel { turn, .. } => turn,
            _ => return Err(ResumeError::NoTurn),
        };
        // The turn was made against these tools; its own calls name some
        // of them, and rig checks them again.
        let mut names: BTreeSet<String> = advertised
            .iter()
            .map(|definition| definition.name.to_string())
            .collect();
        names.extend(
            self.turn
                .tool_calls()
                .map(|call| call.function.name.to_string()),
        );
        run.advertise_tools(turn, advertised);
        let content = self.turn.content.clone();
        let head = self.turn.with_content(Vec::new());
        let model_turn = ModelTurn::new(
            head,
            content,
            Usage::default(),
            names.clone(),
            names,
            serde_json::Value::Null,
        );
        match run
            .model_response(model_turn)
            .map_err(|error| ResumeError::Run(Box::new(error)))?
        {
            ModelTurnOutcome::Continue { .. } => Ok((run, replay)),
            _ => Err(ResumeError::NoTurn),
        }
    }

    /// The turn by its content: the conversation before it and the turn.
    fn key(&self) -> TurnKey {
        let mut hasher = DefaultHasher::new();
        // Messages always serialize; an empty text would only widen the key.
        serde_json::to_string(&(&self.history, &self.turn))
            .unwrap_or_default()
            .hash(&mut hasher);
        hasher.finish()
    }
}

/// A result as the model read it, as rig's execution view again.
fn tool_result(result: message::ToolResult) -> ToolResult {
    let output = ToolOutput::content(result.content).unwrap_or_else(|_| ToolOutput::text(""));
    if result.is_error {
        ToolResult::failed(ToolExecutionError::other("answered before").with_model_output(output))
    } else {
        ToolResult::success(output)
    }
}

/// A deferred run could not be continued.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// The agent could not list its tools.
    #[error("could not list the agent's tools")]
    Tools(#[source] Box<ToolServerError>),
    /// The deferred value holds no model turn to continue from (it was not
    /// made by [`RigTools::run`](crate::RigTools::run), or was edited).
    #[error("the deferred run holds no model turn to continue from")]
    NoTurn,
    /// rig refused the run as rebuilt.
    #[error("rig refused the deferred run")]
    Run(#[source] Box<PromptError>),
}
