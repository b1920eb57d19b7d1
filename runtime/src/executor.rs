//! The executor: the one pipeline every call goes through.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use serde_json::Value;
use tracing::Instrument;

use crate::__private::{HookCall, Waits};
use crate::catalog::Catalog;
use crate::error::{CallError, Violation, Violations};
use crate::invocation::{ApprovalRequest, Invocation};
use crate::schema::Enforcement;
use crate::scope::{Container, Outcome, Requirement, Scope, ScopeGuard};
use crate::tool::{BoxFuture, ErasedContext, Location, Registration, Tool, Verdict};

/// What a registration stores to start an `invoke` of its tool: validate
/// the arguments and deserialize them into the call's future.
///
/// This is all of the JSON pipeline that depends on the tool's type; what
/// steps 3 to 7 do (what a hook's answer means, the scope, the timeout,
/// panic catching, the span) is one copy shared by every tool, which keeps
/// what each `#[tool]` adds to a build small. A tool's own code
/// (`start_fn!`) only puts its hooks, scope and body in order. (The typed
/// [`Executor::call`] runs [`Prepared`] calls through
/// [`ExecutorInner::run`].)
#[derive(Clone, Copy)]
pub(crate) enum Prepare {
    /// Any tool: its arguments, read when the call is first polled, into
    /// one future that asks its hooks, if it has any ([`guarded`],
    /// [`guarded_approved`]), opens the call's scope if it injects a
    /// parameter ([`scoped`], [`scoped_guarded`], [`scoped_approved`]),
    /// and runs its body ([`direct`] for a public tool that needs no
    /// approval and injects nothing; [`guarded_now`] for one whose only
    /// hook is a plain `fn`, asked before the future is made): the call's
    /// one allocation.
    Direct(PrepareDirect),
    /// A [`Prepare::Direct`] tool whose body never waits ([`Tool::AWAITS`]
    /// is `false`), public ([`immediate`]) or whose only hook is a plain
    /// `fn` ([`immediate_guarded`]): read, asked, run and serialized in
    /// one step when the call is first polled, its body's future on the
    /// stack, with no allocation.
    Immediate(PrepareImmediate),
}

/// See [`Prepare::Direct`].
type PrepareDirect = for<'a> fn(
    &'a ExecutorInner,
    &'a Registration,
    usize,
    &Value,
    ErasedContext<'a>,
) -> Result<JsonFuture<'a>, CallError>;

/// See [`Prepare::Immediate`].
type PrepareImmediate = for<'a> fn(
    &ExecutorInner,
    usize,
    &Value,
    ErasedContext<'a>,
    &mut TaskContext<'_>,
) -> Result<Value, CallError>;

/// A JSON call's body.
type JsonFuture<'a> = BoxFuture<'a, Result<Value, CallError>>;

impl Prepare {
    /// The way to start a call of `T`, chosen when the registration is built
    /// (a constant), so each tool compiles only the path it takes.
    pub(crate) const fn of<T: Tool>() -> Self {
        if T::INJECTS {
            Prepare::Direct(if T::EFFECT.requires_approval() {
                scoped_approved::<T>
            } else if T::PUBLIC {
                scoped::<T>
            } else {
                scoped_guarded::<T>
            })
        } else if T::PUBLIC && !T::EFFECT.requires_approval() {
            if T::AWAITS {
                Prepare::Direct(direct::<T>)
            } else {
                Prepare::Immediate(immediate::<T>)
            }
        } else if T::EFFECT.requires_approval() {
            Prepare::Direct(guarded_approved::<T>)
        } else {
            Prepare::guarded::<T, _>(kind_of::<T, _, _>(T::__authorize))
        }
    }

    /// For a `T` with an `authorize` hook of kind `F`, that
    /// needs no approval and injects nothing. A hook that may wait (an
    /// `async fn`): [`guarded`], the hook and the body in one boxed
    /// future. One that does not (a plain `fn` returning a [`Verdict`]):
    /// asked, then the body run as a public tool's is, in the first poll
    /// when it never waits ([`immediate_guarded`], no allocation),
    /// otherwise boxed ([`guarded_now`]).
    const fn guarded<T: Tool, F: Waits>(_: PhantomData<F>) -> Self {
        if F::WAITS {
            Prepare::Direct(guarded::<T>)
        } else if T::AWAITS {
            Prepare::Direct(guarded_now::<T>)
        } else {
            Prepare::Immediate(immediate_guarded::<T>)
        }
    }
}

/// What kind of hook `T`'s `authorize` hook is, read from the signature of
/// `__authorize`, which is not called: [`Later`](crate::__private::Later)
/// (an `async fn`) or [`Now`](crate::__private::Now) (a plain `fn`).
const fn kind_of<T: Tool, F, W>(
    _: fn(ErasedContext<'static>, &'static Invocation<'static, T>) -> HookCall<F, W>,
) -> PhantomData<W> {
    PhantomData
}

/// A typed call with validated arguments, ready for the shared pipeline
/// ([`ExecutorInner::run`]): its hooks, its approval request and its body,
/// behind one vtable.
pub(crate) trait Prepared<O>: Send + Sync {
    fn authorize<'a>(&'a self, ctx: ErasedContext<'a>)
    -> BoxFuture<'a, Result<Verdict, CallError>>;
    fn approve<'a>(&'a self, ctx: ErasedContext<'a>) -> BoxFuture<'a, Result<Verdict, CallError>>;
    fn approval_request(&self) -> ApprovalRequest;
    /// Runs the body; consumes the arguments.
    fn run<'a>(
        self: Box<Self>,
        ctx: ErasedContext<'a>,
        scope: Option<&'a Scope>,
    ) -> BoxFuture<'a, Result<O, CallError>>;
}

