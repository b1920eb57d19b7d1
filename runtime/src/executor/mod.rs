//! The executor: the handle every front end calls, over the registry and the
//! one pipeline (`crate::pipeline`).

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::approval::{Approval, Approvals, DecisionTap, DecisionTrail};
use crate::audit::{AuditTrail, DecisionAudit, Trail};
use crate::catalog::ToolEntry;
use crate::context::ErasedContext;
use crate::error::CallError;
use crate::observe::{
    self, CallTrail, Event, Observer, ObserverStats, Observers, Pending, Recording,
};
use crate::pipeline::{
    self, CallNumbers, Env, ExclusiveGate, Services, Surroundings, Traced, Watch,
};
use crate::principal::{Identify, Principal};
use crate::registry::{Change, Current, Registry, Tap, Tools, View};
use crate::request::ApprovalRequest;
use crate::scope::{Container, Requirement};
use crate::tool::{Location, Tool};
use crate::util::panic::CatchUnwind;

/// Runs tools: validate, authorize, approve, inject, run, close, serialize.
///
/// Cheap to clone (an `Arc` inside); every front end (direct calls, typed
/// calls, MCP, model providers) goes through the same pipeline:
///
/// 1. find the tool by name;
/// 2. validate the arguments against the schema the catalog advertises
///    (every violation, with JSON-pointer paths), then deserialize;
/// 3. `authorize` on the validated arguments: if it refuses, nothing else runs;
/// 4. for `write` and `destructive` tools, `approve` the same arguments;
/// 5. for a tool with injected parameters, open the call's REQUEST scope;
/// 6. resolve the injected parameters and run the body, both under the
///    tool's timeout (hooks are not), catching panics;
/// 7. close the scope with the outcome (finalizers, newest first); a
///    finalizer that fails after the body succeeded (a commit) fails the call;
/// 8. serialize the result.
///
/// ```
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Executor, Invocation};
///
/// struct Actor { admin: bool }
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = admins)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// async fn admins<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool { actor.admin }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
///
/// let sum = executor.invoke("add", json!({"a": 2, "b": 3}), &Actor { admin: true }).await;
/// assert_eq!(sum.unwrap(), json!(5));
///
/// let denied = executor.invoke("add", json!({"a": 2, "b": 3}), &Actor { admin: false }).await;
/// assert!(matches!(denied, Err(CallError::Denied { .. })));
///
/// let typed = executor.call(AddArgs { a: 1, b: 1 }, &Actor { admin: true }).await;
/// assert_eq!(typed.unwrap(), 2);
/// # }
/// ```
#[derive(Clone)]
pub struct Executor {
    inner: Arc<ExecutorInner>,
    /// What this handle lists and calls, when narrowed by [`Executor::view`].
    view: Option<View>,
}

struct ExecutorInner {
    registry: Registry,
    services: Services,
    observing: Option<Observing>,
    /// What records the approvals' decisions in the audit trail (held
    /// here: the approvals hold it weakly).
    _decisions_audit: Option<Arc<DecisionAudit>>,
    /// Where calls of `write` and `destructive` tools are recorded.
    audit: Option<Trail>,
}

/// An executor's running observers, and the taps through which its
/// registry and approvals reach them (held here: they hold them weakly).
struct Observing {
    observers: Arc<Observers>,
    _registry: Arc<Tap>,
    _decisions: Option<Arc<DecisionTap>>,
}

/// A tool looked up for a call: the snapshot that holds it (kept for the
/// call, whatever the registry does meanwhile), and where in it.
pub(crate) struct Found {
    snapshot: Current,
    index: usize,
}

impl Found {
    pub(crate) fn tool(&self) -> &ToolEntry {
        self.snapshot.catalog.entry(self.index)
    }
}

/// One reason the executor could not be built.
///
/// ```
/// use toolwright::{tool, Catalog, Container, Executor, ExecutorProblem, Inject};
///
/// trait Mailer: Send + Sync {}
///
/// /// Check that the mail server answers.
/// #[tool(key = "mail.status", effect = read, authorize = public)]
/// async fn mail_status(_mailer: Inject<dyn Mailer>) -> bool { true }
///
/// let catalog = Catalog::builder().register::<MailStatusArgs>().build().unwrap();
/// let error = Executor::new(catalog, Container::default()).unwrap_err();
/// match &error.problems[..] {
///     [ExecutorProblem::MissingProvider { tool, type_name, .. }] => {
///         assert_eq!(*tool, "mail.status");
///         assert!(type_name.ends_with("Mailer"));
///     }
///     other => panic!("unexpected problems: {other:?}"),
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecutorProblem {
    /// A tool injects a type that no APP value or REQUEST provider gives.
    #[error(
        "tool `{tool}` at {location} injects `{type_name}`, but the container provides no `{type_name}`"
    )]
    MissingProvider {
        /// The tool's key.
        tool: &'static str,
        /// Where the tool was declared.
        location: Location,
        /// The type nothing provides.
        type_name: &'static str,
    },
    /// A tool's input schema does not compile (a bad `pattern`, say).
    #[error("the input schema of tool `{tool}` at {location} does not compile: {message}")]
    InvalidSchema {
        /// The tool's key.
        tool: &'static str,
        /// Where the tool was declared.
        location: Location,
        /// The schema compiler's message.
        message: String,
    },
    /// An observer's thread could not be started.
    #[error("an observer's thread could not be started: {message}")]
    ObserverThread {
        /// The operating system's message.
        message: String,
    },
}

