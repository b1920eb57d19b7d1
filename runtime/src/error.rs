//! The one error type of a call.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::disabled::Disabled;
use crate::request::ApprovalRequest;
use crate::secret::SecretValues;
use crate::tool_str::ToolStr;
use crate::util::excerpt::{Excerpt, Listed, PATH_CHARS, QUOTED_CHARS};

/// A boxed error that keeps its concrete type for `downcast_ref`.
///
/// Tool, hook and provider errors reach the caller as a `BoxError` source of
/// [`CallError`]:
///
/// ```
/// use std::fmt;
/// use serde_json::json;
/// use toolwright::{tool, BoxError, CallError, Catalog, Container, Executor};
///
/// #[derive(Debug)]
/// struct OutOfStock { sku: String }
///
/// impl fmt::Display for OutOfStock {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         write!(f, "`{}` is out of stock", self.sku)
///     }
/// }
///
/// impl std::error::Error for OutOfStock {}
///
/// /// How many items are in stock.
/// #[tool(key = "stock.count", effect = read, authorize = public)]
/// async fn stock(sku: String) -> Result<u32, OutOfStock> {
///     Err(OutOfStock { sku })
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<StockArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// let error = executor.invoke("stock", json!({"sku": "A-1"}), &()).await.unwrap_err();
///
/// let CallError::Tool { source, .. } = error else { panic!("{error}") };
/// let source: BoxError = source;
/// assert_eq!(source.downcast_ref::<OutOfStock>().unwrap().sku, "A-1");
///
/// // A message alone converts too.
/// let plain: BoxError = "policy store down".into();
/// assert_eq!(plain.to_string(), "policy store down");
/// # }
/// ```
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Which hook failed.
///
/// ```
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Executor, Invocation, executor::HookKind};
///
/// /// Export a month's sales.
/// #[tool(key = "reports.export", effect = read, authorize = check_policy)]
/// async fn export_sales(month: u32) -> String { String::new() }
///
/// async fn check_policy(
///     _: &(),
///     _: &Invocation<'_, ExportSalesArgs>,
/// ) -> Result<bool, std::io::Error> {
///     Err(std::io::Error::other("policy store down"))
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<ExportSalesArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// let error = executor.invoke("export_sales", json!({"month": 5}), &()).await.unwrap_err();
/// assert!(matches!(error, CallError::Hook { hook: HookKind::Authorize, .. }));
/// assert_eq!(error.to_string(), "the authorize hook of `reports.export` failed");
/// assert_eq!(HookKind::Approve.to_string(), "approve");
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum HookKind {
    /// The `authorize` hook.
    Authorize,
    /// The `approve` hook.
    Approve,
}

impl fmt::Display for HookKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HookKind::Authorize => "authorize",
            HookKind::Approve => "approve",
        })
    }
}

/// One way the arguments break the tool's advertised schema, or a rule of
/// a parameter's type that the schema does not state (a UUID's syntax, a
/// `#[serde(try_from)]` newtype's check), reported at that parameter.
///
/// `Display` is bounded: it quotes at most the first 100 characters of the
/// path and the first 160 and last 80 of the message, with a marker saying
/// how many characters it left out.
///
/// ```
/// use toolwright::executor::Violation;
/// let v = Violation { path: "/quantity".into(), message: "0 is less than the minimum of 1".into() };
/// assert_eq!(v.to_string(), "/quantity: 0 is less than the minimum of 1");
///
/// // A key of a map argument, as long as the caller made it.
/// let key = "k".repeat(1_000_000);
/// let v = Violation { path: format!("/labels/{key}"), message: "\"x\" is not of type \"integer\"".into() };
/// assert!(v.to_string().len() < 200);
/// assert!(v.to_string().ends_with("more characters]: \"x\" is not of type \"integer\""));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// JSON pointer to the offending value (`""` is the whole argument
    /// object), in full.
    pub path: String,
    /// What is wrong there. A schema violation quotes the offending value up
    /// to a short prefix and names at most 10 unexpected properties (the
    /// value itself is at `path` in the arguments the caller passed); a
    /// type's own message (serde's, a `try_from` check's) is as it wrote it.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = Excerpt::message(&self.message);
        if self.path.is_empty() {
            write!(f, "(root): {message}")
        } else {
            write!(f, "{}: {message}", Excerpt::prefix(&self.path, PATH_CHARS))
        }
    }
}

