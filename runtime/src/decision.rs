//! What a permission policy answers for a call. The policy's rules live
//! in the registry; the pipeline, below it, acts on their answer.

use serde::{Deserialize, Serialize};

/// What the permission policy answers for a call.
///
/// ```
/// use toolwright::registry::Decision;
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
    /// The call is refused with [`CallError::PolicyDenied`](crate::CallError::PolicyDenied); nothing runs.
    Deny {
        /// Why, for the application (the model is only told it may not).
        reason: String,
    },
    /// The call needs a person's approval, even for a `read` tool: a
    /// `write` or `destructive` tool asks its `approve` hook as always; any
    /// other tool fails with [`CallError::ApprovalRequired`](crate::CallError::ApprovalRequired).
    Ask,
}

impl Decision {
    /// `allow`, `deny` or `ask`, as a span records it.
    pub(crate) fn label(&self) -> &'static str {
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
