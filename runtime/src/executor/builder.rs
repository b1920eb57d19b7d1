//! Building an executor: its options, and the checks that run once, at
//! start-up.

use std::sync::Arc;
use std::time::Duration;

use crate::approval::Approvals;
use crate::audit::{AuditTrail, Trail};
#[cfg(doc)]
use crate::error::CallError;
use crate::idempotency::Idempotency;
use crate::observe::{Observer, Observers, Pending};
use crate::pipeline::{CallNumbers, ExclusiveGate, Services};
use crate::principal::{Identify, Principal};
use crate::registry::Registry;
use crate::scope::{Container, Requirement};

use super::observing::{audit_decisions, observing};
use super::{Executor, ExecutorError, ExecutorInner, ExecutorProblem};

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
            idempotency: None,
            principal: None,
            observers: Vec::new(),
            observer_queue: crate::observe::DEFAULT_OBSERVER_QUEUE,
            audit: None,
        }
    }
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
    idempotency: Option<Idempotency>,
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
/// assert_eq!(toolwright::executor::DEFAULT_MAX_RESULT, 50_000);
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

    /// Where the idempotency keys of `write` and `destructive` calls are
    /// kept (default: nowhere; keys sent are then ignored): a call repeated
    /// with the same key returns the first one's result without running
    /// again. See [`idempotency`](crate::idempotency) for the rules, and
    /// [`Executor::invoke_idempotent`] for an example. With
    /// [`principal`](Self::principal), each caller's keys are their own.
    pub fn idempotency(mut self, idempotency: Idempotency) -> Self {
        self.idempotency = Some(idempotency);
        self
    }

    /// The context type `C` callers pass, as the actor a request is
    /// recorded for when the registry's [`Policy`](crate::registry::Policy) answers
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
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, approval::Approvals, registry::Policy};
    /// use toolwright::{Principal, registry::{Rule, Selector}};
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
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, executor::BoxFuture};
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
                        tool: entry.served().key.clone(),
                        location: entry.location(),
                        type_name: requirement.type_name,
                    });
                }
            }
            if let Some(message) = entry.validation().problem() {
                problems.push(ExecutorProblem::InvalidSchema {
                    tool: entry.served().key.clone(),
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
                    idempotency: self.idempotency,
                    principal: self.principal,
                    calls: CallNumbers::default(),
                },
                audit: self.audit,
            }),
            view: None,
        })
    }
}