pin_project_lite::pin_project! {
    /// A body whose output is serialized when it finishes: a plain future
    /// rather than an `async` block, which would compile to a larger state
    /// machine in every tool.
    struct ToJson<F> {
        tool: &'static str,
        #[pin]
        body: F,
    }
}

impl<O: serde::Serialize, F: Future<Output = Result<O, CallError>>> Future for ToJson<F> {
    type Output = Result<Value, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.project();
        match this.body.poll(cx) {
            Poll::Ready(finished) => Poll::Ready(to_json(this.tool, finished)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The serialization half of [`ToJson`], generic only over the output type,
/// so that tools returning the same type share it.
fn to_json<O: serde::Serialize>(
    tool: &'static str,
    finished: Result<O, CallError>,
) -> Result<Value, CallError> {
    let output = finished?;
    crate::json::to_value(&output).map_err(|source| CallError::Output { tool, source })
}

/// The one implementation of [`Prepared`]: tool `T`'s typed invocation.
struct Call<T: Tool> {
    invocation: Invocation<'static, T>,
}

impl<T: Tool> Call<T> {
    fn new(args: T) -> Self {
        Call {
            invocation: Invocation::new(args),
        }
    }
}

impl<T: Tool> Prepared<T::Output> for Call<T> {
    fn authorize<'a>(
        &'a self,
        ctx: ErasedContext<'a>,
    ) -> BoxFuture<'a, Result<Verdict, CallError>> {
        Box::pin(T::__authorize(ctx, &self.invocation))
    }

    fn approve<'a>(&'a self, ctx: ErasedContext<'a>) -> BoxFuture<'a, Result<Verdict, CallError>> {
        Box::pin(T::__approve(ctx, &self.invocation))
    }

    fn approval_request(&self) -> ApprovalRequest {
        self.invocation.approval_request()
    }

    fn run<'a>(
        self: Box<Self>,
        ctx: ErasedContext<'a>,
        scope: Option<&'a Scope>,
    ) -> BoxFuture<'a, Result<T::Output, CallError>> {
        Box::pin(T::__run(self.invocation.into_args(), ctx, scope))
    }
}

/// Step 2 for tool `T` inside [`direct`], [`guarded`], [`scoped`] and
/// their kin: its validated arguments, or the error. Only the deserializer
/// is `T`'s own; the checks around it are [`ExecutorInner::check`],
/// shared. A macro rather than a generic function, which every `#[tool]`
/// would compile once more.
macro_rules! read_arguments {
    ($inner:expr, $index:expr, $arguments:expr, $tool:ty) => {{
        let mut args = None;
        $inner.check($index, <$tool>::KEY, $arguments, &mut |value| {
            args = Some(<$tool>::deserialize(value)?);
            Ok(())
        })?;
        // `check` succeeds only once the deserializer has stored them.
        match args {
            Some(args) => args,
            None => return Err(not_read(<$tool>::KEY)),
        }
    }};
}

/// Steps 3 and 4: `$t`'s hooks asked about `$args`, which come back for
/// the body. `none` asks nothing (and builds no [`Invocation`]).
/// `authorize now` asks an `authorize` hook that is a plain `fn`: its
/// answer is there at once, nothing is awaited or allocated (in
/// `start_fn!`'s `ask .. now` form and in `immediate_fn!`). Inside
/// `start_fn!`'s future, `authorize` awaits the `authorize` hook, and
/// `approve` awaits the `authorize` hook unless the tool is public, then
/// the `approve` hook. What their answers mean is [`authorized`] and
/// [`approved`], shared. A macro rather than a branch on a `const`
/// parameter: such a branch, dead for public tools, still cost each of
/// them 50 lines of LLVM IR in a debug build.
macro_rules! ask_hooks {
    (none $($now:ident)?, $t:ty, $ctx:ident, $args:ident) => {
        $args
    };
    (authorize now, $t:ty, $ctx:ident, $args:ident) => {{
        let invocation = Invocation::new($args);
        authorized(<$t>::__authorize($ctx, &invocation).now(), <$t>::KEY)?;
        invocation.into_args()
    }};
    (authorize, $t:ty, $ctx:ident, $args:ident) => {{
        let invocation = Invocation::new($args);
        authorized(<$t>::__authorize($ctx, &invocation).await, <$t>::KEY)?;
        invocation.into_args()
    }};
    (approve, $t:ty, $ctx:ident, $args:ident) => {{
        let invocation = Invocation::new($args);
        if !<$t>::PUBLIC {
            authorized(<$t>::__authorize($ctx, &invocation).await, <$t>::KEY)?;
        }
        if !approved(<$t>::__approve($ctx, &invocation).await, <$t>::KEY)? {
            return Err(CallError::ApprovalRequired(Box::new(
                invocation.approval_request(),
            )));
        }
        invocation.into_args()
    }};
}

