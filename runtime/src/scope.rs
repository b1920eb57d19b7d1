//! Dependencies: APP values shared by every call, REQUEST values built
//! lazily once per call, and the finalizers that close them.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OnceCell;

use crate::error::{BoxError, CallError};
use crate::tool::{BoxFuture, ErasedContext};

type Erased = Arc<dyn Any + Send + Sync>;
type Factory = Box<dyn Fn(Scope) -> BoxFuture<'static, Result<Erased, BoxError>> + Send + Sync>;
type Finalizer = Box<dyn FnOnce(Outcome) -> BoxFuture<'static, ()> + Send>;

/// How a call ended, as its request finalizers see it.
///
/// ```
/// use toolwright::Outcome;
/// assert!(Outcome::Ok.is_ok());
/// assert!(!Outcome::Cancelled.is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Outcome {
    /// The tool returned a value.
    Ok,
    /// The tool, or something it depended on, returned an error.
    Error,
    /// The tool panicked.
    Panicked,
    /// The call was cancelled: it timed out, or the caller dropped it.
    Cancelled,
}

impl Outcome {
    /// Whether the call succeeded (commit), as opposed to anything else (roll back).
    pub fn is_ok(self) -> bool {
        self == Outcome::Ok
    }
}

/// A type a tool needs injected, as reported when the executor is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Requirement {
    /// The injected type's id.
    pub type_id: TypeId,
    /// The injected type's name, for messages.
    pub type_name: &'static str,
}

impl Requirement {
    /// The requirement of a value of type `T`.
    pub fn of<T: ?Sized + 'static>() -> Self {
        Requirement {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
        }
    }
}

/// Why a value could not be resolved from a [`Scope`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// Nothing provides the type.
    #[error("no provider for `{type_name}`")]
    Missing {
        /// The type asked for.
        type_name: &'static str,
    },
    /// The request provider returned an error.
    #[error("the provider of `{type_name}` failed")]
    Failed {
        /// The type asked for.
        type_name: &'static str,
        /// The provider's error.
        #[source]
        source: BoxError,
    },
}

impl ResolveError {
    pub(crate) fn for_tool(self, tool: &'static str) -> CallError {
        match self {
            ResolveError::Missing { type_name } => CallError::DependencyMissing { tool, type_name },
            ResolveError::Failed { type_name, source } => CallError::Dependency {
                tool,
                type_name,
                source,
            },
        }
    }
}

/// The providers every call draws from: APP values and REQUEST factories.
///
/// Cheap to clone.
///
/// ```
/// use std::sync::Arc;
/// use toolwright::{Container, Scope};
///
/// trait Clock: Send + Sync { fn now(&self) -> u64; }
/// struct Fixed;
/// impl Clock for Fixed { fn now(&self) -> u64 { 42 } }
///
/// struct Tx { id: u64 }
///
/// let container = Container::builder()
///     .app::<dyn Clock>(Arc::new(Fixed))
///     .request::<Tx>(|scope: Scope| async move {
///         let clock = scope.resolve::<dyn Clock>().await?;
///         scope.on_close(|outcome| async move { println!("closing with {outcome:?}") });
///         Ok::<_, toolwright::ResolveError>(Tx { id: clock.now() })
///     })
///     .build();
/// assert!(container.provides::<dyn Clock>() && container.provides::<Tx>());
/// ```
#[derive(Clone, Default)]
pub struct Container {
    inner: Arc<ContainerInner>,
}

#[derive(Default)]
struct ContainerInner {
    app: HashMap<TypeId, Erased>,
    request: HashMap<TypeId, Provider>,
}

struct Provider {
    type_name: &'static str,
    factory: Factory,
}

impl Container {
    /// Starts an empty container.
    pub fn builder() -> ContainerBuilder {
        ContainerBuilder::default()
    }

    /// Whether an APP value or a REQUEST provider gives `T`.
    pub fn provides<T: ?Sized + 'static>(&self) -> bool {
        self.provides_id(TypeId::of::<T>())
    }

    pub(crate) fn provides_id(&self, id: TypeId) -> bool {
        self.inner.app.contains_key(&id) || self.inner.request.contains_key(&id)
    }
}

