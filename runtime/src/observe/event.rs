//! What observers are told: a call ended, the registry changed, a person
//! decided an approval.

use std::error::Error as _;
use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::approval::{Approval, ApprovalId};
use crate::decision::Decision;
use crate::error::CallError;
use crate::registry::Change;
use crate::request::Digest;
use crate::tool_str::ToolStr;

/// Something an executor's observers are told about.
///
/// Serializes with an `"event"` tag (`"call"`, `"registry"`, `"approval"`)
/// beside the fields of what it carries, as an admin API or a log line
/// would show it.
///
/// ```
/// use toolwright::observe::Event;
///
/// fn describe(event: &Event) -> String {
///     match event {
///         Event::Call(call) => format!("#{} {}: {}", call.id, call.name, call.outcome),
///         Event::Registry(change) => format!("registry generation {}", change.generation),
///         Event::Approval(approval) => format!("approval {} {}", approval.id, approval.status),
///         _ => "something else".to_owned(),
///     }
/// }
/// # let _ = describe;
/// ```
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A call ended, however it ended; exactly one per call.
    Call(CallEvent),
    /// The registry changed: tools disabled, enabled, added, removed, or
    /// the policy replaced. The same [`Change`] its subscribers receive.
    Registry(Change),
    /// A person approved or rejected a request, through
    /// [`Approvals::approve`](crate::approval::Approvals::approve) or
    /// [`Approvals::reject`](crate::approval::Approvals::reject): the request as
    /// decided.
    Approval(Approval),
}

/// One call, as it ended: who called which tool with what, what the policy
/// and the approvals said, and how it ended.
///
/// Every call through the executor (`invoke`, `call`, provider tool calls,
/// MCP `tools/call`) gives exactly one, whatever the front end, also when
/// the tool was unknown or disabled, or the caller dropped the call before
/// it ended ([`OutcomeClass::Cancelled`]). A
/// [preflight](crate::Executor::preflight) runs nothing and gives none.
///
/// ```
/// use serde_json::json;
/// use toolwright::observe::{ExecutionLog, Event, OutcomeClass};
/// use toolwright::{tool, Catalog, Container, Executor};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let log = ExecutionLog::new(100).unwrap();
/// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
/// let executor = Executor::builder(catalog, Container::default())
///     .observe(log.clone())
///     .build()
///     .unwrap();
/// executor.invoke("add", json!({"a": 2, "b": 3}), &()).await.unwrap();
///
/// let entry = log.wait_for(1).await.remove(0);
/// let Event::Call(call) = &*entry.event else { panic!("{entry:?}") };
/// assert_eq!(call.key.as_deref(), Some("math.add"));
/// assert_eq!(call.outcome, OutcomeClass::Ok);
/// assert_eq!(call.arguments, Some(json!({"a": 2, "b": 3})));
/// assert!(call.digest.is_some());
/// assert!(call.error.is_none());
/// # }
/// ```
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct CallEvent {
    /// The call's number on its executor: 1, 2, 3… in the order calls
    /// started (events arrive in the order calls end).
    pub id: u64,
    /// When the call started, serialized as milliseconds since the Unix
    /// epoch.
    #[serde(serialize_with = "crate::util::time::unix_ms::serialize")]
    pub at: SystemTime,
    /// The tool's key as served (a namespace's, when mounted under one);
    /// `None` when no tool has the name asked for.
    pub key: Option<ToolStr>,
    /// The tool's name as served, or the name the caller asked for when
    /// there was no such tool.
    pub name: String,
    /// Who called: the context's [`Principal::id`](crate::Principal::id),
    /// when the executor knows the context's type
    /// ([`ExecutorBuilder::principal`](crate::executor::ExecutorBuilder::principal)).
    pub actor: Option<String>,
    /// The arguments, redacted: as validated (defaults applied) once they
    /// were; as the caller sent them when they did not validate; `None`
    /// when the call never got as far as reading them. A property the
    /// tool's input schema marks `"writeOnly": true` shows as
    /// [`REDACTED`](super::REDACTED).
    pub arguments: Option<Value>,
    /// The digest of the validated arguments, the one an approval binds
    /// (computed from the real values, never the redacted ones).
    pub digest: Option<Digest>,
    /// The permission policy's ruling, when a policy ruled on the call.
    pub policy: Option<PolicyRuling>,
    /// The ledger approval the call asked for or used, if any.
    pub approval: Option<ApprovalUse>,
    /// How the call ended.
    pub outcome: OutcomeClass,
    /// How long the call took, from its start to its end (serialized as
    /// `duration_ms`, fractional milliseconds).
    #[serde(rename = "duration_ms", serialize_with = "millis")]
    pub duration: Duration,
    /// The error's texts, when the call failed.
    pub error: Option<ErrorText>,
}

/// What the registry's permission [`Policy`](crate::registry::Policy) ruled on a call.
///
/// ```
/// use toolwright::registry::Decision;
/// use toolwright::observe::PolicyRuling;
///
/// fn refused(ruling: &PolicyRuling) -> bool {
///     matches!(ruling.decision, Decision::Deny { .. })
/// }
/// # let _ = refused;
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PolicyRuling {
    /// Allow, deny (with the reason) or ask.
    pub decision: Decision,
    /// The rule that ruled; `None` for the policy's fallback.
    pub rule: Option<String>,
}