/// The executor could not be built: every problem found, in catalog order.
///
/// ```
/// use toolwright::{tool, Catalog, Container, Executor, ExecutorProblem, Inject};
///
/// struct Db;
///
/// /// Count the orders.
/// #[tool(key = "orders.count", effect = read, authorize = public)]
/// async fn count_orders(_db: Inject<Db>) -> u64 { 0 }
///
/// /// Find products by code.
/// #[tool(key = "products.find", effect = read, authorize = public)]
/// async fn find_products(
///     #[schemars(regex(pattern = "[A-Z"))]
///     code: String,
/// ) -> Vec<u64> {
///     Vec::new()
/// }
///
/// let catalog = Catalog::builder()
///     .register::<CountOrdersArgs>()
///     .register::<FindProductsArgs>()
///     .build()
///     .unwrap();
/// let error = Executor::new(catalog, Container::default()).unwrap_err();
/// // Every problem at once, so that one start-up shows everything to fix.
/// assert!(matches!(
///     error.problems[..],
///     [
///         ExecutorProblem::MissingProvider { tool: "orders.count", .. },
///         ExecutorProblem::InvalidSchema { tool: "products.find", .. },
///     ]
/// ));
/// let message = error.to_string();
/// assert!(message.starts_with("tool `orders.count` at "));
/// assert!(message.contains("; the input schema of tool `products.find` at "));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", crate::util::Joined(.problems))]
pub struct ExecutorError {
    /// Every problem.
    pub problems: Vec<ExecutorProblem>,
}

/// Builds an [`Executor`] with options.
///
/// ```
/// use std::time::Duration;
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Executor};
///
/// /// Wait for a slow upstream service.
/// #[tool(key = "demo.slow", effect = read, authorize = public)]
/// async fn slow() -> bool {
///     tokio::time::sleep(Duration::from_secs(60)).await;
///     true
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<SlowArgs>().build().unwrap();
/// let executor = Executor::builder(catalog, Container::default())
///     .default_timeout(Duration::from_millis(10))
///     .build()
///     .unwrap();
/// let error = executor.invoke("slow", json!({}), &()).await.unwrap_err();
/// assert!(matches!(error, CallError::Timeout { after, .. } if after == Duration::from_millis(10)));
/// # }
/// ```
#[derive(Debug)]
pub struct ExecutorBuilder {
    registry: Registry,
    container: Container,
    default_timeout: Option<Duration>,
    max_result: usize,
    approvals: Option<Approvals>,
    principal: Option<Identify>,
    observers: Vec<Pending>,
    observer_queue: usize,
    audit: Option<Trail>,
}

/// At most how many characters of a result a model is shown, for tools
/// that declare no `max_result` and executors built without
/// [`ExecutorBuilder::max_result`]: about 12,000 tokens of English or JSON.
///
/// ```
/// assert_eq!(toolwright::DEFAULT_MAX_RESULT, 50_000);
/// ```
pub const DEFAULT_MAX_RESULT: usize = 50_000;