impl fmt::Debug for Container {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let requests: Vec<_> = self.inner.request.values().map(|p| p.type_name).collect();
        f.debug_struct("Container")
            .field("app_values", &self.inner.app.len())
            .field("request_providers", &requests)
            .finish()
    }
}

/// Builds a [`Container`].
#[derive(Default)]
pub struct ContainerBuilder {
    inner: ContainerInner,
}

/// An async factory for a REQUEST value of type `T`: any
/// `Fn(Scope) -> impl Future<Output = Result<V, E>>` with `V: Into<Arc<T>>`.
///
/// Implemented for closures; see [`ContainerBuilder::request`].
#[diagnostic::on_unimplemented(
    message = "this is not a request factory for `{T}`",
    note = "a request factory is `|scope: Scope| async move {{ ... Ok::<_, E>(value) }}` returning a value that converts into `Arc<{T}>`"
)]
pub trait RequestFactory<T: ?Sized>: Send + Sync + 'static {
    /// Builds the value for one call.
    fn build(&self, scope: Scope) -> BoxFuture<'static, Result<Arc<T>, BoxError>>;
}

impl<T, F, Fut, V, E> RequestFactory<T> for F
where
    T: ?Sized + 'static,
    F: Fn(Scope) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<V, E>> + Send + 'static,
    V: Into<Arc<T>>,
    E: Into<BoxError>,
{
    fn build(&self, scope: Scope) -> BoxFuture<'static, Result<Arc<T>, BoxError>> {
        let fut = self(scope);
        Box::pin(async move { fut.await.map(Into::into).map_err(Into::into) })
    }
}

impl ContainerBuilder {
    /// Adds an APP value: built by the application, shared by every call,
    /// owned by the application (a tool only ever gets a shared handle).
    ///
    /// `T` may be unsized: `.app::<dyn Service>(Arc::new(Impl))`.
    pub fn app<T: ?Sized + Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.inner.app.insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// Adds a REQUEST provider: run lazily, at most once per call, the first
    /// time the call needs a `T`. The factory gets the call's [`Scope`], so it
    /// can resolve other values and register a finalizer with
    /// [`Scope::on_close`].
    pub fn request<T: ?Sized + Send + Sync + 'static>(
        mut self,
        factory: impl RequestFactory<T>,
    ) -> Self {
        let factory: Factory = Box::new(move |scope| {
            let fut = factory.build(scope);
            Box::pin(async move { fut.await.map(|value| Arc::new(value) as Erased) })
        });
        self.inner.request.insert(
            TypeId::of::<T>(),
            Provider {
                type_name: std::any::type_name::<T>(),
                factory,
            },
        );
        self
    }

    /// Finishes the container.
    pub fn build(self) -> Container {
        Container {
            inner: Arc::new(self.inner),
        }
    }
}

/// The REQUEST scope of one call: values built for it, and the finalizers
/// that run when it closes.
///
/// Cheap to clone; every clone is the same scope.
#[derive(Clone)]
pub struct Scope {
    inner: Arc<ScopeInner>,
}

struct ScopeInner {
    container: Container,
    cells: Mutex<HashMap<TypeId, Arc<OnceCell<Erased>>>>,
    finalizers: Mutex<Finalizers>,
}

#[derive(Default)]
struct Finalizers {
    pending: Vec<Finalizer>,
    closed: Option<Outcome>,
}

impl Scope {
    pub(crate) fn new(container: Container) -> Self {
        Scope {
            inner: Arc::new(ScopeInner {
                container,
                cells: Mutex::new(HashMap::new()),
                finalizers: Mutex::new(Finalizers::default()),
            }),
        }
    }

