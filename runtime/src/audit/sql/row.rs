//! A record as the columns of its row.

use std::time::SystemTime;

use crate::approval::Status;
use crate::audit::AuditRecord;
use crate::observe::ApprovalUse;
use crate::sql::Statement;
use crate::util::time::to_unix_ms as unix_ms;

/// One row of the trail.
#[derive(Debug, Default)]
struct Row {
    kind: &'static str,
    at: i64,
    call_id: Option<i64>,
    tool_key: Option<String>,
    tool_name: Option<String>,
    effect: Option<&'static str>,
    /// Who called, or who decided.
    actor: Option<String>,
    /// Masked, as JSON text.
    arguments: Option<String>,
    digest: Option<String>,
    /// `allow`, `ask` or `deny: <reason>`.
    policy: Option<String>,
    policy_rule: Option<String>,
    approval_id: Option<i64>,
    /// `requested` or `consumed` (a call), `decided` (a decision).
    approval_use: Option<&'static str>,
    /// A call's outcome class; `approved`, `rejected` or `refused` for a decision.
    outcome: &'static str,
    /// The application-facing error text.
    error: Option<String>,
    reason: Option<String>,
    requested_by: Option<String>,
    duration_ms: Option<i64>,
    /// A registry change's keys, as a JSON array.
    tool_keys: Option<String>,
    /// The registry's generation after a registry change.
    generation: Option<i64>,
}

/// `insert`, a statement with the table's columns in order, with
/// `record`'s row bound.
pub(super) fn statement(insert: &'static str, record: &AuditRecord) -> Statement {
    let row = row(record);
    Statement::new(insert)
        .bind(row.kind)
        .bind(row.at)
        .bind(row.call_id)
        .bind(row.tool_key)
        .bind(row.tool_name)
        .bind(row.effect.map(str::to_owned))
        .bind(row.actor)
        .bind(row.arguments)
        .bind(row.digest)
        .bind(row.policy)
        .bind(row.policy_rule)
        .bind(row.approval_id)
        .bind(row.approval_use.map(str::to_owned))
        .bind(row.outcome)
        .bind(row.error)
        .bind(row.reason)
        .bind(row.requested_by)
        .bind(row.duration_ms)
        .bind(row.tool_keys)
        .bind(row.generation)
}

/// The row `record` is stored as.
fn row(record: &AuditRecord) -> Row {
    match record {
        AuditRecord::Call(call) => {
            let event = &call.event;
            let (approval_id, approval_use) = match event.approval {
                Some(ApprovalUse::Consumed { id }) => (Some(id.0), Some("consumed")),
                Some(ApprovalUse::Requested { id }) => (id.map(|id| id.0), Some("requested")),
                _ => (None, None),
            };
            Row {
                kind: "call",
                at: unix_ms(event.at),
                call_id: Some(int(event.id)),
                tool_key: event.key.as_deref().map(str::to_owned),
                tool_name: Some(event.name.clone()),
                effect: Some(call.effect.as_str()),
                actor: event.actor.clone(),
                arguments: event.arguments.as_ref().map(ToString::to_string),
                digest: event.digest.map(|digest| digest.to_string()),
                policy: event
                    .policy
                    .as_ref()
                    .map(|ruling| ruling.decision.to_string()),
                policy_rule: event.policy.as_ref().and_then(|ruling| ruling.rule.clone()),
                approval_id: approval_id.map(int),
                approval_use,
                outcome: event.outcome.as_str(),
                error: event.error.as_ref().map(|error| error.message.clone()),
                duration_ms: Some(int(
                    u64::try_from(event.duration.as_millis()).unwrap_or(u64::MAX)
                )),
                ..Row::default()
            }
        }
        AuditRecord::Decision(decision) => {
            let approval = &decision.approval;
            Row {
                kind: "decision",
                at: unix_ms(approval.decided_at.unwrap_or_else(SystemTime::now)),
                tool_key: Some(approval.request.key.clone()),
                tool_name: Some(approval.request.name.clone()),
                actor: approval.decided_by.clone(),
                arguments: Some(approval.request.arguments.to_string()),
                digest: Some(approval.request.digest.to_string()),
                approval_id: Some(int(approval.id.0)),
                approval_use: Some("decided"),
                outcome: match approval.status {
                    Status::Approved => "approved",
                    _ => "rejected",
                },
                reason: approval.reason.clone(),
                requested_by: Some(approval.requested_by.clone()),
                ..Row::default()
            }
        }
        AuditRecord::DecisionRefused(refused) => Row {
            kind: "decision_refused",
            at: unix_ms(refused.at),
            actor: Some(refused.by.clone()),
            approval_id: Some(int(refused.id.0)),
            approval_use: Some("decided"),
            outcome: "refused",
            error: Some(refused.error.clone()),
            ..Row::default()
        },
        AuditRecord::Registry(change) => Row {
            kind: "registry",
            at: unix_ms(change.at),
            actor: Some(change.by.clone()),
            outcome: change.action.as_str(),
            reason: change.reason.clone(),
            tool_keys: Some(serde_json::Value::from(change.keys.clone()).to_string()),
            generation: Some(int(change.generation)),
            ..Row::default()
        },
    }
}

/// A number as the databases store it (they have no unsigned 64-bit type).
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
