//! One call followed for its event: what the executor knows when it
//! starts, what the steps find on the way, and the event built when it ends.

use std::time::{Duration, Instant, SystemTime};

use super::event::{ApprovalUse, CallEvent, ErrorText, OutcomeClass, PolicyRuling};
use super::{Event, Observers, redact};
use crate::audit::Trail;
use crate::catalog::ToolEntry;
use crate::effect::Effect;
use crate::error::CallError;
use crate::pipeline::{Findings, Shown, Watch};
use crate::request::Digest;

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
    /// The tool, whose input schema says what to redact.
    tool: &'a ToolEntry,
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
        tool: &'a ToolEntry,
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
            tool,
            findings: Findings::default(),
        }
    }

    /// What the call found, with `arguments` and the end `result`.
    fn record(
        &self,
        arguments: Option<Shown>,
        result: Option<Result<(), &CallError>>,
    ) -> CallRecord {
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
        CallRecord {
            id: self.id,
            at: self.at,
            duration: self.started.elapsed(),
            key: self.key,
            name: self.name,
            actor: self.actor.map(str::to_owned),
            arguments,
            tool: self.tool.clone(),
            policy: findings.ruling.get().map(|(decision, rule)| PolicyRuling {
                decision: decision.clone(),
                rule: rule.clone(),
            }),
            approval: consumed.or(requested),
            outcome,
            error,
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

    /// Records a call of an audited tool that ended without the steps'
    /// record (refused before its body, or dropped), in the background;
    /// then hands what the call found to the observers' dispatcher, which
    /// builds the event (digest, redaction) off the call's thread.
    fn ended(&self, result: Option<Result<(), &CallError>>) {
        if let Some((trail, effect)) = self.audit
            && (result.is_none() || self.findings.audited.get().is_none())
        {
            crate::audit::record_ended(trail, effect, self.event(result));
        }
        if let Some(observers) = self.observers {
            observers.emit_call(self.record(self.findings.take_arguments(), result));
        }
    }

    /// The event now, built on the call's thread: the audit trail records
    /// it before the call's scope closes.
    fn event(&self, result: Option<Result<(), &CallError>>) -> CallEvent {
        let arguments = self.findings.shown().clone();
        self.record(arguments, result).into_event()
    }
}

/// What a call left for its event, as its thread hands it over.
pub(crate) struct CallRecord {
    id: u64,
    at: SystemTime,
    duration: Duration,
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
    pub(crate) fn into_event(self) -> CallEvent {
        let (arguments, digest) = match self.arguments {
            Some(Shown::Validated { arguments, digest }) => {
                let digest = digest.unwrap_or_else(|| Digest::of(self.key, &arguments));
                (Some(arguments), Some(digest))
            }
            Some(Shown::Unreadable(arguments)) => (Some(arguments), None),
            None => (None, None),
        };
        let schema = self.tool.input_schema();
        CallEvent {
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
        }
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
        duration: Duration::ZERO,
        error: Some(ErrorText::of(error)),
    }));
}