    /// Resolves a `T`: the APP value, or this call's REQUEST value (built
    /// now if nobody asked before; concurrent askers wait for one build).
    pub async fn resolve<T: ?Sized + Send + Sync + 'static>(&self) -> Result<Arc<T>, ResolveError> {
        let id = TypeId::of::<T>();
        let type_name = std::any::type_name::<T>();
        let container = &self.inner.container.inner;
        let erased = if let Some(value) = container.app.get(&id) {
            value.clone()
        } else if let Some(provider) = container.request.get(&id) {
            let cell = self
                .inner
                .cells
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(id)
                .or_default()
                .clone();
            cell.get_or_try_init(|| (provider.factory)(self.clone()))
                .await
                .map_err(|source| ResolveError::Failed { type_name, source })?
                .clone()
        } else {
            return Err(ResolveError::Missing { type_name });
        };
        Ok(erased
            .downcast_ref::<Arc<T>>()
            .expect("values are stored under their own TypeId")
            .clone())
    }

    /// Registers a finalizer, run once when the call ends, with its outcome.
    ///
    /// Finalizers run in reverse order of registration. A finalizer that
    /// panics is reported through `tracing` and the others still run.
    pub fn on_close<F, Fut>(&self, finalizer: F)
    where
        F: FnOnce(Outcome) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let finalizer: Finalizer = Box::new(move |outcome| Box::pin(finalizer(outcome)));
        let mut state = self
            .inner
            .finalizers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match state.closed {
            None => state.pending.push(finalizer),
            // Registered after the call ended (a provider that outlived it):
            // still run exactly once, with the call's outcome.
            Some(outcome) => {
                drop(state);
                spawn_detached(run_finalizers(vec![finalizer], outcome));
            }
        }
    }

    /// Runs every finalizer with `outcome`, newest first.
    pub(crate) async fn close(&self, outcome: Outcome) {
        if let Some(finalizers) = self.take_finalizers(outcome) {
            run_finalizers(finalizers, outcome).await;
        }
    }

    fn take_finalizers(&self, outcome: Outcome) -> Option<Vec<Finalizer>> {
        let mut state = self
            .inner
            .finalizers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if state.closed.is_some() {
            return None;
        }
        state.closed = Some(outcome);
        Some(std::mem::take(&mut state.pending))
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

async fn run_finalizers(mut finalizers: Vec<Finalizer>, outcome: Outcome) {
    while let Some(finalizer) = finalizers.pop() {
        let run = crate::executor::CatchUnwind::new(finalizer(outcome));
        if let Err(message) = run.await {
            tracing::error!(%message, "a request finalizer panicked");
        }
    }
}

/// Runs `fut` to completion without anyone awaiting it: on the current tokio
/// runtime if there is one, otherwise on a thread of its own.
fn spawn_detached(fut: impl Future<Output = ()> + Send + 'static) {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => {
            handle.spawn(fut);
        }
        Err(_) => {
            std::thread::spawn(move || {
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime.block_on(fut),
                    Err(error) => tracing::error!(%error, "no runtime to run finalizers on"),
                }
            });
        }
    }
}

/// Closes a scope when the pipeline is done with it, or, if the caller
/// dropped the call first, hands the finalizers to the runtime with
/// [`Outcome::Cancelled`].
pub(crate) struct ScopeGuard {
    scope: Scope,
}

impl ScopeGuard {
    pub(crate) fn open(container: &Container) -> Self {
        ScopeGuard {
            scope: Scope::new(container.clone()),
        }
    }

    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }

    pub(crate) async fn close(self, outcome: Outcome) {
        self.scope.close(outcome).await;
    }
}

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        if let Some(finalizers) = self.scope.take_finalizers(Outcome::Cancelled)
            && !finalizers.is_empty()
        {
            spawn_detached(run_finalizers(finalizers, Outcome::Cancelled));
        }
    }
}