/// A [`PrepareDirect`] function `$name`: the arguments read now
/// (`read_arguments!`), then one of two forms.
///
/// `ask $hooks now`, for a `T` that needs no approval and injects
/// nothing, public (`none`) or behind an `authorize` hook that does not
/// wait (`authorize`): the hook asked at once (`ask_hooks!`), then the
/// body's future, under its timeout.
///
/// `ask $hooks, then $run`, for a `T` with a hook that may wait or an
/// injected parameter: steps 2 to 7 as one future, which asks the hooks
/// (`ask_hooks!`) and runs the body (`$run!`: `run_limited!` or
/// `run_scoped!`). The hooks' futures and the body's are inside that one
/// future (through the shared pipeline such a call allocated three times:
/// the call behind its vtable, the hook's future, the body's). Only the
/// order of the steps is the tool's own code; what each answer means, the
/// timeout and the scope are shared functions. One function per set of
/// hooks, each its own state machine: one that also held the `approve`
/// step, dead for most tools, cost rustc about 6% more for a crate of
/// tools with an `authorize` hook.
macro_rules! start_fn {
    ($(#[$doc:meta])* $name:ident = ask $hooks:ident now) => {
        start_fn!(@signature $(#[$doc])* $name, |inner, tool, ctx, args| {
            let args = ask_hooks!($hooks now, T, ctx, args);
            let body = Box::pin(ToJson {
                tool: T::KEY,
                body: T::__run(args, ctx, None),
            });
            Ok(inner.timed(tool, body))
        });
    };
    ($(#[$doc:meta])* $name:ident = ask $hooks:ident, then $run:ident) => {
        start_fn!(@signature $(#[$doc])* $name, |inner, tool, ctx, args| {
            let after = inner.timeout(tool);
            Ok(Box::pin(async move {
                let args = ask_hooks!($hooks, T, ctx, args);
                $run!(inner, T, ctx, args, after)
            }))
        });
    };
    // The one signature, and step 2.
    (@signature $(#[$doc:meta])* $name:ident,
        |$inner:ident, $tool:ident, $ctx:ident, $args:ident| $body:block) => {
        $(#[$doc])*
        fn $name<'a, T: Tool>(
            $inner: &'a ExecutorInner,
            $tool: &'a Registration,
            index: usize,
            arguments: &Value,
            $ctx: ErasedContext<'a>,
        ) -> Result<JsonFuture<'a>, CallError> {
            let $args = read_arguments!($inner, index, arguments, T);
            $body
        }
    };
}

start_fn! {
    /// [`Prepare::Direct`] for a public `T` that needs no approval and
    /// injects nothing: its arguments, straight into its body's future.
    direct = ask none now
}

start_fn! {
    /// [`Prepare::Direct`] for a `T` behind an `authorize` hook that does
    /// not wait, whose body may: the hook asked, then the body as
    /// [`direct`] runs it.
    guarded_now = ask authorize now
}

/// Step 6 inside `start_fn!`'s future, for a tool that injects nothing:
/// the body, pinned in that future, under its timeout ([`limited`],
/// shared); its panics are caught by [`Direct::poll`].
macro_rules! run_limited {
    ($inner:ident, $t:ty, $ctx:ident, $args:ident, $after:ident) => {{
        let body = std::pin::pin!(ToJson {
            tool: <$t>::KEY,
            body: <$t>::__run($args, $ctx, None),
        });
        limited(<$t>::KEY, $after, body).await
    }};
}

/// Steps 5 to 7 inside `start_fn!`'s future, for a tool with an injected
/// parameter: the call's scope opened, then the body run and the scope
/// closed by [`scoped_body`], shared. The body is boxed apart: held inline,
/// with the scope's steps around it, it made each such tool's state
/// machine cost rustc 14-16% more (100 tools with an `authorize` hook and
/// an injected parameter).
macro_rules! run_scoped {
    ($inner:ident, $t:ty, $ctx:ident, $args:ident, $after:ident) => {{
        let guard = ScopeGuard::open(&$inner.container);
        let body = Box::pin(ToJson {
            tool: <$t>::KEY,
            body: <$t>::__run($args, $ctx, Some(guard.scope())),
        });
        scoped_body(&guard, <$t>::KEY, $after, body).await
    }};
}

start_fn! {
    /// [`Prepare::Direct`] for a `T` with an `authorize` hook that may wait
    /// (an `async fn`), that needs no approval and injects nothing.
    guarded = ask authorize, then run_limited
}

start_fn! {
    /// [`Prepare::Direct`] for a `T` that needs approval and injects nothing.
    guarded_approved = ask approve, then run_limited
}

start_fn! {
    /// [`Prepare::Direct`] for a public `T` that injects a parameter and needs
    /// no approval.
    scoped = ask none, then run_scoped
}

start_fn! {
    /// [`Prepare::Direct`] for a `T` with an `authorize` hook that injects a
    /// parameter and needs no approval.
    scoped_guarded = ask authorize, then run_scoped
}

start_fn! {
    /// [`Prepare::Direct`] for a `T` that injects a parameter and needs
    /// approval.
    scoped_approved = ask approve, then run_scoped
}

/// Steps 6 and 7 for `run_scoped!`: the body under its timeout, with its
/// panics caught ([`run_body`]), then dropped, then the scope closed with
/// how the body ended. A caller that drops the call while the body runs
/// leaves the finalizers to the runtime ([`ScopeGuard`]'s `Drop`). Not
/// generic: every tool shares it.
async fn scoped_body(
    guard: &ScopeGuard,
    tool: &'static str,
    after: Option<Duration>,
    body: JsonFuture<'_>,
) -> Result<Value, CallError> {
    // The body (which may hold injected values) is dropped with the
    // `run_body` future, before the finalizers run.
    let (result, outcome) = run_body(tool, after, body).await;
    guard.close(outcome).await;
    result
}

/// Step 3: what the `authorize` hook's answer means.
fn authorized(answer: Result<Verdict, CallError>, tool: &'static str) -> Result<(), CallError> {
    match answer? {
        Verdict::Allow => Ok(()),
        Verdict::Deny | Verdict::Pending => Err(CallError::Denied { tool }),
    }
}

/// Step 4: what the `approve` hook's answer means: approved (`true`), or
/// waiting for a person (`false`, the caller answers
/// [`CallError::ApprovalRequired`]).
fn approved(answer: Result<Verdict, CallError>, tool: &'static str) -> Result<bool, CallError> {
    match answer? {
        Verdict::Allow => Ok(true),
        Verdict::Deny => Err(CallError::NotApproved { tool }),
        Verdict::Pending => Ok(false),
    }
}

/// Step 6 for `run_limited!`: the body under the tool's timeout, if it has
/// one. Not generic: the body comes pinned behind a vtable (inside the
/// call's one allocation), so every tool shares this code and its timer.
/// The timer is boxed, as [`run_body`]'s is: held inline, it made a
/// hooked call's future 312 bytes instead of 200, which every call,
/// with a timeout or not, allocated and copied.
async fn limited(
    tool: &'static str,
    after: Option<Duration>,
    body: Pin<&mut (dyn Future<Output = Result<Value, CallError>> + Send + '_)>,
) -> Result<Value, CallError> {
    match after {
        None => body.await,
        Some(after) => Box::pin(tokio::time::timeout(after, body))
            .await
            .unwrap_or(Err(CallError::Timeout { tool, after })),
    }
}

/// A [`PrepareImmediate`] function `$name`: its arguments read, its hook
/// asked if it is asked now (`ask_hooks!`), its body run to the end in one
/// poll (it has no `.await`), its result serialized.
macro_rules! immediate_fn {
    ($(#[$doc:meta])* $name:ident = ask $hooks:ident) => {
        $(#[$doc])*
        fn $name<T: Tool>(
            inner: &ExecutorInner,
            index: usize,
            arguments: &Value,
            ctx: ErasedContext<'_>,
            cx: &mut TaskContext<'_>,
        ) -> Result<Value, CallError> {
            let args = read_arguments!(inner, index, arguments, T);
            let args = ask_hooks!($hooks now, T, ctx, args);
            let body = std::pin::pin!(T::__run(args, ctx, None));
            match body.poll(cx) {
                Poll::Ready(finished) => to_json(T::KEY, finished),
                Poll::Pending => suspended(T::KEY),
            }
        }
    };
}

immediate_fn! {
    /// [`Prepare::Immediate`] for a public `T`.
    immediate = ask none
}

immediate_fn! {
    /// [`Prepare::Immediate`] for a `T` behind an `authorize` hook that
    /// does not wait.
    immediate_guarded = ask authorize
}

/// A body `#[tool]` found no `.await` in waited all the same: a macro of
/// the application's own, named like one `#[tool]` knows, hid one. Its
/// future is dropped where it waited (as a timeout would drop it), and
/// the panic becomes the call's [`CallError::Panicked`]. Not generic.
#[cold]
fn suspended(tool: &'static str) -> ! {
    panic!(
        "the body of `{tool}` waited, but `#[tool]` found no `.await` in it: a macro \
         named like a standard, `tracing` or `log` one (`info!`, `format!`, ...) must \
         have expanded to one; call it by its path (`crate::info!`) or another name"
    )
}

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
///    tool's timeout, catching panics;
/// 7. close the scope with the outcome (finalizers, newest first);
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
}

pub(crate) struct ExecutorInner {
    catalog: Catalog,
    container: Container,
    validators: Vec<Validation>,
    default_timeout: Option<Duration>,
}

/// How a tool's arguments are checked against its schema.
struct Validation {
    /// Compiled by the first call that needs it, because compiling every
    /// tool's is most of what building an executor would cost; or, for a
    /// schema that might not compile, when the executor is built, so that
    /// the error shows at start-up. A call to a tool whose schema
    /// deserializing enforces needs it only when the arguments do not
    /// deserialize.
    validator: OnceLock<Result<jsonschema::Validator, String>>,
    /// Whether the schema says anything deserializing does not already
    /// enforce, so that a successful deserialization needs a validator pass.
    enforcement: Enforcement,
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
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExecutorProblem {
    /// A tool injects a type that no APP value or REQUEST provider gives.
    MissingProvider {
        /// The tool's key.
        tool: &'static str,
        /// Where the tool was declared.
        location: Location,
        /// The type nothing provides.
        type_name: &'static str,
    },
    /// A tool's input schema does not compile (a bad `pattern`, say).
    InvalidSchema {
        /// The tool's key.
        tool: &'static str,
        /// Where the tool was declared.
        location: Location,
        /// The schema compiler's message.
        message: String,
    },
}

impl fmt::Display for ExecutorProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecutorProblem::MissingProvider {
                tool,
                location,
                type_name,
            } => write!(
                f,
                "tool `{tool}` at {location} injects `{type_name}`, but the container provides no `{type_name}`"
            ),
            ExecutorProblem::InvalidSchema {
                tool,
                location,
                message,
            } => write!(
                f,
                "the input schema of tool `{tool}` at {location} does not compile: {message}"
            ),
        }
    }
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutorError {
    /// Every problem.
    pub problems: Vec<ExecutorProblem>,
}

impl fmt::Display for ExecutorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ExecutorError {}

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
    catalog: Catalog,
    container: Container,
    default_timeout: Option<Duration>,
}

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
    ///     assert_eq!(executor.catalog().len(), 1);
    ///     Ok(())
    /// }
    /// ```
    pub fn build(self) -> Result<Executor, ExecutorError> {
        let mut problems = Vec::new();
        let mut validators = Vec::with_capacity(self.catalog.len());
        let mut requirements = Vec::new();
        for entry in &self.catalog {
            requirements.clear();
            (entry.registration().requirements)(&mut requirements);
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
            let schema = entry.input_schema();
            let validator = OnceLock::new();
            // A schema that might not compile is compiled now, so that its
            // error shows at start-up; any other, when a call needs it.
            if !crate::schema::compiles(schema) {
                match jsonschema::draft202012::new(schema) {
                    Ok(compiled) => _ = validator.set(Ok(compiled)),
                    Err(error) => problems.push(ExecutorProblem::InvalidSchema {
                        tool: entry.key(),
                        location: entry.location(),
                        message: error.to_string(),
                    }),
                }
            }
            validators.push(Validation {
                validator,
                enforcement: crate::schema::enforcement(schema),
            });
        }
        if !problems.is_empty() {
            return Err(ExecutorError { problems });
        }
        Ok(Executor {
            inner: Arc::new(ExecutorInner {
                catalog: self.catalog,
                container: self.container,
                validators,
                default_timeout: self.default_timeout,
            }),
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
    /// (some 50 µs, once per tool), not here: compiling them all
    /// would be most of what building an executor costs. A tool whose
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
    ///     assert_eq!(executor.catalog().len(), 1);
    ///     Ok(())
    /// }
    /// ```
    pub fn new(catalog: Catalog, container: Container) -> Result<Executor, ExecutorError> {
        Self::builder(catalog, container).build()
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
    /// assert!(executor.catalog().is_empty());
    /// ```
    pub fn builder(catalog: Catalog, container: Container) -> ExecutorBuilder {
        ExecutorBuilder {
            catalog,
            container,
            default_timeout: None,
        }
    }

    /// The catalog this executor runs.
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
    /// let tools = serde_json::to_value(executor.catalog()).unwrap();
    /// assert_eq!(tools[0]["name"], "add");
    /// assert_eq!(tools[0]["input_schema"]["required"], serde_json::json!(["a", "b"]));
    /// ```
    pub fn catalog(&self) -> &Catalog {
        &self.inner.catalog
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
    /// once: its hooks' futures and its body's are one future (a tool with
    /// an injected parameter also allocates its body's future apart, its
    /// scope, and what its providers build). A public tool whose body
    /// never waits (see [`macro@crate::tool`]) runs whole in that first
    /// poll, without allocating.
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
        // Not an `async fn`: the name is looked up now, so the future holds
        // what the call needs and is small to create and move.
        let inner = &*self.inner;
        let Some(index) = inner.catalog.index_of(name) else {
            return Invoke::Done {
                result: Some(Err(CallError::UnknownTool {
                    name: name.to_owned(),
                })),
            };
        };
        let tool = inner.catalog.entry(index).registration();
        let ctx = ErasedContext::new(ctx);
        let span = call_span(tool);
        // Nothing to read now: the arguments, when polled, with the rest.
        match tool.prepare {
            Prepare::Direct(start) => Invoke::Direct {
                call: Direct {
                    call: Unread::new(inner, index, start, ctx, span, arguments),
                    body: None,
                },
            },
            Prepare::Immediate(start) => Invoke::Immediate {
                call: Unread::new(inner, index, start, ctx, span, arguments),
            },
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
    /// // A tool outside the executor's catalog is unknown, typed or not.
    /// let add = executor.call(AddArgs { a: 1, b: 1 }, &()).await;
    /// assert!(matches!(add, Err(CallError::UnknownTool { .. })));
    /// # }
    /// ```
    pub async fn call<A: Tool, C: Any + Send + Sync>(
        &self,
        args: A,
        ctx: &C,
    ) -> Result<A::Output, CallError> {
        let Some(index) = self.inner.catalog.index_of_type::<A>() else {
            return Err(CallError::UnknownTool {
                name: A::NAME.to_owned(),
            });
        };
        let inner = &*self.inner;
        let tool = inner.catalog.entry(index).registration();
        let ctx = ErasedContext::new(ctx);
        let span = call_span(tool);
        traced(tool, span, async move {
            // Typed arguments satisfy every structural rule; only a schema
            // with constraints (ranges, lengths, patterns, an `f32`'s bound:
            // an infinite `f32` is `null` in JSON) needs a check.
            if inner.validators[index].enforcement != Enforcement::Deserializing {
                let value =
                    crate::json::to_value(&args).map_err(|e| invalid(A::KEY, "", e.to_string()))?;
                inner.validate(index, A::KEY, &value)?;
            }
            let call: Box<dyn Prepared<A::Output>> = Box::new(Call::new(args));
            inner.run(tool, call, ctx).await
        })
        .await
    }
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Executor")
            .field("tools", &self.inner.catalog.len())
            .field("container", &self.inner.container)
            .field("default_timeout", &self.inner.default_timeout)
            .finish()
    }
}

pin_project_lite::pin_project! {
    /// A direct call's body under its timeout.
    struct Timed<F> {
        tool: &'static str,
        after: Duration,
        #[pin]
        body: tokio::time::Timeout<F>,
    }
}

impl<F: Future<Output = Result<Value, CallError>>> Future for Timed<F> {
    type Output = Result<Value, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.project();
        match this.body.poll(cx) {
            Poll::Ready(Ok(finished)) => Poll::Ready(finished),
            Poll::Ready(Err(_)) => Poll::Ready(Err(CallError::Timeout {
                tool: this.tool,
                after: *this.after,
            })),
            Poll::Pending => Poll::Pending,
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`Executor::invoke`]: a call, or the answer of one
    /// that ended before it started (an unknown name, invalid arguments).
    #[project = InvokeProjection]
    #[repr(u8)]
    enum Invoke<'a> {
        Done { result: Option<Result<Value, CallError>> },
        Immediate { call: Immediate<'a> },
        Direct { call: Direct<'a> },
    }
}

/// A call before its first poll: how to start it, and its JSON arguments
/// (`None` once read).
struct Unread<'a, S> {
    inner: &'a ExecutorInner,
    index: usize,
    start: S,
    ctx: ErasedContext<'a>,
    span: tracing::Span,
    arguments: Option<Value>,
}

impl<'a, S> Unread<'a, S> {
    fn new(
        inner: &'a ExecutorInner,
        index: usize,
        start: S,
        ctx: ErasedContext<'a>,
        span: tracing::Span,
        arguments: Value,
    ) -> Self {
        Unread {
            inner,
            index,
            start,
            ctx,
            span,
            arguments: Some(arguments),
        }
    }
}

/// A call of a [`Prepare::Immediate`] tool: every step runs in its first
/// poll, inside the call's span, with one panic catch around them all.
type Immediate<'a> = Unread<'a, PrepareImmediate>;

impl Immediate<'_> {
    fn poll(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<Value, CallError>> {
        let tool = self.inner.catalog.entry(self.index).registration().key;
        // Read in place. Taken out, the `Value` would be copied once more,
        // and a copy of a `Value` that was itself just copied (into this
        // future, and with it) waits for the processor's store forwarding:
        // in `perf`, that wait took longer than the lookup of the tool.
        let Some(arguments) = &self.arguments else {
            return Poll::Ready(Err(polled_after_finishing()));
        };
        let (inner, index, start, ctx) = (self.inner, self.index, self.start, self.ctx);
        let entered = self.span.enter();
        let result = catch_panic(tool, || start(inner, index, arguments, ctx, cx));
        drop(entered);
        self.arguments = None;
        self.span.record("outcome", outcome_label(&result));
        Poll::Ready(result)
    }
}

/// A call of a [`Prepare::Direct`] tool: its arguments until the first
/// poll, then its body (under its timeout, if it has one). Each poll runs
/// inside the call's span, with one panic catch around it.
struct Direct<'a> {
    call: Unread<'a, PrepareDirect>,
    body: Option<JsonFuture<'a>>,
}

impl Direct<'_> {
    fn poll(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<Value, CallError>> {
        let Direct { call, body } = self;
        let inner = call.inner;
        let tool = inner.catalog.entry(call.index).registration();
        let entered = call.span.enter();
        // Steps 2 and 6: the arguments on the first poll, then the body,
        // polled in place (so that one that panics is dropped after the
        // catch, not while the panic unwinds).
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let running = match body {
                Some(running) => running,
                None => {
                    // Read in place, as `Immediate::poll` reads them.
                    let Some(arguments) = &call.arguments else {
                        return Poll::Ready(Err(polled_after_finishing()));
                    };
                    // The body comes under its timeout: the hooks of a
                    // guarded call run before it starts.
                    let started = (call.start)(inner, tool, call.index, arguments, call.ctx);
                    call.arguments = None;
                    match started {
                        Ok(started) => body.insert(started),
                        Err(error) => return Poll::Ready(Err(error)),
                    }
                }
            };
            running.as_mut().poll(cx)
        }));
        let result = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(result)) => result,
            Err(payload) => {
                // The deserializer may have panicked: never read again.
                call.arguments = None;
                Err(CallError::Panicked {
                    tool: tool.key,
                    message: panic_message(payload),
                })
            }
        };
        // The body goes inside the span.
        *body = None;
        drop(entered);
        call.span.record("outcome", outcome_label(&result));
        Poll::Ready(result)
    }
}

