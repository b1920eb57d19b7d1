//! Step 3a: the permission policy's ruling on a call, before the tool's own
//! hooks. The rules live in the registry; a call sees only their ruling.

use serde_json::Value;

use super::Watch;
use crate::decision::Decision;
use crate::error::CallError;
use crate::tool_str::ToolStr;

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
        key: &ToolStr,
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
        key: &ToolStr,
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
                key: key.clone(),
                rule: ruling.rule.map(str::to_owned),
                reason: reason.clone(),
            }),
        }
    }
}