/// A value injected from the call's scope: an APP value or a REQUEST value.
///
/// Parameters of type `Inject<T>` are never inputs: they do not appear in
/// the tool's schema and a caller cannot supply them.
///
/// ```
/// use toolwright::{tool, Inject};
///
/// trait Greeter: Send + Sync { fn greet(&self, name: &str) -> String; }
///
/// /// Greet someone.
/// #[tool(key = "demo.greet", effect = read, authorize = public)]
/// async fn greet(name: String, greeter: Inject<dyn Greeter>) -> String {
///     greeter.greet(&name)
/// }
/// ```
pub struct Inject<T: ?Sized>(Arc<T>);

impl<T: ?Sized> Inject<T> {
    /// Wraps a shared value (useful when calling a tool fn directly in tests).
    pub fn new(value: Arc<T>) -> Self {
        Inject(value)
    }

    /// The shared handle.
    pub fn into_inner(self) -> Arc<T> {
        self.0
    }
}

impl<T: ?Sized> Deref for Inject<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> Clone for Inject<T> {
    fn clone(&self) -> Self {
        Inject(self.0.clone())
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Inject<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Inject").field(&&*self.0).finish()
    }
}

/// A parameter type resolved from the call's [`Scope`] instead of the
/// arguments. [`Inject<T>`] implements it; so can your own types, used with
/// `#[inject]` on the parameter.
///
/// ```
/// use std::sync::Arc;
/// use toolwright::{FromScope, Requirement, ResolveError, Scope};
///
/// struct Db;
/// /// A read-only view of the database.
/// struct ReadOnly(Arc<Db>);
///
/// impl FromScope for ReadOnly {
///     async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
///         Ok(ReadOnly(scope.resolve::<Db>().await?))
///     }
///     fn requirements(out: &mut Vec<Requirement>) {
///         out.push(Requirement::of::<Db>());
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be injected",
    label = "not resolvable from the call's scope",
    note = "inject `toolwright::Inject<T>` with `T: Send + Sync + 'static` provided by the container, or implement `toolwright::FromScope` for `{Self}`"
)]
pub trait FromScope: Sized + Send {
    /// Resolves the value for one call.
    fn from_scope(scope: &Scope) -> impl Future<Output = Result<Self, ResolveError>> + Send;

    /// The types this resolves, so a missing provider is reported when the
    /// executor is built instead of at the first call.
    fn requirements(out: &mut Vec<Requirement>) {
        let _ = out;
    }
}

// Not recommended, so that `Inject<Rc<u8>>` is reported as "cannot be
// injected" with the note saying what `T` needs, not as two bare
// "cannot be sent/shared between threads" errors.
#[diagnostic::do_not_recommend]
impl<T: ?Sized + Send + Sync + 'static> FromScope for Inject<T> {
    async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
        scope.resolve::<T>().await.map(Inject)
    }

    fn requirements(out: &mut Vec<Requirement>) {
        out.push(Requirement::of::<T>());
    }
}

/// The caller's context, as a tool parameter.
///
/// The context is what the application passes to
/// [`crate::Executor::invoke`]; a model or client can never supply it. It is
/// cloned into the call, so keep it cheap to clone (an `Arc` inside).
///
/// ```
/// use toolwright::{tool, Context};
///
/// #[derive(Clone)]
/// struct Actor { name: String }
///
/// /// Say who is calling.
/// #[tool(key = "demo.whoami", effect = read, authorize = public)]
/// async fn whoami(actor: Context<Actor>) -> String {
///     actor.0.name
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Context<C>(pub C);

impl<C> Deref for Context<C> {
    type Target = C;

    fn deref(&self) -> &C {
        &self.0
    }
}

/// Builds a `Context<C>` parameter from the caller's context.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot receive the caller's context",
    note = "a context parameter is `toolwright::Context<C>` with `C: Clone + Send + Sync + 'static`"
)]
pub trait FromContext: Sized {
    fn from_context(ctx: ErasedContext<'_>, tool: &'static str) -> Result<Self, CallError>;
}

impl<C: Clone + Any + Send + Sync> FromContext for Context<C> {
    fn from_context(ctx: ErasedContext<'_>, tool: &'static str) -> Result<Self, CallError> {
        ctx.downcast::<C>(tool).map(|c| Context(c.clone()))
    }
}