impl Drop for Direct<'_> {
    fn drop(&mut self) {
        // A call dropped while its body waits: the body goes inside the
        // span, where it ran.
        if self.body.is_some() {
            let _entered = self.call.span.enter();
            self.body = None;
        }
    }
}

/// The answer of a call's future polled again after it gave its result.
pub(crate) fn polled_after_finishing() -> CallError {
    CallError::Panicked {
        tool: "",
        message: "the call's future was polled after it finished".to_owned(),
    }
}

impl Future for Invoke<'_> {
    type Output = Result<Value, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        match self.project() {
            InvokeProjection::Immediate { call } => call.poll(cx),
            InvokeProjection::Direct { call } => call.poll(cx),
            InvokeProjection::Done { result } => Poll::Ready(
                result
                    .take()
                    .unwrap_or_else(|| Err(polled_after_finishing())),
            ),
        }
    }
}

/// `step()`, with a panic turned into [`CallError::Panicked`].
fn catch_panic<T>(
    tool: &'static str,
    step: impl FnOnce() -> Result<T, CallError>,
) -> Result<T, CallError> {
    std::panic::catch_unwind(AssertUnwindSafe(step)).unwrap_or_else(|payload| {
        Err(CallError::Panicked {
            tool,
            message: panic_message(payload),
        })
    })
}

