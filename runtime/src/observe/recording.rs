//! One call followed for its event: what the executor knows when it
//! starts, what the steps find on the way, and the event built when it ends.

use std::time::{Instant, SystemTime};

use serde_json::Value;

use super::event::{ApprovalUse, CallEvent, ErrorText, OutcomeClass, PolicyRuling};
use super::{Event, Observers, redact};
use crate::audit::Trail;
use crate::effect::Effect;
use crate::error::CallError;
use crate::pipeline::{Findings, Watch};

/// A call of a tool that was found, followed from its start.
pub(crate) struct Recording<'a> {
    /// `None` when only the audit trail follows the call.
    observers: Option<&'a Observers>,
    /// The audit trail, for a call of a `write` or `destructive` tool on
    /// an executor that has one: told of a call that ends without the
    /// steps' record (refused before its body, or dropped).
    audit: Option<(&'a Trail, Effect)>,
    id: u64,
    at: SystemTime,
    started: Instant,
    key: &'static str,
    name: &'static str,
    actor: Option<&'a str>,
    /// The tool's input schema, which says what to redact.
    schema: &'a Value,
    findings: Findings,
}

impl<'a> Recording<'a> {
    pub(crate) fn start(
        observers: Option<&'a Observers>,
        audit: Option<(&'a Trail, Effect)>,
        id: u64,
        key: &'static str,
        name: &'static str,
        actor: Option<&'a str>,
        schema: &'a Value,
    ) -> Self {
        Recording {
            observers,
            audit,
            id,
            at: SystemTime::now(),
            started: Instant::now(),
            key,
            name,
            actor,
            schema,
            findings: Findings::default(),
        }
    }
}

impl Watch for Recording<'_> {
    fn findings(&self) -> &Findings {
        &self.findings
    }

    fn ended(&self, result: Option<Result<(), &CallError>>) {
        // The steps record a call whose body ran; one refused before it,
        // or dropped on the way, is recorded here, in the background.
        if let Some((trail, effect)) = self.audit
            && (result.is_none() || self.findings.audited.get().is_none())
        {
            crate::audit::record_ended(trail, effect, self.event(result));
        }
        if let Some(observers) = self.observers {
            observers.emit(Event::Call(self.event(result)));
        }
    }

    fn event(&self, result: Option<Result<(), &CallError>>) -> CallEvent {
        let findings = &self.findings;
        let (arguments, digest) = match findings.arguments.get() {
            Some((arguments, digest)) => (Some(redact(self.schema, arguments)), *digest),
            None => (None, None),
        };
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
        CallEvent {
            id: self.id,
            at: self.at,
            key: Some(self.key),
            name: self.name.to_owned(),
            actor: self.actor.map(str::to_owned),
            arguments,
            digest,
            policy: findings.ruling.get().map(|(decision, rule)| PolicyRuling {
                decision: decision.clone(),
                rule: rule.clone(),
            }),
            approval: consumed.or(requested),
            outcome,
            duration: self.started.elapsed(),
            error,
        }
    }
}

/// The event of a call that ended before it started: no tool has the
/// name, or the tool is disabled, or (for a provider's tool call) the
/// arguments were not JSON.
pub(crate) fn refused(
    observers: &Observers,
    key: Option<&'static str>,
    name: &str,
    actor: Option<&str>,
    error: &CallError,
) {
    observers.emit(Event::Call(CallEvent {
        id: observers.next_call(),
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