impl ExecutorBuilder {
    /// The timeout of tools that declare none (default: none).
    ///
    /// ```
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor};
    ///
    /// /// Render a report, which may take a while.
    /// #[tool(key = "reports.render", effect = read, timeout = "20ms", authorize = public)]
    /// async fn render_report() -> String {
    ///     tokio::time::sleep(Duration::from_secs(60)).await;
    ///     String::new()
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<RenderReportArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .default_timeout(Duration::from_secs(30))
    ///     .build()
    ///     .unwrap();
    /// // A tool's own timeout wins over the default.
    /// let error = executor.invoke("render_report", json!({}), &()).await.unwrap_err();
    /// assert!(matches!(error, CallError::Timeout { after, .. } if after == Duration::from_millis(20)));
    /// # }
    /// ```
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = Some(timeout);
        self
    }

    /// At most how many characters of a result a model is shown, for tools
    /// that declare no `max_result` (default: [`DEFAULT_MAX_RESULT`]).
    ///
    /// Past it, the text a model reads (provider result messages, MCP text
    /// content, [`CallOutcome::model_text`](crate::providers::CallOutcome::model_text))
    /// is the result's first `chars` characters, then a marker that says
    /// how many more there were: `…[12345 more characters]`. The
    /// application still gets the whole value ([`Executor::invoke`],
    /// [`CallOutcome::result`](crate::providers::CallOutcome::result)).
    /// `usize::MAX` shows every result whole.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::providers::ToolCall;
    /// use toolwright::{tool, Catalog, Container, Executor};
    ///
    /// /// Read a log file.
    /// #[tool(key = "logs.read", effect = read, authorize = public)]
    /// async fn read_log() -> String { "x".repeat(1_000) }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<ReadLogArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .max_result(100)
    ///     .build()
    ///     .unwrap();
    /// let outcomes = executor.run_calls(vec![ToolCall::new("c1", "read_log", json!({}))], &()).await;
    /// assert_eq!(outcomes[0].model_text(), format!("{}…[900 more characters]", "x".repeat(100)));
    /// // The application still has all of it.
    /// assert_eq!(outcomes[0].result.as_ref().unwrap().as_str().unwrap().len(), 1_000);
    /// # }
    /// ```
    pub fn max_result(mut self, chars: usize) -> Self {
        self.max_result = chars;
        self
    }

    /// The approvals that tools naming the ledger hook
    /// ([`Principal::approval_ledger`](crate::Principal::approval_ledger))
    /// record requests in and consume approvals from (default: none; such
    /// a tool then fails closed with [`LedgerError::NoLedger`](crate::approval::LedgerError::NoLedger)).
    /// A call that consumed an approval settles it when it ends.
    ///
    /// See [`Approvals`] for the whole flow.
    pub fn approvals(mut self, approvals: Approvals) -> Self {
        self.approvals = Some(approvals);
        self
    }

    /// The context type `C` callers pass, as the actor a request is
    /// recorded for when the registry's [`Policy`](crate::Policy) answers
    /// "ask" about a tool with no `approve` hook of its own (a read tool,
    /// say): with [`approvals`](Self::approvals), such a call then goes
    /// through the ledger exactly like one whose hook is
    /// [`Principal::approval_ledger`](crate::Principal::approval_ledger).
    /// Without both, it waits for a person with nobody to record the
    /// request: [`CallError::ApprovalRequired`] without an id.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::approval::MemoryLedger;
    /// use toolwright::{tool, Approvals, CallError, Catalog, Container, Executor, Policy};
    /// use toolwright::{Principal, Rule, Selector};
    ///
    /// struct Caller(&'static str);
    /// impl Principal for Caller { fn id(&self) -> &str { self.0 } }
    ///
    /// /// Show an account's balance.
    /// #[tool(key = "accounts.balance", effect = read, authorize = public)]
    /// async fn balance(account: u64) -> u64 { 1_000 }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let approvals = Approvals::new(MemoryLedger::new());
    /// let catalog = Catalog::builder().register::<BalanceArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .approvals(approvals.clone())
    ///     .principal::<Caller>()
    ///     .build()
    ///     .unwrap();
    /// executor.registry().set_policy(
    ///     Policy::new().rule(Rule::ask("balances are private", Selector::name("balance"))),
    /// );
    ///
    /// let asked = executor.invoke("balance", json!({"account": 7}), &Caller("ann")).await;
    /// let Err(CallError::ApprovalRequired(request)) = asked else { panic!("{asked:?}") };
    /// approvals.approve(request.id.unwrap(), &Caller("bo"), "her own account").await.unwrap();
    /// let shown = executor.invoke("balance", json!({"account": 7}), &Caller("ann")).await;
    /// assert_eq!(shown.unwrap(), 1_000);
    /// # }
    /// ```
    pub fn principal<C: Principal>(mut self) -> Self {
        self.principal = Some(crate::principal::identify::<C>);
        self
    }

    /// Tells `observer` about every call, registry change and approval
    /// decision of the executor (see [`observe`](crate::observe)). Call it
    /// once per observer; each gets its own queue and thread.
    ///
    /// A call never waits for an observer, and with none a call builds no
    /// event at all.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::observe::{Event, ExecutionLog};
    /// use toolwright::{tool, Catalog, Container, Executor, Principal};
    ///
    /// struct Caller(&'static str);
    /// impl Principal for Caller { fn id(&self) -> &str { self.0 } }
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let log = ExecutionLog::new(1_000).unwrap();
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .principal::<Caller>()
    ///     .observe(log.clone())
    ///     .build()
    ///     .unwrap();
    /// executor.invoke("add", json!({"a": 1, "b": 2}), &Caller("ann")).await.unwrap();
    /// let entries = log.wait_for(1).await;
    /// let Event::Call(call) = &*entries[0].event else { panic!() };
    /// assert_eq!(call.actor.as_deref(), Some("ann"));
    /// # }
    /// ```
    pub fn observe(mut self, observer: impl Observer) -> Self {
        self.observers.push(Pending::new(observer));
        self
    }

    /// Records every call of a `write` or `destructive` tool, and every
    /// decision on this executor's [`approvals`](Self::approvals), in
    /// `trail` (see [`audit`](crate::audit)), failing closed: a call whose
    /// record fails fails with [`CallError::AuditFailed`], after its body
    /// and before its scope's finalizers, which then see an error (roll
    /// back); a decision whose record fails is not made. A call refused
    /// before its body is answered at once and recorded in the background.
    /// `read` calls are not recorded, and an executor without a trail
    /// pays one branch.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use serde_json::json;
    /// use toolwright::audit::{AuditError, AuditRecord, AuditTrail};
    /// use toolwright::{tool, BoxFuture, CallError, Catalog, Container, Executor};
    ///
    /// struct Down;
    /// impl AuditTrail for Down {
    ///     fn record<'a>(&'a self, _: &'a AuditRecord) -> BoxFuture<'a, Result<(), AuditError>> {
    ///         Box::pin(async { Err(AuditError::new("database unreachable")) })
    ///     }
    /// }
    ///
    /// /// Cancel an order.
    /// #[tool(key = "orders.cancel", effect = write, authorize = public, approve = always)]
    /// async fn cancel_order(id: u64) -> bool { true }
    /// async fn always(_: &(), _: &toolwright::Invocation<'_, CancelOrderArgs>) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<CancelOrderArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .audit(Down)
    ///     .build()
    ///     .unwrap();
    /// let error = executor.invoke("cancel_order", json!({"id": 7}), &()).await.unwrap_err();
    /// assert!(matches!(error, CallError::AuditFailed { .. }));
    /// assert_eq!(error.model_message(), "The tool is unavailable right now; the call failed.");
    /// # }
    /// ```
    pub fn audit(mut self, trail: impl AuditTrail) -> Self {
        self.audit = Some(Trail(Arc::new(trail)));
        self
    }

    /// How many events each observer's queue holds before new ones are
    /// dropped for it (default: [`DEFAULT_OBSERVER_QUEUE`](crate::observe::DEFAULT_OBSERVER_QUEUE);
    /// at least 1).
    ///
    /// ```
    /// use toolwright::observe::ExecutionLog;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::builder(Catalog::builder().build().unwrap(), Container::default())
    ///     .observe(ExecutionLog::new(100).unwrap())
    ///     .observer_queue(16)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(executor.observer_stats()[0].dropped, 0);
    /// ```
    pub fn observer_queue(mut self, events: usize) -> Self {
        self.observer_queue = events;
        self
    }

    /// Checks every tool's injected types against the container and compiles
    /// every input schema once; reports every problem found.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::{tool, Catalog, Container, Executor, ExecutorError};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// fn main() -> Result<(), ExecutorError> {
    ///     let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    ///     let executor = Executor::builder(catalog, Container::default())
    ///         .default_timeout(Duration::from_secs(30))
    ///         .build()?;
    ///     assert_eq!(executor.tools().len(), 1);
    ///     Ok(())
    /// }
    /// ```
    pub fn build(self) -> Result<Executor, ExecutorError> {
        let mut problems = Vec::new();
        let mut requirements = Vec::new();
        for (entry, _) in self.registry.tools().with_disabled() {
            requirements.clear();
            entry.requirements(&mut requirements);
            requirements.dedup_by_key(|r: &mut Requirement| r.type_id);
            for requirement in &requirements {
                if !self.container.provides_id(requirement.type_id) {
                    problems.push(ExecutorProblem::MissingProvider {
                        tool: entry.key(),
                        location: entry.location(),
                        type_name: requirement.type_name,
                    });
                }
            }
            if let Some(message) = entry.validation().problem() {
                problems.push(ExecutorProblem::InvalidSchema {
                    tool: entry.key(),
                    location: entry.location(),
                    message: message.to_owned(),
                });
            }
        }
        let observing = match self.observers {
            observers if observers.is_empty() => None,
            observers => match Observers::start(observers, self.observer_queue) {
                Ok(observers) => Some(observing(
                    Arc::new(observers),
                    &self.registry,
                    self.approvals.as_ref(),
                )),
                Err(error) => {
                    problems.push(ExecutorProblem::ObserverThread {
                        message: error.to_string(),
                    });
                    None
                }
            },
        };
        if !problems.is_empty() {
            return Err(ExecutorError { problems });
        }
        let decisions_audit = match (&self.audit, &self.approvals) {
            (Some(trail), Some(approvals)) => {
                Some(audit_decisions(trail, &self.registry, approvals))
            }
            _ => None,
        };
        Ok(Executor {
            inner: Arc::new(ExecutorInner {
                observing,
                _decisions_audit: decisions_audit,
                registry: self.registry,
                services: Services {
                    container: self.container,
                    default_timeout: self.default_timeout,
                    gate: ExclusiveGate::new(),
                    max_result: self.max_result,
                    approvals: self.approvals,
                    principal: self.principal,
                    calls: CallNumbers::default(),
                },
                audit: self.audit,
            }),
            view: None,
        })
    }
}