/// Runs one call's pipeline inside `span` (the call's, from
/// [`call_span`]), catching any panic outside the body (a hook's; the body
/// runner catches the body's, and its serializer's), and records the
/// outcome.
///
/// A plain future rather than an `async fn`: an `async fn` would hold the
/// pipeline twice (as its argument and as the awaited value), and this
/// future is what every call creates and moves.
fn traced<F>(tool: &Registration, span: tracing::Span, pipeline: F) -> Traced<F> {
    Traced {
        tool: tool.key,
        inner: CatchUnwind::new(pipeline).instrument(span),
    }
}

/// The span of one call; not generic, so every tool shares it.
fn call_span(tool: &Registration) -> tracing::Span {
    tracing::info_span!(
        "toolwright.call",
        key = tool.key,
        name = tool.name,
        effect = tool.effect.as_str(),
        outcome = tracing::field::Empty,
    )
}

pin_project_lite::pin_project! {
    /// See [`traced`].
    struct Traced<F> {
        tool: &'static str,
        #[pin]
        inner: tracing::instrument::Instrumented<CatchUnwind<F>>,
    }
}

impl<R, F: Future<Output = Result<R, CallError>>> Future for Traced<F> {
    type Output = Result<R, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let Poll::Ready(caught) = this.inner.as_mut().poll(cx) else {
            return Poll::Pending;
        };
        let tool = *this.tool;
        let result = caught.unwrap_or_else(|message| Err(CallError::Panicked { tool, message }));
        this.inner.span().record("outcome", outcome_label(&result));
        Poll::Ready(result)
    }
}