/// Every violation of one call's arguments, in the order the validator found them.
///
/// Serializes as a list of `{"path", "message"}` objects, which a model can
/// use to correct every mistake at once. `Display` names the first 10 and
/// counts the rest (`…; and 7 more`).
///
/// ```
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Executor, executor::{Violation, Violations}};
///
/// /// Quote a price for some quantity of a product.
/// #[tool(key = "orders.quote", effect = read, authorize = public)]
/// async fn quote(
///     sku: String,
///     #[schemars(range(min = 1))]
///     quantity: u32,
/// ) -> u64 {
///     0
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<QuoteArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// let error = executor.invoke("quote", json!({"quantity": 0}), &()).await.unwrap_err();
///
/// let CallError::InvalidArguments { violations, .. } = error else { panic!("{error}") };
/// // The missing `sku` is reported on the whole object (path `""`).
/// assert_eq!(violations.0.len(), 2);
/// let quantity = violations.0.iter().find(|v| v.path == "/quantity").unwrap();
/// assert_eq!(quantity.message, "0 is less than the minimum of 1");
///
/// let feedback = serde_json::to_value(&violations).unwrap();
/// assert!(feedback.as_array().unwrap().iter().any(|v| v["path"] == "/quantity"));
///
/// // Every violation is kept; the text lists the first 10.
/// let many = Violations(
///     (0..25).map(|i| Violation { path: format!("/{i}"), message: "bad".into() }).collect(),
/// );
/// assert!(many.to_string().ends_with("/9: bad; and 15 more"));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Violations(pub Vec<Violation>);

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Listed::new(self.0.iter(), "; ").fmt(f)
    }
}

// Every step of every call moves its `Result<Value, CallError>` on: a
// variant that makes the error larger than 64 bytes slows every call
// (box what it adds instead).
#[cfg(target_pointer_width = "64")]
const _: () = assert!(size_of::<CallError>() <= 64);

