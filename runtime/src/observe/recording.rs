//! One call followed for its event: what the executor knows when it
//! starts, what the steps find on the way, and the event built when it ends.

use std::time::{Instant, SystemTime};

use super::event::{ApprovalUse, CallEvent, ErrorText, OutcomeClass, PolicyRuling};
use super::{Event, Observers, redact};
use crate::catalog::ToolEntry;
use crate::error::CallError;
use crate::pipeline::{Findings, Shown, Watch};
use crate::request::Digest;

/// A call of a tool that was found, followed from its start.
pub(crate) struct Recording<'a> {
    observers: &'a Observers,
    id: u64,
    at: SystemTime,
    started: Instant,
    key: &'static str,
    name: &'static str,
    actor: Option<&'a str>,
    /// The tool, whose input schema says what to redact.
    tool: &'a ToolEntry,
    findings: Findings,
}

impl<'a> Recording<'a> {
    pub(crate) fn start(
        observers: &'a Observers,
        id: u64,
        key: &'static str,
        name: &'static str,
        actor: Option<&'a str>,
        tool: &'a ToolEntry,
    ) -> Self {
        Recording {
            observers,
            id,
            at: SystemTime::now(),
            started: Instant::now(),
            key,
            name,
            actor,
            tool,
            findings: Findings::default(),
        }
    }
}

impl Watch for Recording<'_> {
    fn id(&self) -> u64 {
        self.id
    }

    fn findings(&self) -> &Findings {
        &self.findings
    }

    /// Hands what the call found to the observers' dispatcher, which
    /// builds the event (digest, redaction) off the call's thread.
    fn ended(&self, result: Option<Result<(), &CallError>>) {
        let findings = &self.findings;
        let requested = match result {
            Some(Err(CallError::ApprovalRequired(request))) => {
                Some(ApprovalUse::Requested { id: request.id })
            }
            _ => None,
        };
        let consumed = findings
            .consumed
            .get()
            .map(|&id| ApprovalUse::Consumed { id });
        let (outcome, error) = match result {
            None => (OutcomeClass::Cancelled, None),
            Some(Ok(())) => (OutcomeClass::Ok, None),
            Some(Err(error)) => (OutcomeClass::of_error(error), Some(ErrorText::of(error))),
        };
        self.observers.emit_call(CallRecord {
            id: self.id,
            at: self.at,
            duration: self.started.elapsed(),
            key: self.key,
            name: self.name,
            actor: self.actor.map(str::to_owned),
            arguments: findings.take_arguments(),
            tool: self.tool.clone(),
            policy: findings.ruling.get().map(|(decision, rule)| PolicyRuling {
                decision: decision.clone(),
                rule: rule.clone(),
            }),
            approval: consumed.or(requested),
            outcome,
            error,
        });
    }
}

/// What a call left for its event, as its thread hands it over.
pub(crate) struct CallRecord {
    id: u64,
    at: SystemTime,
    duration: std::time::Duration,
    key: &'static str,
    name: &'static str,
    actor: Option<String>,
    arguments: Option<Shown>,
    tool: ToolEntry,
    policy: Option<PolicyRuling>,
    approval: Option<ApprovalUse>,
    outcome: OutcomeClass,
    error: Option<ErrorText>,
}

impl CallRecord {
    /// The call's event: the arguments digested (unless the call did) and
    /// redacted.
    pub(crate) fn into_event(self) -> Event {
        let (arguments, digest) = match self.arguments {
            Some(Shown::Validated { arguments, digest }) => {
                let digest = digest.unwrap_or_else(|| Digest::of(self.key, &arguments));
                (Some(arguments), Some(digest))
            }
            Some(Shown::Unreadable(arguments)) => (Some(arguments), None),
            None => (None, None),
        };
        let schema = self.tool.input_schema();
        Event::Call(CallEvent {
            id: self.id,
            at: self.at,
            key: Some(self.key),
            name: self.name.to_owned(),
            actor: self.actor,
            arguments: arguments.map(|arguments| redact(schema, &arguments)),
            digest,
            policy: self.policy,
            approval: self.approval,
            outcome: self.outcome,
            duration: self.duration,
            error: self.error,
        })
    }
}

/// The event of a call that ended before it started: no tool has the
/// name, or the tool is disabled, or (for a provider's tool call) the
/// arguments were not JSON.
pub(crate) fn refused(
    observers: &Observers,
    id: u64,
    key: Option<&'static str>,
    name: &str,
    actor: Option<&str>,
    error: &CallError,
) {
    observers.emit(Event::Call(CallEvent {
        id,
        at: SystemTime::now(),
        key,
        name: name.to_owned(),
        actor: actor.map(str::to_owned),
        arguments: None,
        digest: None,
        policy: None,
        approval: None,
        outcome: OutcomeClass::of_error(error),
        duration: std::time::Duration::ZERO,
        error: Some(ErrorText::of(error)),
    }));
}