fn outcome_label<R>(result: &Result<R, CallError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(error) => error_label(error),
    }
}

/// The span's `outcome` for a call that failed with `error`.
fn error_label(error: &CallError) -> &'static str {
    match error {
        CallError::InvalidArguments { .. } => "invalid_arguments",
        CallError::Denied { .. } => "denied",
        CallError::NotApproved { .. } => "not_approved",
        CallError::ApprovalRequired(_) => "approval_required",
        CallError::Panicked { .. } => "panicked",
        CallError::Timeout { .. } => "timeout",
        _ => "error",
    }
}

/// The error for arguments `check` accepted but nothing stored, which cannot
/// happen. Not generic, so no tool compiles its own copy.
fn not_read(tool: &'static str) -> CallError {
    invalid(tool, "", "the arguments were not read".to_owned())
}

fn invalid(tool: &'static str, path: &str, message: String) -> CallError {
    CallError::InvalidArguments {
        tool,
        violations: Violations(vec![Violation {
            path: path.to_owned(),
            message,
        }]),
    }
}

/// The JSON pointer to a top-level field (`~` and `/` escaped).
fn pointer_to(field: &str) -> String {
    format!("/{}", field.replace('~', "~0").replace('/', "~1"))
}

/// Rewrites every float with no fractional part that fits in 64 bits as an
/// integer; returns whether anything changed.
fn integral_floats_to_integers(value: &mut Value) -> bool {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 {
                *value = Value::from(f as i64);
                true
            } else if f.fract() == 0.0 && f >= 0.0 && f < u64::MAX as f64 {
                *value = Value::from(f as u64);
                true
            } else {
                false
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| integral_floats_to_integers(v) | changed),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |changed, v| integral_floats_to_integers(v) | changed),
        _ => false,
    }
}