impl Executor {
    /// An executor over `catalog`, drawing dependencies from `container`.
    ///
    /// Fails naming every tool whose injected type has no provider (tool,
    /// location and type) and every schema that does not compile.
    ///
    /// Each tool's validator is compiled by the first call that needs it
    /// (once per tool), not here: compiling them all would be most of what
    /// building an executor costs. A tool whose
    /// schema says nothing deserializing does not already check (no range,
    /// length or pattern, no nested struct) needs it only for arguments
    /// that do not deserialize. A schema is compiled here when it might not
    /// compile (one with a `pattern`, a keyword this crate does not know,
    /// a value of the wrong shape, a `$ref` to nowhere), so that such a
    /// schema is still reported now.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolwright::{tool, Catalog, Container, Executor, Inject};
    ///
    /// trait Prices: Send + Sync { fn price(&self, sku: &str) -> Option<u64>; }
    /// struct Fixed;
    /// impl Prices for Fixed { fn price(&self, _: &str) -> Option<u64> { Some(250) } }
    ///
    /// /// Look up the price of a product, in cents.
    /// #[tool(key = "pricing.get", effect = read, authorize = public)]
    /// async fn get_price(sku: String, prices: Inject<dyn Prices>) -> Option<u64> {
    ///     prices.price(&sku)
    /// }
    ///
    /// fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     // At start-up: a missing provider or a bad schema stops here, not at a call.
    ///     let catalog = Catalog::builder().register::<GetPriceArgs>().build()?;
    ///     let container = Container::builder().app::<dyn Prices>(Arc::new(Fixed)).build();
    ///     let executor = Executor::new(catalog, container)?;
    ///     assert_eq!(executor.tools().len(), 1);
    ///     Ok(())
    /// }
    /// ```
    pub fn new(
        tools: impl Into<Registry>,
        container: Container,
    ) -> Result<Executor, ExecutorError> {
        Self::builder(tools, container).build()
    }

