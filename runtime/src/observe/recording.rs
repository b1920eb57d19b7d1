//! One call followed for its event: what the executor knows when it
//! starts, what the steps find on the way, and the event built when it ends.

use std::time::{Duration, Instant, SystemTime};

use super::event::{ApprovalUse, CallEvent, ErrorText, OutcomeClass, PolicyRuling};
use super::{Event, Observers, redact};
use crate::catalog::ToolEntry;
use crate::effect::Effect;
use crate::error::{AuditError, CallError};
use crate::pipeline::{Findings, Shown, Watch};
use crate::secret::Secrets;
use crate::tool_str::ToolStr;
use crate::util::BoxFuture;

/// Where the calls of `write` and `destructive` tools are recorded: the
/// audit trail, which implements this from above (its records hold
/// [`CallEvent`]s).
pub(crate) trait CallTrail: Send + Sync {
    /// Records the event of a call of a tool with `effect`, durably.
    fn record(&self, effect: Effect, event: CallEvent) -> BoxFuture<'_, Result<(), AuditError>>;

    /// Records the event of a call that ended without the steps' record
    /// (refused before its body, or cancelled), when it can: the call has
    /// nothing left to fail, so an error is only logged.
    fn record_detached(&self, effect: Effect, event: CallEvent);
}

/// A call of a tool that was found, followed from its start.
pub(crate) struct Recording<'a> {
    /// `None` when only the audit trail follows the call.
    observers: Option<&'a Observers>,
    /// The audit trail, for a call of a `write` or `destructive` tool on
    /// an executor that has one: told of a call that ends without the
    /// steps' record (refused before its body, or dropped).
    audit: Option<(&'a dyn CallTrail, Effect)>,
    id: u64,
    started: Instant,
    key: &'a ToolStr,
    name: &'a ToolStr,
    actor: Option<&'a str>,
    /// The tool, whose input schema says what to redact.
    tool: &'a ToolEntry,
    findings: Findings,
}

impl<'a> Recording<'a> {
    pub(crate) fn start(
        observers: Option<&'a Observers>,
        audit: Option<(&'a dyn CallTrail, Effect)>,
        id: u64,
        key: &'a ToolStr,
        name: &'a ToolStr,
        actor: Option<&'a str>,
        tool: &'a ToolEntry,
    ) -> Self {
        Recording {
            observers,
            audit,
            id,
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
        let details = Details {
            actor: self.actor.map(str::to_owned),
            policy: findings.ruling.get().map(|(decision, rule)| PolicyRuling {
                decision: decision.clone(),
                rule: rule.clone(),
            }),
            approval: consumed.or(requested),
            error,
        };
        CallRecord {
            id: self.id,
            started: self.started,
            ended: Instant::now(),
            key: self.key.clone(),
            name: self.name.clone(),
            arguments,
            // Only a tool with secret properties has anything to redact.
            secret: (!self.tool.validation().secrets().is_empty()).then(|| self.tool.clone()),
            outcome,
            details: details.any().then(|| Box::new(details)),
        }
    }
}

impl Recording<'_> {
    /// The call's event as it would read had it ended with `result`, for
    /// the audit trail (which records it before the call's scope closes).
    fn event(&self, result: Option<Result<(), &CallError>>) -> CallEvent {
        let arguments = self.findings.shown().clone();
        self.record(arguments, result).event()
    }

    /// Records the call in the audit trail, as it would read had it ended
    /// with `result`. Recorded inside the call, before its error is
    /// scrubbed on its way out: the record's texts are scrubbed here.
    #[cold]
    #[inline(never)]
    async fn audit_call(
        &self,
        secrets: &Secrets,
        result: Result<(), &CallError>,
    ) -> Result<(), CallError> {
        let Some((trail, effect)) = self.audit else {
            return Ok(());
        };
        let key = self.key;
        let mut event = self.event(Some(result));
        if let (false, Some(error)) = (secrets.is_empty(), &mut event.error)
            && let Some(arguments) = self.findings.real_arguments()
        {
            let values = secrets.values(&arguments);
            values.scrub_string(&mut error.model_message);
            values.scrub_string(&mut error.message);
        }
        trail.record(effect, event).await.map_err(|source| {
            tracing::error!(key = key.as_str(), error = %source, cause = %source.0, "audit trail: a call could not be recorded; it fails");
            CallError::AuditFailed {
                key: key.clone(),
                source,
            }
        })
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
            trail.record_detached(effect, self.event(result));
        }
        if let Some(observers) = self.observers {
            observers.emit_call(self.record(self.findings.take_arguments(), result));
        }
    }