impl ExecutorInner {
    /// Step 2: validate against the advertised schema and deserialize
    /// (`deserialize` stores the arguments when it succeeds).
    fn check(
        &self,
        index: usize,
        tool: &'static str,
        arguments: &Value,
        deserialize: &mut dyn FnMut(&Value) -> Result<(), serde_json::Error>,
    ) -> Result<(), CallError> {
        // serde also builds a struct from an array; the schema wants an object.
        let fast = arguments.is_object()
            && match self.validators[index].enforcement {
                Enforcement::Deserializing => true,
                Enforcement::WithinF32 => crate::schema::within_f32(arguments),
                Enforcement::Validator => false,
            };
        let tried = fast.then(|| deserialize(arguments));
        if let Some(Ok(())) = tried {
            return Ok(());
        }
        self.validate(index, tool, arguments)?;
        // Deserialize once: a fast-path failure is already this answer.
        let first = match tried {
            Some(Err(first)) => first,
            _ => match deserialize(arguments) {
                Ok(()) => return Ok(()),
                Err(first) => first,
            },
        };
        // JSON Schema counts `2.0` as an integer but serde does not, so a
        // failure is retried once with integral floats written as
        // integers, which changes no value's meaning. If it still fails,
        // that failure is the one to report: `2.0` was not the problem.
        let mut normalized = arguments.clone();
        let (read, error) = if integral_floats_to_integers(&mut normalized) {
            match deserialize(&normalized) {
                Ok(()) => return Ok(()),
                Err(error) => (&normalized, error),
            }
        } else {
            (arguments, first)
        };
        // serde's message does not say where; the field whose value failed
        // does (found by reading again, which fails the same way).
        let path = match crate::args::failed_field(|| deserialize(read)) {
            Some(field) => pointer_to(field),
            None => String::new(),
        };
        Err(invalid(tool, &path, error.to_string()))
    }

    fn validate(
        &self,
        index: usize,
        tool: &'static str,
        arguments: &Value,
    ) -> Result<(), CallError> {
        let validator = self.validators[index].validator.get_or_init(|| {
            let schema = self.catalog.entry(index).input_schema();
            jsonschema::draft202012::new(schema).map_err(|error| {
                // Not expected: a schema whose validator is compiled late
                // always compiles (see `schema::compiles`). The arguments
                // are refused: they cannot be checked.
                tracing::error!(tool, %error, "the input schema does not compile");
                error.to_string()
            })
        });
        let validator = match validator {
            Ok(validator) => validator,
            Err(error) => {
                let message = format!("the arguments could not be checked: {error}");
                return Err(invalid(tool, "", message));
            }
        };
        if validator.is_valid(arguments) {
            return Ok(());
        }
        let violations = validator
            .iter_errors(arguments)
            .map(|error| Violation {
                path: error.instance_path().to_string(),
                message: error.to_string(),
            })
            .collect();
        Err(CallError::InvalidArguments {
            tool,
            violations: Violations(violations),
        })
    }