    /// An executor with options, such as a default timeout.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::builder(Catalog::builder().build().unwrap(), Container::default())
    ///     .default_timeout(Duration::from_secs(30))
    ///     .build()
    ///     .unwrap();
    /// assert!(executor.tools().is_empty());
    /// ```
    pub fn builder(tools: impl Into<Registry>, container: Container) -> ExecutorBuilder {
        ExecutorBuilder {
            registry: tools.into(),
            container,
            default_timeout: None,
            max_result: DEFAULT_MAX_RESULT,
            approvals: None,
            principal: None,
            observers: Vec::new(),
            observer_queue: crate::observe::DEFAULT_OBSERVER_QUEUE,
            audit: None,
        }
    }

    /// The tools this executor serves now, within its view: what to offer
    /// a model or list to a client. Disabled tools are left out (see
    /// [`Tools::with_disabled`]).
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Container, Executor};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    ///
    /// // The tools to offer a model, from the executor that will run them.
    /// let tools = serde_json::to_value(executor.tools()).unwrap();
    /// assert_eq!(tools[0]["name"], "add");
    /// assert_eq!(tools[0]["input_schema"]["required"], serde_json::json!(["a", "b"]));
    /// ```
    pub fn tools(&self) -> Tools {
        Tools {
            snapshot: self.inner.registry.snapshot(),
            view: self.view.clone(),
        }
    }

    /// The registry this executor serves from: switch tools off and on
    /// there, and every handle of this executor (views included) follows.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Container, Executor, Selector};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let math = executor.view(Selector::namespace("math"));
    /// executor.registry().disable(&Selector::name("add"), "maintenance").unwrap();
    /// assert!(math.tools().is_empty());
    /// ```
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The approvals the ledger hook uses, if the executor was given any
    /// ([`ExecutorBuilder::approvals`]).
    ///
    /// ```
    /// use toolwright::approval::MemoryLedger;
    /// use toolwright::{Approvals, Catalog, Container, Executor};
    ///
    /// let catalog = Catalog::builder().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .approvals(Approvals::new(MemoryLedger::new()))
    ///     .build()
    ///     .unwrap();
    /// assert!(executor.approvals().is_some());
    /// ```
    pub fn approvals(&self) -> Option<&Approvals> {
        self.inner.services.approvals.as_ref()
    }

    /// This executor narrowed to `view`: the returned handle lists, exports
    /// and calls only the tools in the view (and in this handle's own view,
    /// if it has one). On every path a tool outside it is
    /// [`CallError::UnknownTool`], exactly like a name that does not exist.
    ///
    /// Cheap: it shares the registry, the container and the compiled
    /// schemas. Make one per caller or conversation.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{tool, CallError, Catalog, Container, Effect, Executor, Invocation, Selector};
    ///
    /// /// Read a note.
    /// #[tool(key = "notes.read", effect = read, authorize = public)]
    /// async fn read_note(id: u64) -> String { format!("note {id}") }
    ///
    /// /// Delete a note.
    /// #[tool(key = "notes.delete", effect = destructive, authorize = public, approve = always)]
    /// async fn delete_note(id: u64) -> bool { true }
    ///
    /// async fn always(_: &(), _: &Invocation<'_, DeleteNoteArgs>) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder()
    ///     .register::<ReadNoteArgs>()
    ///     .register::<DeleteNoteArgs>()
    ///     .build()
    ///     .unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let guest = executor.view(Selector::effect(Effect::Read));
    ///
    /// let names: Vec<_> = guest.tools().iter().map(|t| t.name()).collect();
    /// assert_eq!(names, ["read_note"]);
    /// // Not offered, and not callable either.
    /// let refused = guest.invoke("delete_note", json!({"id": 1}), &()).await.unwrap_err();
    /// assert!(matches!(refused, CallError::UnknownTool { .. }));
    /// let refused = guest.call(DeleteNoteArgs { id: 1 }, &()).await.unwrap_err();
    /// assert!(matches!(refused, CallError::UnknownTool { .. }));
    /// # }
    /// ```
    pub fn view(&self, view: impl Into<View>) -> Executor {
        let view = view.into();
        Executor {
            inner: self.inner.clone(),
            view: Some(match &self.view {
                Some(mine) => mine.and(view),
                None => view,
            }),
        }
    }

    /// Calls the tool `name` with JSON arguments, as a model or client would.
    ///
    /// `ctx` is the caller's context (an actor, a session): hooks and
    /// `Context<C>` parameters receive it. It is never part of the arguments.
    ///
    /// `invoke` itself looks the name up (step 1); nothing runs until the
    /// returned future is polled, and neither `name` nor `arguments` need
    /// outlive it. An unknown name or invalid arguments are that future's
    /// error. Dropping it cancels the call (its scope, if any, is still
    /// closed). The future holds the JSON arguments and reads them (step 2:
    /// validation and deserialization) when first polled, inside the same
    /// span and panic catch as the hooks and the body. A call allocates
    /// once: its arguments, hooks and body are one boxed future (a tool
    /// with an injected parameter also allocates its scope and what its
    /// providers build). Like any future, it panics if polled again after
    /// it gave its result.
    ///
    /// The result is the tool's output as JSON, as `serde_json` writes it,
    /// except that an `f32` is the number it prints as (`0.1f32` is `0.1`,
    /// not `0.10000000149011612`, its binary value widened to `f64`). The
    /// same holds for the arguments an approval is asked for.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    ///
    /// // A tool call as a model sends it: a name and JSON arguments.
    /// let sum = executor.invoke("add", json!({"a": 2, "b": 3}), &()).await.unwrap();
    /// assert_eq!(sum, json!(5));
    ///
    /// let unknown = executor.invoke("multiply", json!({"a": 2, "b": 3}), &()).await;
    /// assert!(matches!(unknown, Err(CallError::UnknownTool { .. })));
    /// let invalid = executor.invoke("add", json!({"a": "two", "b": 3}), &()).await;
    /// assert!(matches!(invalid, Err(CallError::InvalidArguments { .. })));
    /// # }
    /// ```
    pub fn invoke<'a, C: Any + Send + Sync>(
        &'a self,
        name: &str,
        arguments: Value,
        ctx: &'a C,
    ) -> impl Future<Output = Result<Value, CallError>> + Send + 'a {
        // Looked up now, so that the future needs neither `name` nor a copy.
        let found = self.find_call(name, ctx);
        async move {
            let found = found?;
            let recording = self.recording(&found, ctx);
            let surroundings = self.surroundings(&found, watch(&recording), ctx);
            self.start(&found, &surroundings, arguments).await
        }
    }

    /// [`find`](Self::find) for a call: a tool it cannot find ends the
    /// call, which its event says.
    pub(crate) fn find_call<C: Any + Send + Sync>(
        &self,
        name: &str,
        ctx: &C,
    ) -> Result<Found, CallError> {
        let found = self.find(name);
        if let Err(error) = &found {
            self.refused(None, name, ctx, error);
        }
        found
    }

    /// Tells the observers of a call that ended before it started, with
    /// `error`: of the tool `found`, or of no tool by the name `name`.
    #[cold]
    #[inline(never)]
    pub(crate) fn refused<C: Any + Send + Sync>(
        &self,
        found: Option<&Found>,
        name: &str,
        ctx: &C,
        error: &CallError,
    ) {
        if let Some(observers) = self.observers() {
            let (key, name) = match (found, error) {
                (Some(found), _) => (Some(found.tool().key()), found.tool().name()),
                (None, CallError::Disabled { key, .. }) => (Some(*key), name),
                (None, _) => (None, name),
            };
            let id = self.inner.services.calls.next();
            observe::refused(observers, id, key, name, self.actor(ctx), error);
        }
    }

    /// The recording of a call of the tool found, when the executor has
    /// observers.
    fn recording<'a, C: Any + Send + Sync>(
        &'a self,
        found: &'a Found,
        ctx: &'a C,
    ) -> Option<Box<Recording<'a>>> {
        let observers = self.observers();
        if observers.is_none()
            && (self.inner.audit.is_none() || !found.tool().served().effect.requires_approval())
        {
            return None;
        }
        self.record(observers, found, ctx)
    }

    #[cold]
    #[inline(never)]
    fn record<'a, C: Any + Send + Sync>(
        &'a self,
        observers: Option<&'a Observers>,
        found: &'a Found,
        ctx: &'a C,
    ) -> Option<Box<Recording<'a>>> {
        let tool = found.tool();
        let served = tool.served();
        let audit = match &self.inner.audit {
            Some(trail) if served.effect.requires_approval() => {
                Some((trail as &dyn CallTrail, served.effect))
            }
            _ => None,
        };
        Some(Box::new(Recording::start(
            observers,
            audit,
            self.inner.services.calls.next(),
            served.key,
            served.name,
            self.actor(ctx),
            tool,
        )))
    }

    fn observers(&self) -> Option<&Observers> {
        self.inner.observing.as_ref().map(|o| &*o.observers)
    }

    /// The tool `name`, if this handle may call it now: unknown when it does
    /// not exist or lies outside the view, refused when it is disabled.
    pub(crate) fn find(&self, name: &str) -> Result<Found, CallError> {
        let snapshot = self.inner.registry.current();
        match snapshot.catalog.index_of(name) {
            Some(index) if self.sees(snapshot.catalog.entry(index)) => enabled(snapshot, index),
            _ => Err(CallError::UnknownTool {
                name: name.to_owned(),
            }),
        }
    }

    /// [`invoke`](Self::invoke) of a tool [`find`](Self::find) found, for a
    /// front end that needed the tool before calling it.
    #[cfg(any(feature = "providers", feature = "mcp"))]
    pub(crate) async fn invoke_found<C: Any + Send + Sync>(
        &self,
        found: Found,
        arguments: Value,
        ctx: &C,
    ) -> Result<Value, CallError> {
        let recording = self.recording(&found, ctx);
        let surroundings = self.surroundings(&found, watch(&recording), ctx);
        self.start(&found, &surroundings, arguments).await
    }

    /// The traced JSON call of the tool found, in its `surroundings`: what
    /// `invoke` awaits.
    fn start<'a>(
        &'a self,
        found: &'a Found,
        surroundings: &'a Surroundings<'a>,
        arguments: Value,
    ) -> Traced<'a, impl Future<Output = Result<Value, CallError>> + Send + 'a> {
        let tool = found.tool();
        let (gate, watch) = (surroundings.gate, surroundings.watch);
        let numbers = &self.inner.services.calls;
        let call = tool.call(Env(surroundings), arguments);
        pipeline::traced(
            tool.served(),
            tool.description(),
            gate,
            watch,
            numbers,
            call,
        )
    }

    /// Whether a call of `name` with `arguments` would run for `ctx`,
    /// without running anything: the arguments are validated, then the
    /// policy and the hooks are asked, as for [`invoke`](Self::invoke).
    /// An agent loop or a UI asks before it acts.
    ///
    /// Hooks see [`Invocation::is_preflight`](crate::Invocation::is_preflight);
    /// the ledger hook looks for an approval without consuming it, and
    /// records the request a person must decide (once per requester and
    /// call). A name the handle cannot call, arguments the schema rejects,
    /// a disabled tool or a failing hook are this method's error.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, Invocation, Preflight, Verdict};
    ///
    /// struct Actor { admin: bool }
    ///
    /// /// Refund an order.
    /// #[tool(key = "orders.refund", effect = write, authorize = staff, approve = by_amount)]
    /// async fn refund(order_id: u64, cents: u64) -> bool { true }
    ///
    /// async fn staff(actor: &Actor, _: &Invocation<'_, RefundArgs>) -> bool { actor.admin }
    ///
    /// async fn by_amount(_: &Actor, call: &Invocation<'_, RefundArgs>) -> Verdict {
    ///     if call.cents <= 5_000 { Verdict::Allow } else { Verdict::Pending }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<RefundArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let admin = Actor { admin: true };
    ///
    /// let small = json!({"order_id": 1, "cents": 500});
    /// let asked = executor.preflight("refund", small, &admin).await.unwrap();
    /// assert!(matches!(asked, Preflight::WouldRun));
    ///
    /// let large = json!({"order_id": 1, "cents": 90_000});
    /// let asked = executor.preflight("refund", large, &admin).await.unwrap();
    /// let Preflight::NeedsApproval(request) = asked else { panic!("{asked:?}") };
    /// assert_eq!(request.arguments["cents"], 90_000);
    ///
    /// let guest = Actor { admin: false };
    /// let asked = executor.preflight("refund", json!({"order_id": 1, "cents": 5}), &guest);
    /// assert!(matches!(asked.await.unwrap(), Preflight::Denied(_)));
    /// # }
    /// ```
    pub async fn preflight<C: Any + Send + Sync>(
        &self,
        name: &str,
        arguments: Value,
        ctx: &C,
    ) -> Result<Preflight, CallError> {
        let found = self.find(name)?;
        let tool = found.tool();
        let surroundings = Surroundings {
            preflight: true,
            ..self.surroundings(&found, None, ctx)
        };
        let asked = CatchUnwind::new(tool.call(Env(&surroundings), arguments))
            .await
            .unwrap_or_else(|message| {
                Err(CallError::Panicked {
                    key: tool.key(),
                    message,
                })
            })
            .map_err(|error| error.served_as(tool.key()));
        match asked {
            Ok(_) => Ok(Preflight::WouldRun),
            Err(CallError::ApprovalRequired(request)) => Ok(Preflight::NeedsApproval(request)),
            Err(
                error @ (CallError::Denied { .. }
                | CallError::PolicyDenied { .. }
                | CallError::NotApproved { .. }),
            ) => Ok(Preflight::Denied(error)),
            Err(error) => Err(error),
        }
    }

    /// Calls tool `A` with typed arguments through the same pipeline
    /// (validation included) and returns the typed result.
    ///
    /// ```
    /// use toolwright::{tool, CallError, Catalog, Container, Executor};
    ///
    /// /// The first `size` positive numbers.
    /// #[tool(key = "demo.page", effect = read, authorize = public)]
    /// async fn page(
    ///     #[schemars(range(min = 1, max = 100))]
    ///     size: u32,
    /// ) -> Vec<u32> {
    ///     (1..=size).collect()
    /// }
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<PageArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    ///
    /// let first: Vec<u32> = executor.call(PageArgs { size: 3 }, &()).await.unwrap();
    /// assert_eq!(first, [1, 2, 3]);
    ///
    /// // Typed arguments still meet the schema's constraints.
    /// let too_big = executor.call(PageArgs { size: 1000 }, &()).await;
    /// assert!(matches!(too_big, Err(CallError::InvalidArguments { .. })));
    ///
    /// // A tool the executor does not serve is unknown, typed or not.
    /// let add = executor.call(AddArgs { a: 1, b: 1 }, &()).await;
    /// assert!(matches!(add, Err(CallError::UnknownTool { .. })));
    /// # }
    /// ```
    pub async fn call<A: Tool, C: Any + Send + Sync>(
        &self,
        args: A,
        ctx: &C,
    ) -> Result<A::Output, CallError> {
        let snapshot = self.inner.registry.current();
        let found = match snapshot.catalog.index_of_type::<A>() {
            Some(index) if self.sees(snapshot.catalog.entry(index)) => enabled(snapshot, index),
            _ => Err(CallError::UnknownTool {
                name: A::NAME.to_owned(),
            }),
        };
        let found = found.inspect_err(|error| self.refused(None, A::NAME, ctx, error))?;
        let recording = self.recording(&found, ctx);
        let watch = watch(&recording);
        let surroundings = self.surroundings(&found, watch, ctx);
        let env = Env(&surroundings);
        let mut output: Option<A::Output> = None;
        let call = pipeline::typed(env, args, &mut output);
        let numbers = &self.inner.services.calls;
        let tool = found.tool();
        let (served, description) = (tool.served(), tool.description());
        pipeline::traced(served, description, surroundings.gate, watch, numbers, call).await?;
        // A typed call that ends well has put its output there.
        output.ok_or_else(|| CallError::Panicked {
            key: found.tool().key(),
            message: "the typed call ended without its output".to_owned(),
        })
    }

    /// How each of this executor's observers is keeping up, in the order
    /// they were registered ([`ExecutorBuilder::observe`]): events
    /// delivered, dropped because its queue was full, and panicked on.
    ///
    /// ```
    /// use toolwright::observe::ExecutionLog;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::builder(Catalog::builder().build().unwrap(), Container::default())
    ///     .observe(ExecutionLog::new(100).unwrap())
    ///     .build()
    ///     .unwrap();
    /// let stats = executor.observer_stats();
    /// assert_eq!(stats.len(), 1);
    /// assert!(stats[0].name.ends_with("ExecutionLog"));
    /// ```
    pub fn observer_stats(&self) -> Vec<ObserverStats> {
        self.observers().map(Observers::stats).unwrap_or_default()
    }
    /// The caller's [`Principal::id`], when the executor was told the
    /// context's type ([`ExecutorBuilder::principal`]).
    pub(crate) fn actor<'a, C: std::any::Any + Send + Sync>(&self, ctx: &'a C) -> Option<&'a str> {
        let identify = self.inner.services.principal?;
        identify(crate::context::ErasedContext::new(ctx))
    }

    /// At most how many characters of a result of `tool` (or of a call
    /// that found none) a model is shown.
    #[cfg(any(feature = "providers", feature = "mcp"))]
    pub(crate) fn max_result(&self, tool: Option<&ToolEntry>) -> usize {
        tool.and_then(ToolEntry::max_result)
            .unwrap_or(self.inner.services.max_result)
    }

    /// Whether this handle's view holds `tool`.
    fn sees(&self, tool: &ToolEntry) -> bool {
        self.view.as_ref().is_none_or(|view| view.contains(tool))
    }

    /// The surroundings of a call of the tool found, followed by `watch`.
    fn surroundings<'a, C: Any + Send + Sync>(
        &'a self,
        found: &'a Found,
        watch: Option<&'a dyn Watch>,
        ctx: &'a C,
    ) -> Surroundings<'a> {
        let tool = found.tool();
        Surroundings {
            services: &self.inner.services,
            served: tool.served(),
            validation: tool.validation(),
            schema: tool.input_schema(),
            gate: found.snapshot.gate(found.index),
            // Only while an exclusive tool is served do the other calls
            // take a pass.
            exclusive: found
                .snapshot
                .catalog
                .has_exclusive()
                .then_some(&self.inner.services.gate),
            limiter: tool.limiter(),
            ctx: ErasedContext::new(ctx),
            preflight: false,
            watch,
        }
    }
}