/// Why a call did not produce a result.
///
/// Its text is bounded, whatever the caller sent: `Display` (for the
/// application's logs) and [`CallError::model_message`] (for the model)
/// quote an unknown tool's name or an offending value up to a short prefix,
/// and name at most 10 violations, then count the rest. The fields keep the
/// detail: the name as asked, every violation with its full path and message
/// (see [`Violation::message`]).
///
/// Tool, hook and provider errors keep their source, so an application can
/// `downcast_ref` to its own error type:
///
/// ```
/// use std::error::Error as _;
/// use toolwright::CallError;
///
/// let err = CallError::Tool {
///     key: "orders.place".into(),
///     source: Box::new(std::io::Error::other("disk full")),
/// };
/// let io = err.source().unwrap().downcast_ref::<std::io::Error>().unwrap();
/// assert_eq!(io.to_string(), "disk full");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// No tool of that name is in the executor's catalog.
    #[error("unknown tool `{}`", Excerpt::prefix(name, QUOTED_CHARS))]
    UnknownTool {
        /// The name the caller asked for, in full.
        name: String,
    },
    /// The tool is switched off in the registry; nothing ran. The model is
    /// told only that the tool is unavailable.
    #[error("tool `{key}` is disabled: {}", .disabled.reason)]
    Disabled {
        /// The tool's key.
        key: ToolStr,
        /// Why, by whom and since when.
        disabled: Arc<Disabled>,
    },
    /// The permission policy refused the call; nothing ran.
    #[error("the policy refuses calls to `{key}` ({}): {reason}", .rule.as_deref().unwrap_or("fallback"))]
    PolicyDenied {
        /// The tool's key.
        key: ToolStr,
        /// The rule that refused (`None`: the policy's fallback).
        rule: Option<String>,
        /// The rule's reason.
        reason: String,
    },
    /// The arguments break the tool's advertised schema; nothing ran.
    #[error("invalid arguments for `{key}`: {violations}")]
    InvalidArguments {
        /// The tool's key.
        key: ToolStr,
        /// Every violation found.
        violations: Violations,
    },
    /// The caller passed a context of another type than the tool's hooks take.
    #[error("tool `{key}` takes a context of type `{expected}`, but the caller passed `{found}`")]
    ContextMismatch {
        /// The tool's key.
        key: ToolStr,
        /// The type the tool's hooks or parameters take.
        expected: &'static str,
        /// The type the caller passed.
        found: &'static str,
    },
    /// The `authorize` hook refused; neither `approve` nor the body ran.
    #[error("not authorized to call `{key}`")]
    Denied {
        /// The tool's key.
        key: ToolStr,
    },
    /// The `approve` hook refused; the body did not run.
    #[error("the call to `{key}` was not approved")]
    NotApproved {
        /// The tool's key.
        key: ToolStr,
    },
    /// The `approve` hook answered [`crate::executor::Verdict::Pending`]: a person must
    /// approve this exact call (see [`ApprovalRequest::digest`]) before it runs.
    #[error("the call to `{}` needs approval (digest {})", .0.key, .0.digest)]
    ApprovalRequired(Box<ApprovalRequest>),
    /// The call needs a person's approval, but its requester already has
    /// as many requests waiting for a decision as the approvals allow
    /// ([`ApprovalsBuilder::max_pending`](crate::approval::ApprovalsBuilder::max_pending)):
    /// this one was not recorded, and nothing ran. The model is told how
    /// many wait, and not to retry until some are decided.
    ///
    /// ```
    /// use toolwright::CallError;
    ///
    /// let error = CallError::TooManyPending {
    ///     key: "orders.refund".into(),
    ///     requested_by: "agent-7".into(),
    ///     pending: 100,
    /// };
    /// assert_eq!(
    ///     error.to_string(),
    ///     "the call to `orders.refund` needs approval, but `agent-7` already has 100 requests waiting for a decision"
    /// );
    /// assert!(error.model_message().starts_with("You already have 100 requests waiting"));
    /// ```
    #[error(
        "the call to `{key}` needs approval, but `{requested_by}` already has {pending} requests waiting for a decision"
    )]
    TooManyPending {
        /// The tool's key.
        key: ToolStr,
        /// The requester.
        requested_by: String,
        /// How many of their requests wait: the most allowed.
        pending: usize,
    },
    /// An injected type has no provider in the container.
    #[error("tool `{key}` needs `{type_name}`, which has no provider")]
    DependencyMissing {
        /// The tool's key.
        key: ToolStr,
        /// The type that could not be resolved.
        type_name: &'static str,
    },
    /// A request provider failed to build its value.
    #[error("building `{type_name}` for `{key}` failed")]
    Dependency {
        /// The tool's key.
        key: ToolStr,
        /// The type whose provider failed.
        type_name: &'static str,
        /// The provider's error.
        #[source]
        source: BoxError,
    },
    /// A hook returned an error.
    #[error("the {hook} hook of `{key}` failed")]
    Hook {
        /// The tool's key.
        key: ToolStr,
        /// Which hook.
        hook: HookKind,
        /// The hook's error.
        #[source]
        source: BoxError,
    },
    /// The tool body returned an error.
    #[error("tool `{key}` failed")]
    Tool {
        /// The tool's key.
        key: ToolStr,
        /// The tool's error.
        #[source]
        source: BoxError,
    },
    /// The call panicked (in the tool body, a hook, a request provider, or
    /// the arguments' or result's serde impls); the panic was caught.
    #[error("tool `{key}` panicked: {message}")]
    Panicked {
        /// The tool's key.
        key: ToolStr,
        /// The panic message, for logs only.
        message: String,
    },
    /// The tool ran longer than its timeout and was cancelled.
    #[error("tool `{key}` timed out after {after:?}")]
    Timeout {
        /// The tool's key.
        key: ToolStr,
        /// The timeout that expired.
        after: Duration,
    },
    /// The tool ran, but a finalizer of its scope failed (a transaction's
    /// commit, say), so what it did may not have taken effect. The
    /// remaining finalizers still ran, seeing [`Outcome::Error`](crate::scope::Outcome::Error).
    #[error("tool `{key}` ran, but closing its scope failed: {}", finalizer_of(*.finalizer))]
    Finalizer {
        /// The tool's key.
        key: ToolStr,
        /// The type whose provider registered the finalizer, if a provider did.
        finalizer: Option<&'static str>,
        /// The finalizer's error (or its panic).
        #[source]
        source: BoxError,
    },
    /// The executor's [`AuditTrail`](crate::audit::AuditTrail) could not
    /// record the call of a `write` or `destructive` tool, so the call
    /// failed closed: its scope's finalizers saw
    /// [`Outcome::Error`](crate::scope::Outcome::Error) (a transaction rolls
    /// back). A body with effects no finalizer undoes may still have made
    /// them. The model is only told the tool is unavailable.
    #[error("the call of `{key}` could not be recorded in the audit trail, so it failed")]
    AuditFailed {
        /// The tool's key.
        key: ToolStr,
        /// Why the trail could not record.
        #[source]
        source: AuditError,
    },
    /// A call sent with an idempotency key did not run, because of what
    /// the key already stands for ([`Refusal`]): a call with other
    /// arguments, one still running, or one that ended without a result
    /// to repeat. A repeat of a call that succeeded is not an error: it
    /// returns the recorded result. The `idempotency` module has the rules.
    ///
    /// ```
    /// use toolwright::CallError;
    /// use toolwright::idempotency::Refusal;
    ///
    /// let error = CallError::NotRepeated {
    ///     key: "orders.place".into(),
    ///     idempotency_key: "order-7".into(),
    ///     refusal: Refusal::Conflict,
    /// };
    /// assert_eq!(
    ///     error.to_string(),
    ///     "the call to `orders.place` with idempotency key `order-7` did not run: the key was first sent with another tool or other arguments"
    /// );
    /// assert!(error.model_message().contains("new idempotency key"));
    /// ```
    #[error(
        "the call to `{key}` with idempotency key `{}` did not run: {refusal}",
        Excerpt::prefix(idempotency_key, QUOTED_CHARS)
    )]
    NotRepeated {
        /// The tool's key.
        key: ToolStr,
        /// The idempotency key the caller sent.
        idempotency_key: Box<str>,
        /// Why the call did not run.
        #[source]
        refusal: Refusal,
    },
    /// The tool's result could not be serialized.
    #[error("the result of `{key}` could not be serialized")]
    Output {
        /// The tool's key.
        key: ToolStr,
        /// The serializer's error.
        #[source]
        source: serde_json::Error,
    },
}