    /// Step 6 alone, for a [`direct`] call (no hook to ask, no scope to
    /// open or close): the body under its timeout, if it has one. Panics
    /// are caught by [`Direct::poll`]: with no finalizer to tell, a panic
    /// in the body needs no outcome of its own. (Running it through
    /// [`run_body`], as the full pipeline does, was measured at about 57
    /// more instructions a call: a second panic catch, and an outcome
    /// nobody reads.) Inline, so that `direct` of a tool in another crate
    /// does not call it (19 instructions a call).
    #[inline]
    fn timed<'a>(&self, tool: &Registration, body: JsonFuture<'a>) -> JsonFuture<'a> {
        match self.timeout(tool) {
            Some(after) => Box::pin(Timed {
                tool: tool.key,
                after,
                body: tokio::time::timeout(after, body),
            }),
            None => body,
        }
    }

    /// A tool's timeout: its own, or the executor's default.
    fn timeout(&self, tool: &Registration) -> Option<Duration> {
        tool.timeout.or(self.default_timeout)
    }

    /// Steps 3 to 7 of the pipeline, on validated arguments. Generic only
    /// over the output: every JSON call shares one copy.
    async fn run<O>(
        &self,
        tool: &Registration,
        call: Box<dyn Prepared<O>>,
        ctx: ErasedContext<'_>,
    ) -> Result<O, CallError> {
        if !tool.public {
            authorized(call.authorize(ctx).await, tool.key)?;
        }
        if tool.effect.requires_approval() && !approved(call.approve(ctx).await, tool.key)? {
            return Err(CallError::ApprovalRequired(Box::new(
                call.approval_request(),
            )));
        }

        let guard = tool.injects.then(|| ScopeGuard::open(&self.container));
        let body = call.run(ctx, guard.as_ref().map(ScopeGuard::scope));
        let (result, outcome) = run_body(tool.key, self.timeout(tool), body).await;
        match guard {
            // Boxed, with the result: running finalizers is most of this
            // future's state, and only calls that opened a scope (which
            // allocate for it anyway) should carry it; every other call,
            // hooked or direct, moves this pipeline's future on its own stack.
            // (Through `scoped_body`, which the JSON path shares, with a
            // second `.await` for calls that open no scope: 51 instructions
            // more per typed call.)
            Some(guard) => {
                Box::pin(async move {
                    guard.close(outcome).await;
                    result
                })
                .await
            }
            None => result,
        }
    }
}

/// Runs a tool's body under its timeout with panics caught, and says how it
/// ended. Generic only over the output, so tools that return the same type
/// share one copy. A plain future, not an `async fn`, so that it holds
/// only the body and, with a timeout, the boxed timer: the pipeline's
/// future carries it inline.
fn run_body<'a, O>(
    tool: &'static str,
    timeout: Option<Duration>,
    body: BoxFuture<'a, Result<O, CallError>>,
) -> RunBody<'a, O> {
    let body = CatchUnwind::new(body);
    RunBody {
        tool,
        body: match timeout {
            // Boxed: a timer is large, and calls without a timeout should
            // not carry (and copy) its space in their future.
            Some(after) => Guarded::Timed(Box::pin(tokio::time::timeout(after, body)), after),
            None => Guarded::Plain(body),
        },
    }
}

/// See [`run_body`].
struct RunBody<'a, O> {
    tool: &'static str,
    body: Guarded<'a, O>,
}

/// A body with panics caught, under a timer or not.
enum Guarded<'a, O> {
    Plain(Caught<'a, O>),
    Timed(Pin<Box<tokio::time::Timeout<Caught<'a, O>>>>, Duration),
}

/// A body with panics caught.
type Caught<'a, O> = CatchUnwind<BoxFuture<'a, Result<O, CallError>>>;

impl<O> Future for RunBody<'_, O> {
    type Output = (Result<O, CallError>, Outcome);

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        // Unpin: the body is boxed, and so is the timer.
        let tool = self.tool;
        let finished = match &mut self.body {
            Guarded::Plain(body) => std::task::ready!(Pin::new(body).poll(cx)),
            Guarded::Timed(body, after) => match std::task::ready!(body.as_mut().poll(cx)) {
                Ok(finished) => finished,
                Err(_) => {
                    let after = *after;
                    return Poll::Ready((
                        Err(CallError::Timeout { tool, after }),
                        Outcome::Cancelled,
                    ));
                }
            },
        };
        Poll::Ready(match finished {
            Ok(Ok(output)) => (Ok(output), Outcome::Ok),
            Ok(Err(error)) => (Err(error), Outcome::Error),
            Err(message) => (
                Err(CallError::Panicked { tool, message }),
                Outcome::Panicked,
            ),
        })
    }
}

pin_project_lite::pin_project! {
    /// A future that turns a panic while polling into `Err(message)`.
    pub(crate) struct CatchUnwind<F> {
        #[pin]
        future: F,
    }
}

impl<F> CatchUnwind<F> {
    pub(crate) fn new(future: F) -> Self {
        CatchUnwind { future }
    }
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let future = self.project().future;
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(payload) => Poll::Ready(Err(panic_message(payload))),
        }
    }
}

fn panic_message(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}