    /// The event now, built on the call's thread: the audit trail records
    /// it before the call's scope closes.
    fn audits(&self) -> bool {
        self.audit.is_some()
    }

    fn audit<'b>(
        &'b self,
        secrets: &'b Secrets,
        result: Result<(), &'b CallError>,
    ) -> BoxFuture<'b, Result<(), CallError>> {
        Box::pin(self.audit_call(secrets, result))
    }
}

/// What a call left for its event, as its thread hands it over.
pub(crate) struct CallRecord {
    id: u64,
    /// When the call started: its event's wall-clock time is worked out
    /// from it, so that the call reads one clock.
    started: Instant,
    /// When it ended (its duration is worked out on the dispatcher's thread).
    ended: Instant,
    key: ToolStr,
    name: ToolStr,
    arguments: Option<Shown>,
    /// The tool, when its input schema marks properties secret (to redact).
    secret: Option<ToolEntry>,
    outcome: OutcomeClass,
    /// Boxed, and only when there are any: the record of every call then
    /// takes a few cache lines, which the dispatcher's thread reads.
    details: Option<Box<Details>>,
}

/// What fewer calls have: a known caller, a policy, an approval, an error.
#[derive(Default)]
struct Details {
    actor: Option<String>,
    policy: Option<PolicyRuling>,
    approval: Option<ApprovalUse>,
    error: Option<ErrorText>,
}

impl Details {
    fn any(&self) -> bool {
        self.actor.is_some()
            || self.policy.is_some()
            || self.approval.is_some()
            || self.error.is_some()
    }
}

impl CallRecord {
    /// The call's event: the arguments digested (unless the call did) and
    /// redacted. The record is left as it was: what it holds is dropped
    /// on the thread that made it.
    pub(crate) fn event(&self) -> CallEvent {
        let (arguments, digest) = match &self.arguments {
            Some(shown) => {
                let (arguments, digest) = shown.event_parts(&self.key);
                let shown = match &self.secret {
                    Some(tool) => redact(tool.input_schema(), &arguments),
                    None => arguments,
                };
                (Some(shown), digest)
            }
            None => (None, None),
        };
        let none = Details::default();
        let details = self.details.as_deref().unwrap_or(&none);
        CallEvent {
            id: self.id,
            at: wall_time(self.started),
            key: Some(self.key.clone()),
            name: self.name.to_string(),
            actor: details.actor.clone(),
            arguments,
            digest,
            policy: details.policy.clone(),
            approval: details.approval,
            outcome: self.outcome,
            duration: self.ended.saturating_duration_since(self.started),
            error: details.error.clone(),
        }
    }
}

/// The wall-clock time of `past`: the time now, less how long ago it was
/// (read first, so that the time is never before `past`).
fn wall_time(past: Instant) -> SystemTime {
    let ago = past.elapsed();
    let now = SystemTime::now();
    now.checked_sub(ago).unwrap_or(now)
}

/// The event of a call that ended before it started: no tool has the
/// name, or the tool is disabled, or (for a provider's tool call) the
/// arguments were not JSON.
pub(crate) fn refused(
    observers: &Observers,
    id: u64,
    key: Option<ToolStr>,
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
