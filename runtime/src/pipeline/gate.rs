//! Step 3a: the permission policy's ruling on a call, before the tool's own
//! hooks. The rules live in the registry; a call sees only their ruling.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Watch;
use crate::error::CallError;

/// What the permission policy answers for a call.
///
/// ```
/// use toolwright::Decision;
///
/// let deny = Decision::Deny { reason: "payments are frozen".into() };
/// assert_eq!(serde_json::to_value(&deny).unwrap()["decision"], "deny");
/// assert_eq!(deny.to_string(), "deny: payments are frozen");
/// assert_eq!(Decision::Ask.to_string(), "ask");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "decision")]
#[non_exhaustive]
pub enum Decision {
    /// The call goes on to the tool's own hooks.
    Allow,
    /// The call is refused with [`CallError::PolicyDenied`]; nothing runs.
    Deny {
        /// Why, for the application (the model is only told it may not).
        reason: String,
    },
    /// The call needs a person's approval, even for a `read` tool: a
    /// `write` or `destructive` tool asks its `approve` hook as always; any
    /// other tool fails with [`CallError::ApprovalRequired`].
    Ask,
}

impl Decision {
    fn label(&self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny { .. } => "deny",
            Decision::Ask => "ask",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Decision::Deny { reason } => write!(f, "deny: {reason}"),
            other => f.write_str(other.label()),
        }
    }
}

/// A decision and the rule that made it (`None`: the policy's fallback).
#[derive(Clone, Copy)]
pub(crate) struct Ruling<'a> {
    pub(crate) decision: &'a Decision,
    pub(crate) rule: Option<&'a str>,
}

impl Ruling<'_> {
    /// Puts the ruling in the call's span (`policy`, `policy_rule`).
    pub(super) fn record(self, span: &tracing::Span) {
        if !span.is_disabled() {
            span.record("policy", self.decision.label());
            if let Some(rule) = self.rule {
                span.record("policy_rule", rule);
            }
        }
    }
}

/// Rules that look at a call's arguments, asked once they are validated.
pub(crate) trait ArgumentRules: Send + Sync {
    fn rule(&self, arguments: &Value) -> Ruling<'_>;
}

/// How a tool's calls meet the policy: not at all, with a ruling made from
/// the tool's metadata once per registry generation, or per call.
#[derive(Clone, Copy)]
pub(crate) enum Gate<'a> {
    Open,
    Ruled(Ruling<'a>),
    OnArguments(&'a dyn ArgumentRules),
}

impl Gate<'_> {
    /// The ruling on a call of tool `key`: refused, needing approval
    /// (`true`) or free to go on. Recorded in the call's span.
    /// A ruling on the arguments is also left for the call's event (`watch`).
    /// `arguments` is a `dyn` closure: one copy of this serves every tool.
    #[inline]
    pub(crate) fn check<'v>(
        self,
        key: &'static str,
        arguments: &dyn Fn() -> &'v Value,
        watch: Option<&dyn Watch>,
    ) -> Result<bool, CallError> {
        match self {
            // Most calls: no call to make.
            Gate::Open => Ok(false),
            gate => gate.rule(key, arguments, watch),
        }
    }

    fn rule<'v>(
        self,
        key: &'static str,
        arguments: &dyn Fn() -> &'v Value,
        watch: Option<&dyn Watch>,
    ) -> Result<bool, CallError> {
        let ruling = match self {
            Gate::Open => return Ok(false),
            // Recorded when the call's span was made (`traced`).
            Gate::Ruled(ruling) => ruling,
            Gate::OnArguments(rules) => {
                let ruling = rules.rule(arguments());
                ruling.record(&tracing::Span::current());
                if let Some(watch) = watch {
                    watch.findings().ruled(ruling);
                }
                ruling
            }
        };
        match ruling.decision {
            Decision::Allow => Ok(false),
            Decision::Ask => Ok(true),
            Decision::Deny { reason } => Err(CallError::PolicyDenied {
                key,
                rule: ruling.rule.map(str::to_owned),
                reason: reason.clone(),
            }),
        }
    }
}