/// A recording as the steps see it.
fn watch<'a>(recording: &'a Option<Box<Recording<'_>>>) -> Option<&'a dyn Watch> {
    recording
        .as_deref()
        .map(|recording| recording as &dyn Watch)
}

/// The observers running, told of the registry's changes and the
/// approvals' decisions.
fn observing(
    observers: Arc<Observers>,
    registry: &Registry,
    approvals: Option<&Approvals>,
) -> Observing {
    let events = observers.clone();
    let changes: Arc<Tap> =
        Arc::new(move |change: &Change| events.emit(Event::Registry(change.clone())));
    registry.tap(&changes);
    let decisions = approvals.map(|approvals| {
        let events = observers.clone();
        let decisions: Arc<DecisionTap> =
            Arc::new(move |approval: &Approval| events.emit(Event::Approval(approval.clone())));
        approvals.tap(&decisions);
        decisions
    });
    Observing {
        observers,
        _registry: changes,
        _decisions: decisions,
    }
}

/// Records the decisions of `approvals` in `trail`, their arguments
/// masked by the schema of their tool in `registry`.
fn audit_decisions(
    trail: &Trail,
    registry: &Registry,
    approvals: &Approvals,
) -> Arc<DecisionAudit> {
    let registry = registry.clone();
    let audit = Arc::new(DecisionAudit {
        trail: trail.0.clone(),
        mask: Box::new(move |key, name, arguments| {
            let snapshot = registry.current();
            let catalog = &snapshot.catalog;
            match catalog.index_of(name).map(|index| catalog.entry(index)) {
                Some(tool) if tool.served().key == key => {
                    observe::redact(tool.input_schema(), arguments)
                }
                // A tool no longer served: nothing says what is secret.
                _ => Value::String(observe::REDACTED.to_owned()),
            }
        }),
    });
    let decisions: Arc<dyn DecisionTrail> = audit.clone();
    approvals.audit(&decisions);
    audit
}

/// What [`Executor::preflight`] found: whether the call would run now.
#[derive(Debug)]
#[non_exhaustive]
pub enum Preflight {
    /// Every check passed: invoked now, the call would run.
    WouldRun,
    /// A person must approve this exact call first; when a ledger recorded
    /// the request, it carries the id to decide it by.
    NeedsApproval(Box<ApprovalRequest>),
    /// Refused: by the policy, the `authorize` hook, or the `approve`
    /// hook (a rejected request, say). The error says which.
    Denied(CallError),
}

/// The tool at `index`, unless it is disabled.
fn enabled(snapshot: Current, index: usize) -> Result<Found, CallError> {
    match &snapshot.disabled[index] {
        Some(disabled) => Err(CallError::Disabled {
            key: snapshot.catalog.entry(index).key(),
            disabled: disabled.clone(),
        }),
        None => Ok(Found { snapshot, index }),
    }
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Executor")
            .field("registry", &self.inner.registry)
            .field("view", &self.view)
            .field("container", &self.inner.services.container)
            .field("default_timeout", &self.inner.services.default_timeout)
            .field("max_result", &self.inner.services.max_result)
            .finish()
    }
}