/// Names a failed finalizer by the provider that registered it.
fn finalizer_of(provider: Option<&str>) -> String {
    match provider {
        Some(type_name) => format!("the finalizer of `{type_name}` failed"),
        None => "a finalizer failed".to_owned(),
    }
}

impl CallError {
    /// What a model or MCP client is told about this error: enough to
    /// correct itself (violations with their paths) or to tell the user
    /// (denied, needs approval), and never an internal: no panic message, no
    /// error source, no injected value, no type name.
    ///
    /// Bounded, so that a hostile or confused caller cannot flood the
    /// model's context: a name is quoted up to its first 64 characters, and
    /// at most 10 violations are listed.
    ///
    /// ```
    /// use toolwright::CallError;
    ///
    /// let panicked = CallError::Panicked { key: "orders.place".into(), message: "index out of bounds".into() };
    /// assert_eq!(panicked.model_message(), "The tool failed.");
    /// let denied = CallError::Denied { key: "orders.place".into() };
    /// assert_eq!(denied.model_message(), "You are not allowed to call this tool.");
    ///
    /// let unknown = CallError::UnknownTool { name: "x".repeat(900_000) };
    /// assert!(unknown.model_message().len() < 200);
    /// assert!(unknown.model_message().contains("[899936 more characters]"));
    /// ```
    pub fn model_message(&self) -> String {
        match self {
            CallError::UnknownTool { name } => format!(
                "There is no tool named `{}`.",
                Excerpt::prefix(name, QUOTED_CHARS)
            ),
            CallError::InvalidArguments { violations, .. } => {
                format!("Invalid arguments: {violations}. Correct them and call the tool again.")
            }
            CallError::Disabled { .. } => "This tool is unavailable.".into(),
            CallError::Denied { .. } | CallError::PolicyDenied { .. } => {
                "You are not allowed to call this tool.".into()
            }
            CallError::NotApproved { .. } => "The call was not approved.".into(),
            CallError::ApprovalRequired(request) => match request.id {
                // Recorded in a ledger: the id is what a person decides by.
                Some(id) => format!(
                    "This call needs a person's approval before it can run (request {id}). Tell the user; do not retry until it is approved."
                ),
                None => format!(
                    "This call needs a person's approval before it can run (approval {}). Tell the user; do not retry until it is approved.",
                    request.digest
                ),
            },
            CallError::TooManyPending { pending, .. } => format!(
                "You already have {pending} requests waiting for a person's approval, the most allowed, so this call was not recorded. Tell the user; do not retry until some are decided."
            ),
            CallError::Timeout { .. } => "The tool did not finish in time.".into(),
            CallError::AuditFailed { .. } => {
                "The tool is unavailable right now; the call failed.".into()
            }
            CallError::NotRepeated { refusal, .. } => refusal.model_message(),
            _ => "The tool failed.".into(),
        }
    }