/// What a call did with the executor's approval ledger.
///
/// ```
/// use toolwright::observe::ApprovalUse;
///
/// fn id(used: &ApprovalUse) -> Option<toolwright::approval::ApprovalId> {
///     match used {
///         ApprovalUse::Requested { id } => *id,
///         ApprovalUse::Consumed { id } => Some(*id),
///         _ => None,
///     }
/// }
/// # let _ = id;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "use")]
#[non_exhaustive]
pub enum ApprovalUse {
    /// The call needs a person's approval
    /// ([`CallError::ApprovalRequired`]); `id` is where a ledger recorded
    /// the request, if one did.
    Requested {
        /// The request's id in the ledger.
        id: Option<ApprovalId>,
    },
    /// The call ran on this approval, used up by it.
    Consumed {
        /// The approval's id in the ledger.
        id: ApprovalId,
    },
}

/// The two texts of a failed call's error.
///
/// ```
/// use toolwright::observe::ErrorText;
///
/// fn line(error: &ErrorText) -> String {
///     format!("{} (the model was told: {})", error.message, error.model_message)
/// }
/// # let _ = line;
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ErrorText {
    /// What the model was told: [`CallError::model_message`].
    pub model_message: String,
    /// What the application sees: the error's `Display`, followed by its
    /// sources' (`: `-separated), such as the tool's own error.
    pub message: String,
}

impl ErrorText {
    pub(super) fn of(error: &CallError) -> Self {
        let mut message = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            _ = write!(message, ": {cause}");
            source = cause.source();
        }
        ErrorText {
            model_message: error.model_message(),
            message,
        }
    }
}

/// How a call ended, as [`CallError`] tells the cases apart.
///
/// Displays (and serializes) in snake case, as the call's tracing span
/// records its `outcome` for the same cases.
///
/// ```
/// use toolwright::observe::OutcomeClass;
///
/// assert_eq!(OutcomeClass::ApprovalRequired.to_string(), "approval_required");
/// assert_eq!(serde_json::to_value(OutcomeClass::Ok).unwrap(), "ok");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OutcomeClass {
    /// The call succeeded.
    Ok,
    /// No tool has the name ([`CallError::UnknownTool`]).
    UnknownTool,
    /// The tool is switched off ([`CallError::Disabled`]).
    Disabled,
    /// The arguments did not fit the schema ([`CallError::InvalidArguments`]).
    InvalidArguments,
    /// The registry's policy refused the call ([`CallError::PolicyDenied`]).
    PolicyDenied,
    /// The `authorize` hook refused the call ([`CallError::Denied`]).
    Denied,
    /// A person must approve the call first ([`CallError::ApprovalRequired`]).
    ApprovalRequired,
    /// The `approve` hook refused the call ([`CallError::NotApproved`]).
    NotApproved,
    /// The tool ran past its timeout ([`CallError::Timeout`]).
    Timeout,
    /// The tool or a hook panicked ([`CallError::Panicked`]).
    Panicked,
    /// The caller dropped the call before it ended (an MCP client's
    /// cancellation, say).
    Cancelled,
    /// The tool ran, but closing its scope (a commit) failed
    /// ([`CallError::Finalizer`]).
    FailedCommit,
    /// The tool returned its error ([`CallError::Tool`]).
    ToolError,
    /// Any other failure: a hook's error, a dependency, a context of the
    /// wrong type, an output that did not serialize.
    Error,
}

impl OutcomeClass {
    /// The class of a call's result.
    ///
    /// ```
    /// use toolwright::CallError;
    /// use toolwright::observe::OutcomeClass;
    ///
    /// let denied: Result<(), CallError> = Err(CallError::Denied { key: "notes.read".into() });
    /// assert_eq!(OutcomeClass::of(&denied), OutcomeClass::Denied);
    /// assert_eq!(OutcomeClass::of(&Ok::<_, CallError>(())), OutcomeClass::Ok);
    /// ```
    pub fn of<R>(result: &Result<R, CallError>) -> Self {
        match result {
            Ok(_) => OutcomeClass::Ok,
            Err(error) => Self::of_error(error),
        }
    }

    pub(super) fn of_error(error: &CallError) -> Self {
        match error {
            CallError::UnknownTool { .. } => OutcomeClass::UnknownTool,
            CallError::Disabled { .. } => OutcomeClass::Disabled,
            CallError::InvalidArguments { .. } => OutcomeClass::InvalidArguments,
            CallError::PolicyDenied { .. } => OutcomeClass::PolicyDenied,
            CallError::Denied { .. } => OutcomeClass::Denied,
            CallError::ApprovalRequired(_) => OutcomeClass::ApprovalRequired,
            CallError::NotApproved { .. } => OutcomeClass::NotApproved,
            CallError::Timeout { .. } => OutcomeClass::Timeout,
            CallError::Panicked { .. } => OutcomeClass::Panicked,
            CallError::Finalizer { .. } => OutcomeClass::FailedCommit,
            CallError::Tool { .. } => OutcomeClass::ToolError,
            _ => OutcomeClass::Error,
        }
    }

    /// The class's snake-case name.
    ///
    /// ```
    /// assert_eq!(toolwright::observe::OutcomeClass::FailedCommit.as_str(), "failed_commit");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeClass::Ok => "ok",
            OutcomeClass::UnknownTool => "unknown_tool",
            OutcomeClass::Disabled => "disabled",
            OutcomeClass::InvalidArguments => "invalid_arguments",
            OutcomeClass::PolicyDenied => "policy_denied",
            OutcomeClass::Denied => "denied",
            OutcomeClass::ApprovalRequired => "approval_required",
            OutcomeClass::NotApproved => "not_approved",
            OutcomeClass::Timeout => "timeout",
            OutcomeClass::Panicked => "panicked",
            OutcomeClass::Cancelled => "cancelled",
            OutcomeClass::FailedCommit => "failed_commit",
            OutcomeClass::ToolError => "tool_error",
            OutcomeClass::Error => "error",
        }
    }
}

impl std::fmt::Display for OutcomeClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn millis<S: Serializer>(duration: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(duration.as_secs_f64() * 1_000.0)
}
