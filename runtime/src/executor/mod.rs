//! The executor: the handle every front end calls, over the registry and the
//! one pipeline (`crate::pipeline`).

mod builder;
mod error;
mod observing;
mod preflight;

pub use crate::concurrency::Concurrency;
pub use crate::content::{Content, Contents, Embedded};
pub use crate::context::Context;
pub use crate::effect::Effect;
pub use crate::error::{BoxError, CallError, HookKind, Violation, Violations};
pub use crate::hook::{IntoVerdict, Verdict};
pub use crate::invocation::Invocation;
pub use crate::principal::Principal;
pub use crate::tool::Tool;
pub use crate::util::BoxFuture;
pub use builder::{DEFAULT_MAX_RESULT, ExecutorBuilder};
pub use error::{ExecutorError, ExecutorProblem};
use observing::{Observing, watch};
pub use preflight::Preflight;

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use crate::approval::Approvals;
use crate::audit::{DecisionAudit, Trail};
use crate::catalog::ToolEntry;
use crate::context::ErasedContext;
use crate::idempotency::Keyed;
use crate::pipeline::{self, Env, Services, Surroundings, Traced, Watch};
use crate::registry::{Current, Registry, Tools, View};

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

impl Executor {
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
    /// use toolwright::{tool, Catalog, Container, Executor, registry::Selector};
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

    /// The audit trail calls are recorded in, if the executor has one.
    #[cfg(feature = "admin")]
    pub(crate) fn audit_trail(&self) -> Option<&Arc<dyn crate::audit::AuditTrail>> {
        self.inner.audit.as_ref().map(|trail| &trail.0)
    }

    /// The approvals the ledger hook uses, if the executor was given any
    /// ([`ExecutorBuilder::approvals`]).
    ///
    /// ```
    /// use toolwright::approval::MemoryLedger;
    /// use toolwright::{Catalog, Container, Executor, approval::Approvals};
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
    /// use toolwright::{tool, CallError, Catalog, Container, Effect, Executor, Invocation, registry::Selector};
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
    /// let tools = guest.tools();
    /// let names: Vec<_> = tools.iter().map(|t| t.name()).collect();
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
        idempotency_key: Option<&str>,
    ) -> Result<Value, CallError> {
        if let Some(idempotency_key) = idempotency_key {
            // Boxed: only calls sent a key carry its claim.
            return Box::pin(self.invoke_keyed(found, arguments, ctx, idempotency_key)).await;
        }
        let recording = self.recording(&found, ctx);
        let surroundings = self.surroundings(&found, watch(&recording), ctx);
        self.start(&found, &surroundings, arguments).await
    }

    /// [`invoke`](Self::invoke) with an idempotency key: a `write` or
    /// `destructive` call repeated with the same key, tool, caller and
    /// arguments returns the first call's result without running (or
    /// asking for approval) again; the same key with other arguments is
    /// refused with [`CallError::NotRepeated`]. The rules, and when to send
    /// a key, are in [`idempotency`](crate::idempotency).
    ///
    /// The key takes effect on an executor built with
    /// [`ExecutorBuilder::idempotency`]; without one, and for `read` tools,
    /// it is ignored and this is `invoke`.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::idempotency::{Idempotency, MemoryKeys};
    /// use toolwright::{tool, Catalog, Container, Executor, Invocation};
    ///
    /// /// Send money.
    /// #[tool(key = "bank.transfer", effect = write, authorize = public, approve = always)]
    /// async fn transfer(to: String, cents: u64) -> String { format!("sent {cents} to {to}") }
    /// async fn always(_: &(), _: &Invocation<'_, TransferArgs>) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<TransferArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .idempotency(Idempotency::new(MemoryKeys::new()))
    ///     .build()
    ///     .unwrap();
    /// let args = json!({"to": "bob", "cents": 500});
    /// // The answer was lost; the agent sends the same call again.
    /// executor.invoke_idempotent("pay-bob-1", "transfer", args.clone(), &()).await.unwrap();
    /// let again = executor.invoke_idempotent("pay-bob-1", "transfer", args, &()).await;
    /// assert_eq!(again.unwrap(), json!("sent 500 to bob"));
    /// # }
    /// ```
    pub fn invoke_idempotent<'a, C: Any + Send + Sync>(
        &'a self,
        idempotency_key: &'a str,
        name: &str,
        arguments: Value,
        ctx: &'a C,
    ) -> impl Future<Output = Result<Value, CallError>> + Send + 'a {
        let found = self.find_call(name, ctx);
        async move {
            self.invoke_keyed(found?, arguments, ctx, idempotency_key)
                .await
        }
    }

    /// The call of a tool found, sent `idempotency_key`.
    async fn invoke_keyed<C: Any + Send + Sync>(
        &self,
        found: Found,
        arguments: Value,
        ctx: &C,
        idempotency_key: &str,
    ) -> Result<Value, CallError> {
        let recording = self.recording(&found, ctx);
        let keyed = Keyed::new(idempotency_key);
        let surroundings = Surroundings {
            keyed: Some(&keyed),
            ..self.surroundings(&found, watch(&recording), ctx)
        };
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
            key: found.tool().served().key.clone(),
            message: "the typed call ended without its output".to_owned(),
        })
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
            keyed: None,
        }
    }
}

/// The tool at `index`, unless it is disabled.
fn enabled(snapshot: Current, index: usize) -> Result<Found, CallError> {
    match &snapshot.disabled[index] {
        Some(disabled) => Err(CallError::Disabled {
            key: snapshot.catalog.entry(index).served().key.clone(),
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