    /// The key of the tool the error concerns (`None` for an unknown tool).
    ///
    /// ```
    /// use toolwright::CallError;
    /// assert_eq!(CallError::Denied { key: "orders.place".into() }.key(), Some("orders.place"));
    /// assert_eq!(CallError::UnknownTool { name: "nope".into() }.key(), None);
    /// ```
    pub fn key(&self) -> Option<&str> {
        match self {
            CallError::UnknownTool { .. } => None,
            CallError::ApprovalRequired(request) => Some(&request.key),
            CallError::InvalidArguments { key, .. }
            | CallError::ContextMismatch { key, .. }
            | CallError::Disabled { key, .. }
            | CallError::PolicyDenied { key, .. }
            | CallError::Denied { key }
            | CallError::NotApproved { key }
            | CallError::TooManyPending { key, .. }
            | CallError::DependencyMissing { key, .. }
            | CallError::Dependency { key, .. }
            | CallError::Hook { key, .. }
            | CallError::Tool { key, .. }
            | CallError::Panicked { key, .. }
            | CallError::Timeout { key, .. }
            | CallError::Output { key, .. }
            | CallError::Finalizer { key, .. }
            | CallError::NotRepeated { key, .. }
            | CallError::AuditFailed { key, .. } => Some(key),
        }
    }

    /// The same error with the text of the call's secret values (its
    /// `#[secret]` arguments) replaced by [`REDACTED`](crate::observe::REDACTED)
    /// in every message it carries: a violation's path and message, a panic
    /// message, a policy's reason. A source whose text (`Display` or
    /// `Debug`, its own or a source's) quotes a secret is replaced by one
    /// that says the same, scrubbed; a source that quotes none is kept as
    /// it is, and still downcasts.
    pub(crate) fn scrubbed(mut self, secrets: &SecretValues) -> Self {
        if secrets.is_empty() {
            return self;
        }
        match &mut self {
            CallError::InvalidArguments { violations, .. } => {
                for violation in &mut violations.0 {
                    secrets.scrub_string(&mut violation.path);
                    secrets.scrub_string(&mut violation.message);
                }
            }
            CallError::Panicked { message, .. } => secrets.scrub_string(message),
            CallError::PolicyDenied { reason, .. } => secrets.scrub_string(reason),
            CallError::Dependency { source, .. }
            | CallError::Hook { source, .. }
            | CallError::Tool { source, .. }
            | CallError::Finalizer { source, .. }
                if quotes_secret(&**source, secrets) =>
            {
                *source = Box::new(Scrubbed::of(&**source, secrets));
            }
            CallError::Output { source, .. } if quotes_secret(source, secrets) => {
                let text = secrets.scrub(&source.to_string()).into_owned();
                *source = <serde_json::Error as serde::ser::Error>::custom(text);
            }
            _ => {}
        }
        self
    }

    /// The same error, naming the tool by `served`, the key it is served
    /// under (a namespace's), rather than the key it was declared with.
    pub(crate) fn served_as(mut self, served: &ToolStr) -> Self {
        match &mut self {
            CallError::UnknownTool { .. } | CallError::ApprovalRequired(_) => {}
            CallError::InvalidArguments { key, .. }
            | CallError::ContextMismatch { key, .. }
            | CallError::Disabled { key, .. }
            | CallError::PolicyDenied { key, .. }
            | CallError::Denied { key }
            | CallError::NotApproved { key }
            | CallError::TooManyPending { key, .. }
            | CallError::DependencyMissing { key, .. }
            | CallError::Dependency { key, .. }
            | CallError::Hook { key, .. }
            | CallError::Tool { key, .. }
            | CallError::Panicked { key, .. }
            | CallError::Timeout { key, .. }
            | CallError::Output { key, .. }
            | CallError::Finalizer { key, .. }
            | CallError::NotRepeated { key, .. }
            | CallError::AuditFailed { key, .. } => *key = served.clone(),
        }
        self
    }
}

/// Whether `error`, or any of its sources, quotes a secret in its
/// `Display` or `Debug` text.
fn quotes_secret(error: &(dyn std::error::Error + 'static), secrets: &SecretValues) -> bool {
    let mut next = Some(error);
    while let Some(error) = next {
        if secrets.leak_in(&error.to_string()) || secrets.leak_in(&format!("{error:?}")) {
            return true;
        }
        next = error.source();
    }
    false
}

/// An error whose text quoted a secret: the same texts, its sources'
/// included, with the secret values replaced by
/// [`REDACTED`](crate::observe::REDACTED).
struct Scrubbed {
    display: String,
    debug: String,
    source: Option<Box<Scrubbed>>,
}

impl Scrubbed {
    fn of(error: &(dyn std::error::Error + 'static), secrets: &SecretValues) -> Self {
        Scrubbed {
            display: secrets.scrub(&error.to_string()).into_owned(),
            debug: secrets.scrub(&format!("{error:?}")).into_owned(),
            source: error
                .source()
                .map(|source| Box::new(Scrubbed::of(source, secrets))),
        }
    }
}

impl fmt::Display for Scrubbed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display)
    }
}

impl fmt::Debug for Scrubbed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.debug)
    }
}

impl std::error::Error for Scrubbed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|source| source as _)
    }
}

/// Why a call sent with an idempotency key did not run
/// ([`CallError::NotRepeated`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The key was first sent with another tool or other arguments: a new
    /// call needs a new key.
    #[error("the key was first sent with another tool or other arguments")]
    Conflict,
    /// A call with the key is still running, and did not end within the
    /// wait the executor allows (`IdempotencyBuilder::wait`).
    #[error("a call with the key is still running")]
    InProgress,
    /// The call with the key ran and failed; it is not run again. `message`
    /// is what the model was told then.
    #[error("the call with the key failed: {message}")]
    Failed {
        /// The first call's [`CallError::model_message`].
        message: String,
    },
    /// The call with the key stopped midway (a timeout, a panic, a caller
    /// that went away, a process that died), so what it changed is
    /// unknown: it is not run again, and a person must look.
    #[error("the call with the key ended and its outcome is unknown")]
    Unknown,
    /// The store of idempotency keys could not be read or written: a call
    /// with a key does not run without it.
    #[error("the idempotency store is unavailable")]
    Unavailable(#[source] BoxError),
}

impl Refusal {
    /// What a model is told.
    fn model_message(&self) -> String {
        match self {
            Refusal::Conflict => "This idempotency key was already used for another call. Send a new idempotency key for new arguments.".into(),
            Refusal::InProgress => "A call with this idempotency key is still running. Try again later with the same key.".into(),
            Refusal::Failed { message } => format!("This call already ran with this idempotency key and failed: {message}"),
            Refusal::Unknown => "This call already ran with this idempotency key, and whether it took effect is unknown. It will not run again; tell the user.".into(),
            Refusal::Unavailable(_) => "The tool is unavailable right now; the call failed.".into(),
        }
    }
}

/// An [`AuditTrail`](crate::audit::AuditTrail) could not record: its store is
/// unreachable, full, or refused the record. The call (or decision) it was
/// for fails closed.
///
/// ```
/// use toolwright::audit::AuditError;
///
/// let error = AuditError::new("disk full");
/// assert_eq!(error.to_string(), "the audit trail could not record");
/// assert_eq!(std::error::Error::source(&error).unwrap().to_string(), "disk full");
/// ```
#[derive(Debug, thiserror::Error)]
#[error("the audit trail could not record")]
pub struct AuditError(#[source] pub(crate) BoxError);

impl AuditError {
    /// The error of a trail that could not record, because of `source`.
    ///
    /// ```
    /// use toolwright::audit::AuditError;
    /// let error = AuditError::new(std::io::Error::other("unreachable"));
    /// # let _ = error;
    /// ```
    pub fn new(source: impl Into<BoxError>) -> Self {
        AuditError(source.into())
    }
}
