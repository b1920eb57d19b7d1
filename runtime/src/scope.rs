//! Dependencies: APP values shared by every call, REQUEST values built
//! lazily once per call, and the finalizers that close them.

use std::any::{Any, TypeId};
use std::collections::hash_map::Entry;
use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context as TaskContext, Poll, Waker};

use crate::error::{BoxError, CallError};
use crate::hash::KeyMap;
use crate::tool::{BoxFuture, ErasedContext};

type Erased = Box<dyn Any + Send + Sync>;
/// A REQUEST provider's build, its value type-erased.
type ErasedBuild = BoxFuture<'static, Result<Erased, BoxError>>;
type Factory = Box<dyn Fn(Scope) -> ErasedBuild + Send + Sync>;
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
    ///
    /// ```
    /// use toolwright::Outcome;
    ///
    /// let end = |outcome: Outcome| if outcome.is_ok() { "commit" } else { "rollback" };
    /// assert_eq!(end(Outcome::Ok), "commit");
    /// assert_eq!(end(Outcome::Error), "rollback");
    /// assert_eq!(end(Outcome::Cancelled), "rollback");
    /// ```
    pub fn is_ok(self) -> bool {
        self == Outcome::Ok
    }
}

/// A type a tool needs injected, as reported when the executor is built.
///
/// [`FromScope::requirements`] lists them; the executor checks each against
/// the container.
///
/// ```
/// use toolwright::{FromScope, Inject, Requirement};
///
/// trait Mailer: Send + Sync {}
///
/// let mut needed = Vec::new();
/// Inject::<dyn Mailer>::requirements(&mut needed);
/// assert_eq!(needed, [Requirement::of::<dyn Mailer>()]);
/// assert!(needed[0].type_name.ends_with("Mailer"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Requirement {
    /// The injected type's id.
    pub type_id: TypeId,
    /// The injected type's name, for messages.
    pub type_name: &'static str,
}

impl Requirement {
    /// The requirement of a value of type `T`.
    ///
    /// ```
    /// use std::any::TypeId;
    /// use toolwright::Requirement;
    ///
    /// struct Db;
    ///
    /// let db = Requirement::of::<Db>();
    /// assert_eq!(db.type_id, TypeId::of::<Db>());
    /// assert_ne!(db, Requirement::of::<String>());
    /// ```
    pub fn of<T: ?Sized + 'static>() -> Self {
        Requirement {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
        }
    }
}

/// Why a value could not be resolved from a [`Scope`].
///
/// A tool whose injected value fails to resolve fails with
/// [`CallError::DependencyMissing`] or [`CallError::Dependency`]; a
/// [`FromScope`] impl can also handle the error itself, here to make a
/// dependency optional:
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolwright::{tool, Catalog, Container, Executor, FromScope, ResolveError, Scope};
///
/// /// The caller's language; English when nothing provides one.
/// struct Language(Arc<str>);
///
/// impl FromScope for Language {
///     async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
///         match scope.resolve::<str>().await {
///             Ok(tag) => Ok(Language(tag)),
///             Err(ResolveError::Missing { .. }) => Ok(Language("en".into())),
///             Err(other) => Err(other),
///         }
///     }
/// }
///
/// /// Say hello.
/// #[tool(key = "demo.hello", effect = read, authorize = public)]
/// async fn hello(#[inject] language: Language) -> String {
///     format!("hello in `{}`", language.0)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<HelloArgs>().build().unwrap();
/// let english = Executor::new(catalog.clone(), Container::default()).unwrap();
/// assert_eq!(english.invoke("hello", json!({}), &()).await.unwrap(), "hello in `en`");
///
/// let french = Container::builder().app::<str>(Arc::from("fr")).build();
/// let french = Executor::new(catalog, french).unwrap();
/// assert_eq!(french.invoke("hello", json!({}), &()).await.unwrap(), "hello in `fr`");
///
/// let missing = ResolveError::Missing { type_name: "Language" };
/// assert_eq!(missing.to_string(), "no provider for `Language`");
/// # }
/// ```
///
/// [`CallError::DependencyMissing`]: crate::CallError::DependencyMissing
/// [`CallError::Dependency`]: crate::CallError::Dependency
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
    /// A REQUEST provider asked, directly or through other providers, for
    /// the value it is building: waiting would never end, so the ask fails.
    /// The provider that asked usually returns this with `?`, and its own
    /// asker then sees it as the [`source`](std::error::Error::source) of
    /// [`ResolveError::Failed`]; the call fails with
    /// [`CallError::Dependency`].
    ///
    /// The [`Scope`] a provider gets speaks for its build while the build
    /// lasts. Kept afterwards (in the value, or in a task), it asks as any
    /// other caller does, and what it waits for is no part of a cycle.
    ///
    /// ```
    /// use std::error::Error as _;
    /// use serde_json::json;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, Inject};
    /// use toolwright::{ResolveError, Scope};
    ///
    /// struct Session;
    /// struct User;
    ///
    /// /// Say whether someone is signed in.
    /// #[tool(key = "session.active", effect = read, authorize = public)]
    /// async fn active(_user: Inject<User>) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // Each provider asks for the other's value.
    /// let container = Container::builder()
    ///     .request::<Session>(|scope: Scope| async move {
    ///         scope.resolve::<User>().await?;
    ///         Ok::<_, ResolveError>(Session)
    ///     })
    ///     .request::<User>(|scope: Scope| async move {
    ///         scope.resolve::<Session>().await?;
    ///         Ok::<_, ResolveError>(User)
    ///     })
    ///     .build();
    /// let catalog = Catalog::builder().register::<ActiveArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, container).unwrap();
    ///
    /// // The call fails instead of waiting forever.
    /// let error = executor.invoke("active", json!({}), &()).await.unwrap_err();
    /// assert!(matches!(error, CallError::Dependency { tool: "session.active", .. }));
    /// // The user's provider asked for the session, whose provider asked for
    /// // the user: the session's build failed, with the cycle as its source.
    /// let failed = error.source().unwrap().downcast_ref::<ResolveError>().unwrap();
    /// assert!(matches!(failed, ResolveError::Failed { type_name, .. } if type_name.ends_with("Session")));
    /// let cycle = failed.source().unwrap().downcast_ref::<ResolveError>().unwrap();
    /// let ResolveError::Cycle { path, .. } = cycle else { panic!("{cycle:?}") };
    /// let path: Vec<_> = path.iter().map(|name| name.rsplit("::").next().unwrap()).collect();
    /// assert_eq!(path, ["Session", "User", "Session"]);
    /// assert!(cycle.to_string().starts_with("providers wait for each other: `"));
    /// # }
    /// ```
    ///
    /// [`CallError::Dependency`]: crate::CallError::Dependency
    #[error("providers wait for each other: {}", CyclePath(path))]
    Cycle {
        /// The type asked for.
        type_name: &'static str,
        /// The types whose builds wait, each for the next: it starts and
        /// ends with the type whose provider asked.
        path: Vec<&'static str>,
    },
}

/// A cycle of types as `` `A` → `B` → `A` ``.
struct CyclePath<'a>(&'a [&'static str]);

impl fmt::Display for CyclePath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, type_name) in self.0.iter().enumerate() {
            let arrow = if i == 0 { "" } else { " → " };
            write!(f, "{arrow}`{type_name}`")?;
        }
        Ok(())
    }
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
            cycle @ ResolveError::Cycle { type_name, .. } => CallError::Dependency {
                tool,
                type_name,
                source: Box::new(cycle),
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
    /// What the container provides for each type: one map, so that
    /// resolving a value looks its type up once.
    sources: KeyMap<TypeId, Source>,
    /// How many REQUEST providers there are, each with its slot
    /// (`Provider::slot`), numbered when the container is built.
    slots: usize,
}

enum Source {
    App(Erased),
    Request(Provider),
}

struct Provider {
    type_name: &'static str,
    factory: Factory,
    /// Where a scope keeps this provider's value: the providers are
    /// numbered `0..slots`.
    slot: usize,
}

impl Container {
    /// Starts an empty container.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolwright::Container;
    ///
    /// struct Config { currency: &'static str }
    ///
    /// let container = Container::builder().app(Arc::new(Config { currency: "EUR" })).build();
    /// assert!(container.provides::<Config>());
    /// ```
    pub fn builder() -> ContainerBuilder {
        ContainerBuilder::default()
    }

    /// Whether an APP value or a REQUEST provider gives `T`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolwright::{Container, Scope};
    ///
    /// trait Mailer: Send + Sync {}
    /// struct Smtp;
    /// impl Mailer for Smtp {}
    /// struct Session;
    ///
    /// let container = Container::builder()
    ///     .app::<dyn Mailer>(Arc::new(Smtp))
    ///     .request::<Session>(|_: Scope| async { Ok::<_, std::io::Error>(Session) })
    ///     .build();
    /// assert!(container.provides::<dyn Mailer>());
    /// assert!(container.provides::<Session>());
    /// // Provided under `dyn Mailer`, not under the concrete type.
    /// assert!(!container.provides::<Smtp>());
    /// ```
    pub fn provides<T: ?Sized + 'static>(&self) -> bool {
        self.provides_id(TypeId::of::<T>())
    }

    /// The type of the REQUEST provider in `slot`.
    fn type_name(&self, slot: usize) -> &'static str {
        self.inner
            .sources
            .values()
            .find_map(|source| match source {
                Source::Request(provider) if provider.slot == slot => Some(provider.type_name),
                _ => None,
            })
            .expect("every slot is a REQUEST provider's")
    }

    pub(crate) fn provides_id(&self, id: TypeId) -> bool {
        self.inner.sources.contains_key(&id)
    }
}

impl fmt::Debug for Container {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sources = self.inner.sources.values();
        let (mut app_values, mut requests) = (0, Vec::new());
        for source in sources {
            match source {
                Source::App(_) => app_values += 1,
                Source::Request(provider) => requests.push(provider.type_name),
            }
        }
        f.debug_struct("Container")
            .field("app_values", &app_values)
            .field("request_providers", &requests)
            .finish()
    }
}

/// Builds a [`Container`].
///
/// APP values are built once by the application; REQUEST values are built
/// for each call that needs them:
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use serde_json::json;
/// use toolwright::{tool, Catalog, Container, Executor, Inject, Scope};
///
/// struct Config { greeting: String }
/// struct RequestId(u64);
///
/// /// Greet someone.
/// #[tool(key = "demo.greet", effect = read, authorize = public)]
/// async fn greet(name: String, config: Inject<Config>, id: Inject<RequestId>) -> String {
///     format!("{} {name} (request {})", config.greeting, id.0)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let next_id = Arc::new(AtomicU64::new(1));
/// let container = Container::builder()
///     .app(Arc::new(Config { greeting: "Hello".into() }))
///     .request::<RequestId>(move |_: Scope| {
///         let id = next_id.fetch_add(1, Ordering::Relaxed);
///         async move { Ok::<_, std::convert::Infallible>(RequestId(id)) }
///     })
///     .build();
///
/// let catalog = Catalog::builder().register::<GreetArgs>().build().unwrap();
/// let executor = Executor::new(catalog, container).unwrap();
/// let first = executor.invoke("greet", json!({"name": "Ada"}), &()).await.unwrap();
/// let second = executor.invoke("greet", json!({"name": "Ada"}), &()).await.unwrap();
/// assert_eq!(first, "Hello Ada (request 1)");
/// assert_eq!(second, "Hello Ada (request 2)");
/// # }
/// ```
#[derive(Default)]
pub struct ContainerBuilder {
    inner: ContainerInner,
}

/// An async factory for a REQUEST value of type `T`: any
/// `Fn(Scope) -> impl Future<Output = Result<V, E>>` with `V: Into<Arc<T>>`
/// and `E: Into<BoxError>`.
///
/// Implemented for closures and `async fn`s; see [`ContainerBuilder::request`].
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolwright::{tool, Catalog, Container, Executor, Inject, ResolveError, Scope};
///
/// struct Pool { url: String }
/// struct Connection { url: String }
///
/// async fn connect(scope: Scope) -> Result<Connection, ResolveError> {
///     let pool = scope.resolve::<Pool>().await?;
///     Ok(Connection { url: pool.url.clone() })
/// }
///
/// /// Which database this call uses.
/// #[tool(key = "db.which", effect = read, authorize = public)]
/// async fn which_db(connection: Inject<Connection>) -> String {
///     connection.url.clone()
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let container = Container::builder()
///     .app(Arc::new(Pool { url: "postgres://shop".into() }))
///     .request::<Connection>(connect)
///     .build();
/// let catalog = Catalog::builder().register::<WhichDbArgs>().build().unwrap();
/// let executor = Executor::new(catalog, container).unwrap();
/// let url = executor.invoke("which_db", json!({}), &()).await.unwrap();
/// assert_eq!(url, "postgres://shop");
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "this is not a request factory for `{T}`",
    note = "a request factory is `|scope: Scope| async move {{ ... Ok::<_, E>(value) }}` returning a value that converts into `Arc<{T}>`"
)]
pub trait RequestFactory<T: ?Sized>: Send + Sync + 'static {
    /// Builds the value for one call.
    ///
    /// The executor calls it; an application calls it to wrap one factory
    /// in another, here to count the builds:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, Inject, RequestFactory, Scope};
    ///
    /// fn counted<T: ?Sized + 'static>(
    ///     builds: Arc<AtomicUsize>,
    ///     factory: impl RequestFactory<T>,
    /// ) -> impl RequestFactory<T> {
    ///     move |scope: Scope| {
    ///         builds.fetch_add(1, Ordering::Relaxed);
    ///         factory.build(scope)
    ///     }
    /// }
    ///
    /// struct Session;
    ///
    /// /// Check the session.
    /// #[tool(key = "session.check", effect = read, authorize = public)]
    /// async fn check(_session: Inject<Session>) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let builds = Arc::new(AtomicUsize::new(0));
    /// let open = |_: Scope| async { Ok::<_, std::io::Error>(Session) };
    /// let container = Container::builder()
    ///     .request::<Session>(counted(builds.clone(), open))
    ///     .build();
    /// let catalog = Catalog::builder().register::<CheckArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, container).unwrap();
    /// executor.invoke("check", json!({}), &()).await.unwrap();
    /// executor.invoke("check", json!({}), &()).await.unwrap();
    /// assert_eq!(builds.load(Ordering::Relaxed), 2);
    /// # }
    /// ```
    fn build(&self, scope: Scope) -> BoxFuture<'static, Result<Arc<T>, BoxError>>;

    /// [`build`](Self::build) with the value type-erased, as a container
    /// stores it. Not a public API: the impl for closures overrides it to
    /// box the build once instead of twice.
    #[doc(hidden)]
    fn __build_erased(&self, scope: Scope) -> ErasedBuild
    where
        T: Send + Sync + 'static,
    {
        let build = self.build(scope);
        Box::pin(async move { build.await.map(|value| Box::new(value) as Erased) })
    }
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

    fn __build_erased(&self, scope: Scope) -> ErasedBuild
    where
        T: Send + Sync + 'static,
    {
        let fut = self(scope);
        Box::pin(async move {
            match fut.await {
                Ok(value) => Ok(Box::new(value.into()) as Erased),
                Err(error) => Err(error.into()),
            }
        })
    }
}

impl ContainerBuilder {
    /// Adds an APP value: built by the application, shared by every call,
    /// owned by the application (a tool only ever gets a shared handle).
    ///
    /// `T` may be unsized: `.app::<dyn Service>(Arc::new(Impl))`.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, Inject};
    ///
    /// #[derive(Default)]
    /// struct Lookups(Mutex<Vec<u64>>);
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64, lookups: Inject<Lookups>) -> String {
    ///     lookups.0.lock().unwrap().push(id);
    ///     format!("product {id}")
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let lookups = Arc::new(Lookups::default());
    /// let container = Container::builder().app(lookups.clone()).build();
    /// let catalog = Catalog::builder().register::<GetProductArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, container).unwrap();
    /// executor.invoke("get_product", json!({"id": 7}), &()).await.unwrap();
    ///
    /// // The application still holds the value the tool used.
    /// assert_eq!(*lookups.0.lock().unwrap(), [7]);
    /// # }
    /// ```
    pub fn app<T: ?Sized + Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        // An APP value wins over a REQUEST provider of the same type,
        // whichever came first.
        self.inner
            .sources
            .insert(TypeId::of::<T>(), Source::App(Box::new(value)));
        self
    }

    /// Adds a REQUEST provider: run lazily, the first time a call needs a
    /// `T`, and at most once per call when it succeeds. The factory gets the
    /// call's [`Scope`], so it can resolve other values and register a
    /// finalizer with [`Scope::on_close`]. A factory that asks, directly or
    /// through other providers, for the value it is building gets
    /// [`ResolveError::Cycle`] instead of waiting for itself.
    ///
    /// A factory that fails fails the call with [`CallError::Dependency`],
    /// which keeps the factory's error:
    ///
    /// ```
    /// use std::error::Error as _;
    /// use serde_json::json;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, Inject, Scope};
    ///
    /// struct Connection;
    ///
    /// /// Count the orders.
    /// #[tool(key = "orders.count", effect = read, authorize = public)]
    /// async fn count_orders(_db: Inject<Connection>) -> u64 { 0 }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let container = Container::builder()
    ///     .request::<Connection>(|_: Scope| async {
    ///         Err::<Connection, _>(std::io::Error::other("database unreachable"))
    ///     })
    ///     .build();
    /// let catalog = Catalog::builder().register::<CountOrdersArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, container).unwrap();
    ///
    /// let error = executor.invoke("count_orders", json!({}), &()).await.unwrap_err();
    /// assert!(matches!(error, CallError::Dependency { tool: "orders.count", .. }));
    /// let cause = error.source().unwrap().downcast_ref::<std::io::Error>().unwrap();
    /// assert_eq!(cause.to_string(), "database unreachable");
    /// # }
    /// ```
    ///
    /// [`CallError::Dependency`]: crate::CallError::Dependency
    pub fn request<T: ?Sized + Send + Sync + 'static>(
        mut self,
        factory: impl RequestFactory<T>,
    ) -> Self {
        let factory: Factory = Box::new(move |scope| factory.__build_erased(scope));
        let type_name = std::any::type_name::<T>();
        match self.inner.sources.entry(TypeId::of::<T>()) {
            // A second provider for `T` replaces the first; an APP value
            // of `T` stays (it wins, whichever came first).
            Entry::Occupied(mut first) => {
                if let Source::Request(first) = first.get_mut() {
                    first.type_name = type_name;
                    first.factory = factory;
                }
            }
            Entry::Vacant(vacant) => {
                vacant.insert(Source::Request(Provider {
                    type_name,
                    factory,
                    slot: 0,
                }));
            }
        }
        self
    }

    /// Finishes the container.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolwright::Container;
    ///
    /// struct Config;
    ///
    /// let container = Container::builder().app(Arc::new(Config)).build();
    /// // Cheap to clone: every clone shares the same providers.
    /// let shared = container.clone();
    /// assert!(shared.provides::<Config>());
    /// ```
    pub fn build(mut self) -> Container {
        // Numbered now, so that a provider an APP value replaced has none.
        let providers = self
            .inner
            .sources
            .values_mut()
            .filter_map(|source| match source {
                Source::Request(provider) => Some(provider),
                Source::App(_) => None,
            });
        let mut slots = 0;
        for provider in providers {
            provider.slot = slots;
            slots += 1;
        }
        self.inner.slots = slots;
        Container {
            inner: Arc::new(self.inner),
        }
    }
}

/// The REQUEST scope of one call: values built for it, and the finalizers
/// that run when it closes.
///
/// Cheap to clone; every clone is the same scope. The executor opens one for
/// each call of a tool with injected parameters and hands it to REQUEST
/// factories and [`FromScope`] impls; it closes it, running the finalizers,
/// before the call returns.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use serde_json::json;
/// use toolwright::{tool, Catalog, Container, Executor, Inject, Invocation, ResolveError, Scope};
///
/// #[derive(Default)]
/// struct Journal(Mutex<Vec<&'static str>>);
/// struct Transaction;
///
/// /// Reserve stock.
/// #[tool(key = "stock.reserve", effect = write, authorize = public, approve = approved)]
/// async fn reserve(quantity: u32, _tx: Inject<Transaction>) -> Result<u32, std::io::Error> {
///     if quantity > 10 {
///         return Err(std::io::Error::other("not enough stock"));
///     }
///     Ok(quantity)
/// }
///
/// async fn approved(_: &(), _: &Invocation<'_, ReserveArgs>) -> bool { true }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let journal = Arc::new(Journal::default());
/// let container = Container::builder()
///     .app(journal.clone())
///     .request::<Transaction>(|scope: Scope| async move {
///         let journal = scope.resolve::<Journal>().await?;
///         scope.on_close(move |outcome| async move {
///             let end = if outcome.is_ok() { "commit" } else { "rollback" };
///             journal.0.lock().unwrap().push(end);
///         });
///         Ok::<_, ResolveError>(Transaction)
///     })
///     .build();
/// let catalog = Catalog::builder().register::<ReserveArgs>().build().unwrap();
/// let executor = Executor::new(catalog, container).unwrap();
///
/// assert!(executor.invoke("reserve", json!({"quantity": 2}), &()).await.is_ok());
/// assert!(executor.invoke("reserve", json!({"quantity": 50}), &()).await.is_err());
/// assert_eq!(*journal.0.lock().unwrap(), ["commit", "rollback"]);
/// # }
/// ```
#[derive(Clone)]
pub struct Scope {
    inner: Arc<ScopeInner>,
    /// The REQUEST provider's build this handle was given to: its slot and
    /// the build's number in that slot (a failed build is tried again).
    /// What the handle asks for, that build waits for, while it lasts.
    builder: Option<(usize, u32)>,
}

struct ScopeInner {
    container: Container,
    /// This call's REQUEST values, one cell per provider (its `slot`).
    cells: Box<[Cell]>,
    /// Which build waits for which (slots, waiter first): a build waits
    /// for each value it asks for, built by itself or by another asker.
    waits: Mutex<Vec<(usize, usize)>>,
    finalizers: Mutex<Finalizers>,
}

#[derive(Default)]
struct Finalizers {
    pending: Vec<Finalizer>,
    closed: Option<Outcome>,
}

impl Scope {
    pub(crate) fn new(container: Container) -> Self {
        let cells = (0..container.inner.slots)
            .map(|_| Cell::default())
            .collect();
        Scope {
            inner: Arc::new(ScopeInner {
                container,
                cells,
                waits: Mutex::new(Vec::new()),
                finalizers: Mutex::new(Finalizers::default()),
            }),
            builder: None,
        }
    }

    /// Resolves a `T`: the APP value, or this call's REQUEST value (built
    /// now if nobody asked before; concurrent askers wait for one build).
    /// Asked through the scope a REQUEST factory was given, for a value
    /// whose build waits (directly or through others) for that factory's
    /// own, it fails with [`ResolveError::Cycle`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, FromScope, Inject};
    /// use toolwright::{Requirement, ResolveError, Scope};
    ///
    /// struct Session { user: String }
    ///
    /// /// The signed-in user, read from the call's session.
    /// struct User(String);
    ///
    /// impl FromScope for User {
    ///     async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
    ///         let session = scope.resolve::<Session>().await?;
    ///         Ok(User(session.user.clone()))
    ///     }
    ///     fn requirements(out: &mut Vec<Requirement>) {
    ///         out.push(Requirement::of::<Session>());
    ///     }
    /// }
    ///
    /// /// Say who is signed in.
    /// #[tool(key = "session.whoami", effect = read, authorize = public)]
    /// async fn whoami(session: Inject<Session>, #[inject] user: User) -> bool {
    ///     session.user == user.0
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let opened = Arc::new(AtomicUsize::new(0));
    /// let counter = opened.clone();
    /// let container = Container::builder()
    ///     .request::<Session>(move |_: Scope| {
    ///         counter.fetch_add(1, Ordering::Relaxed);
    ///         async { Ok::<_, ResolveError>(Session { user: "ada".into() }) }
    ///     })
    ///     .build();
    /// let catalog = Catalog::builder().register::<WhoamiArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, container).unwrap();
    ///
    /// assert_eq!(executor.invoke("whoami", json!({}), &()).await.unwrap(), true);
    /// // Both parameters resolved the session; it was opened once.
    /// assert_eq!(opened.load(Ordering::Relaxed), 1);
    /// # }
    /// ```
    pub async fn resolve<T: ?Sized + Send + Sync + 'static>(&self) -> Result<Arc<T>, ResolveError> {
        let id = TypeId::of::<T>();
        let type_name = std::any::type_name::<T>();
        let container = &self.inner.container.inner;
        // Borrowed, not cloned: only the `Arc<T>` inside is.
        let erased = match container.sources.get(&id) {
            Some(Source::App(value)) => value,
            Some(Source::Request(provider)) => {
                let slot = provider.slot;
                // A provider's build asking: it waits from here on. A
                // handle kept past its build (which failed, or is over)
                // asks as any other caller does.
                let _waiting = match self.builder {
                    Some((waiter, build)) if self.inner.cells[waiter].is_building(build) => Some(
                        Waiting::start(&self.inner, waiter, slot)
                            .map_err(|path| ResolveError::Cycle { type_name, path })?,
                    ),
                    _ => None,
                };
                let cell = &self.inner.cells[slot];
                let read = |value: &Erased| downcast::<T>(value).clone();
                // The value, if it is built; otherwise this asker builds it.
                let build = match std::future::poll_fn(|cx| cell.poll_claim(cx, read)).await {
                    Claim::Built(value) => return Ok(value),
                    Claim::Build(build) => build,
                };
                let building = Building {
                    cell,
                    build,
                    done: false,
                };
                let scope = Scope {
                    inner: self.inner.clone(),
                    builder: Some((slot, build)),
                };
                return match (provider.factory)(scope).await {
                    Ok(value) => Ok(building.finish(value, read)),
                    // `building` lets the next asker try again.
                    Err(source) => Err(ResolveError::Failed { type_name, source }),
                };
            }
            None => return Err(ResolveError::Missing { type_name }),
        };
        Ok(downcast::<T>(erased).clone())
    }

    /// Registers a finalizer, run once when the call ends, with its outcome.
    ///
    /// Finalizers run in reverse order of registration. A finalizer that
    /// panics is reported through `tracing` and the others still run. If
    /// the caller drops the call, before or while its finalizers run, those
    /// not yet finished are handed to the tokio runtime and still run, each
    /// exactly once (the one that was running goes on from where it was).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, Inject, ResolveError, Scope};
    ///
    /// #[derive(Default)]
    /// struct Log(Mutex<Vec<&'static str>>);
    /// struct Connection;
    /// struct Transaction;
    ///
    /// /// Count the orders.
    /// #[tool(key = "orders.count", effect = read, authorize = public)]
    /// async fn count_orders(_tx: Inject<Transaction>) -> u64 { 0 }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let log = Arc::new(Log::default());
    /// let container = Container::builder()
    ///     .app(log.clone())
    ///     .request::<Connection>(|scope: Scope| async move {
    ///         let log = scope.resolve::<Log>().await?;
    ///         scope.on_close(move |_| async move { log.0.lock().unwrap().push("release") });
    ///         Ok::<_, ResolveError>(Connection)
    ///     })
    ///     .request::<Transaction>(|scope: Scope| async move {
    ///         let _connection = scope.resolve::<Connection>().await?;
    ///         let log = scope.resolve::<Log>().await?;
    ///         scope.on_close(move |outcome| async move {
    ///             log.0.lock().unwrap().push(if outcome.is_ok() { "commit" } else { "rollback" });
    ///         });
    ///         Ok::<_, ResolveError>(Transaction)
    ///     })
    ///     .build();
    /// let catalog = Catalog::builder().register::<CountOrdersArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, container).unwrap();
    /// executor.invoke("count_orders", json!({}), &()).await.unwrap();
    ///
    /// // The transaction ends before the connection it ran on is released.
    /// assert_eq!(*log.0.lock().unwrap(), ["commit", "release"]);
    /// # }
    /// ```
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
                Finalizing::new(vec![finalizer], outcome).detach();
            }
        }
    }

    /// Runs every finalizer with `outcome`, newest first.
    pub(crate) async fn close(&self, outcome: Outcome) {
        if let Some(finalizers) = self.take_finalizers(outcome) {
            Closing(Finalizing::new(finalizers, outcome)).await;
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

/// Runs finalizers newest first, each to its end, with the call's outcome.
struct Finalizing {
    /// Not yet started, oldest first (they run from the back).
    pending: Vec<Finalizer>,
    /// The one running, if any.
    running: Option<crate::executor::CatchUnwind<BoxFuture<'static, ()>>>,
    outcome: Outcome,
}

impl Finalizing {
    fn new(pending: Vec<Finalizer>, outcome: Outcome) -> Self {
        Finalizing {
            pending,
            running: None,
            outcome,
        }
    }

    fn finished(&self) -> bool {
        self.running.is_none() && self.pending.is_empty()
    }

    /// Hands what is left to the runtime, which runs it to the end.
    fn detach(self) {
        if !self.finished() {
            spawn_detached(self);
        }
    }
}

impl Future for Finalizing {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        loop {
            let running = match &mut self.running {
                Some(running) => running,
                None => match self.pending.pop() {
                    Some(finalizer) => {
                        let outcome = self.outcome;
                        self.running
                            .insert(crate::executor::CatchUnwind::new(finalizer(outcome)))
                    }
                    None => return Poll::Ready(()),
                },
            };
            let Poll::Ready(result) = std::pin::Pin::new(running).poll(cx) else {
                return Poll::Pending;
            };
            self.running = None;
            if let Err(message) = result {
                tracing::error!(%message, "a request finalizer panicked");
            }
        }
    }
}

/// [`Finalizing`] as a call's close awaits it. If the call's future is
/// dropped part-way, `Drop` hands the finalizer that was running and those
/// not yet started to the runtime, so each still runs exactly once. (What
/// the runtime holds is a plain `Finalizing`: should the runtime drop it,
/// shutting down, there is nowhere left to hand it.)
struct Closing(Finalizing);

impl Future for Closing {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

impl Drop for Closing {
    fn drop(&mut self) {
        if !self.0.finished() {
            spawn_detached(Finalizing {
                pending: std::mem::take(&mut self.0.pending),
                running: self.0.running.take(),
                outcome: self.0.outcome,
            });
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

/// A value as a container stores it, as the `Arc<T>` it was given or built.
fn downcast<T: ?Sized + 'static>(value: &Erased) -> &Arc<T> {
    value
        .downcast_ref::<Arc<T>>()
        .expect("values are stored under their own TypeId")
}

/// One REQUEST value of one call: built by its first asker, while any
/// other asker waits for that build. A build that fails, or is dropped
/// before it ends, leaves the cell empty for the next asker to try again.
///
/// A lock held only to read or change the state, never across an
/// `.await`: one call's tasks rarely contend for it, and it costs fewer
/// atomic operations than an async once-cell's semaphore.
#[derive(Default)]
struct Cell {
    state: Mutex<CellState>,
}

enum CellState {
    /// No value; `builds` builds of it have failed (or were dropped).
    Empty {
        builds: u32,
    },
    /// An asker is running build number `build` (from 1); `waiters` wait
    /// for it.
    Building {
        waiters: Vec<Waker>,
        build: u32,
    },
    Ready(Erased),
}

impl Default for CellState {
    fn default() -> Self {
        CellState::Empty { builds: 0 }
    }
}

/// What an asker of a [`Cell`] gets: the value, or the build to run.
enum Claim<R> {
    Built(R),
    /// The cell was empty; this asker runs the build with this number.
    Build(u32),
}

impl Cell {
    fn lock(&self) -> MutexGuard<'_, CellState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value, read with `read`, once it is built; or, when the cell
    /// was empty, the number of the build the caller is now to run.
    fn poll_claim<R>(
        &self,
        cx: &mut TaskContext<'_>,
        read: impl FnOnce(&Erased) -> R,
    ) -> Poll<Claim<R>> {
        let mut state = self.lock();
        match &mut *state {
            CellState::Ready(value) => Poll::Ready(Claim::Built(read(value))),
            CellState::Empty { builds } => {
                let build = builds.wrapping_add(1);
                *state = CellState::Building {
                    waiters: Vec::new(),
                    build,
                };
                Poll::Ready(Claim::Build(build))
            }
            CellState::Building { waiters, .. } => {
                if !waiters.iter().any(|waiter| waiter.will_wake(cx.waker())) {
                    waiters.push(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }

    /// Ends a build: `state` in the cell, and every waiter woken.
    fn settle(&self, state: CellState) {
        let previous = std::mem::replace(&mut *self.lock(), state);
        if let CellState::Building { waiters, .. } = previous {
            waiters.into_iter().for_each(Waker::wake);
        }
    }

    /// Whether build number `build` is running.
    fn is_building(&self, build: u32) -> bool {
        matches!(&*self.lock(), CellState::Building { build: running, .. } if *running == build)
    }
}

/// The build of a [`Cell`]'s value in progress. Dropped unfinished (the
/// build failed, or its caller was dropped), it empties the cell again.
struct Building<'a> {
    cell: &'a Cell,
    /// Its number (see [`CellState`]).
    build: u32,
    done: bool,
}

impl Building<'_> {
    fn finish<R>(mut self, value: Erased, read: impl FnOnce(&Erased) -> R) -> R {
        let read = read(&value);
        self.cell.settle(CellState::Ready(value));
        self.done = true;
        read
    }
}

impl Drop for Building<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.cell.settle(CellState::Empty { builds: self.build });
        }
    }
}

/// One build's wait for a value (or for its build), entered in the scope's
/// [`waits`](ScopeInner::waits) while it lasts.
struct Waiting<'a> {
    scope: &'a ScopeInner,
    wait: (usize, usize),
}

impl<'a> Waiting<'a> {
    /// The build of `waiter` starts to wait for the value of `awaited`;
    /// refused, with the types of the cycle, when that value's build
    /// already waits, directly or through others, for `waiter`'s.
    fn start(
        scope: &'a ScopeInner,
        waiter: usize,
        awaited: usize,
    ) -> Result<Self, Vec<&'static str>> {
        let mut waits = scope.waits.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(mut cycle) = path(&waits, awaited, waiter, &mut Vec::new()) {
            cycle.insert(0, waiter);
            let container = &scope.container;
            return Err(cycle
                .into_iter()
                .map(|slot| container.type_name(slot))
                .collect());
        }
        waits.push((waiter, awaited));
        Ok(Waiting {
            scope,
            wait: (waiter, awaited),
        })
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut waits = self
            .scope
            .waits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = waits.iter().position(|wait| *wait == self.wait) {
            waits.swap_remove(at);
        }
    }
}

/// The slots from `from` to `to` along `waits`, both ends included, if
/// `to` can be reached (`seen`: the slots already searched). A handful of
/// waits at most: a depth-first search.
fn path(
    waits: &[(usize, usize)],
    from: usize,
    to: usize,
    seen: &mut Vec<usize>,
) -> Option<Vec<usize>> {
    if from == to {
        return Some(vec![to]);
    }
    if seen.contains(&from) {
        return None;
    }
    seen.push(from);
    waits
        .iter()
        .filter(|(waiter, _)| *waiter == from)
        .find_map(|&(_, awaited)| {
            let mut rest = path(waits, awaited, to, seen)?;
            rest.insert(0, from);
            Some(rest)
        })
}

/// Closes a scope when the pipeline is done with it, or, if the caller
/// dropped the call first, hands the finalizers to the runtime with
/// [`Outcome::Cancelled`].
pub(crate) struct ScopeGuard {
    scope: Scope,
    /// Whether [`close`](Self::close) took the finalizers, so that `Drop`
    /// need not lock them again to find out.
    closed: AtomicBool,
}

impl ScopeGuard {
    pub(crate) fn open(container: &Container) -> Self {
        ScopeGuard {
            scope: Scope::new(container.clone()),
            closed: AtomicBool::new(false),
        }
    }

    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Runs the finalizers with `outcome`. By reference: the call's future
    /// still holds the guard, whose scope the (dropped) body borrowed.
    pub(crate) async fn close(&self, outcome: Outcome) {
        self.closed.store(true, Ordering::Relaxed);
        self.scope.close(outcome).await;
    }
}

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        if !*self.closed.get_mut()
            && let Some(finalizers) = self.scope.take_finalizers(Outcome::Cancelled)
        {
            Finalizing::new(finalizers, Outcome::Cancelled).detach();
        }
    }
}

/// A value injected from the call's scope: an APP value or a REQUEST value.
///
/// Parameters of type `Inject<T>` are never inputs: they do not appear in
/// the tool's schema and a caller cannot supply them.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolwright::{tool, Catalog, Container, Executor, Inject};
///
/// trait Greeter: Send + Sync { fn greet(&self, name: &str) -> String; }
///
/// struct English;
/// impl Greeter for English {
///     fn greet(&self, name: &str) -> String { format!("Hello, {name}!") }
/// }
///
/// /// Greet someone.
/// #[tool(key = "demo.greet", effect = read, authorize = public)]
/// async fn greet(name: String, greeter: Inject<dyn Greeter>) -> String {
///     greeter.greet(&name)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<GreetArgs>().build().unwrap();
/// // `greeter` is not an input.
/// let schema = catalog.get("greet").unwrap().input_schema();
/// assert_eq!(schema["required"], json!(["name"]));
/// assert!(schema["properties"].get("greeter").is_none());
///
/// let container = Container::builder().app::<dyn Greeter>(Arc::new(English)).build();
/// let executor = Executor::new(catalog, container).unwrap();
/// let hello = executor.invoke("greet", json!({"name": "Ada"}), &()).await.unwrap();
/// assert_eq!(hello, "Hello, Ada!");
/// # }
/// ```
pub struct Inject<T: ?Sized>(Arc<T>);

impl<T: ?Sized> Inject<T> {
    /// Wraps a shared value (useful when calling a tool fn directly in tests).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolwright::{tool, Inject};
    ///
    /// struct Prices;
    /// impl Prices {
    ///     fn price(&self, sku: &str) -> Option<u64> { (sku == "A-1").then_some(250) }
    /// }
    ///
    /// /// Look up a price, in cents.
    /// #[tool(key = "pricing.get", effect = read, authorize = public)]
    /// async fn get_price(sku: String, prices: Inject<Prices>) -> Option<u64> {
    ///     prices.price(&sku)
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // The fn is still an ordinary fn: test it without an executor.
    /// let price = get_price("A-1".into(), Inject::new(Arc::new(Prices))).await;
    /// assert_eq!(price, Some(250));
    /// # }
    /// ```
    pub fn new(value: Arc<T>) -> Self {
        Inject(value)
    }

    /// The shared handle, to keep the value past the call (in a spawned
    /// task, say).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use toolwright::Inject;
    ///
    /// #[derive(Default)]
    /// struct SearchIndex { rebuilds: AtomicU32 }
    ///
    /// let index = Arc::new(SearchIndex::default());
    /// let injected = Inject::new(index.clone());
    ///
    /// let handle: Arc<SearchIndex> = injected.into_inner();
    /// std::thread::spawn(move || handle.rebuilds.fetch_add(1, Ordering::Relaxed))
    ///     .join()
    ///     .unwrap();
    /// assert_eq!(index.rebuilds.load(Ordering::Relaxed), 1);
    /// ```
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
/// use serde_json::json;
/// use toolwright::{tool, Catalog, Container, Executor};
/// use toolwright::{FromScope, Requirement, ResolveError, Scope};
///
/// struct Db { name: &'static str }
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
///
/// /// Name the database this tool reads.
/// #[tool(key = "db.name", effect = read, authorize = public)]
/// async fn db_name(#[inject] db: ReadOnly) -> String {
///     db.0.name.to_owned()
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<DbNameArgs>().build().unwrap();
/// let container = Container::builder().app(Arc::new(Db { name: "shop" })).build();
/// let executor = Executor::new(catalog, container).unwrap();
/// assert_eq!(executor.invoke("db_name", json!({}), &()).await.unwrap(), "shop");
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be injected",
    label = "not resolvable from the call's scope",
    note = "inject `toolwright::Inject<T>` with `T: Send + Sync + 'static` provided by the container, or implement `toolwright::FromScope` for `{Self}`"
)]
pub trait FromScope: Sized + Send {
    /// Resolves the value for one call.
    ///
    /// A value may be built from several others in the scope:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, FromScope, ResolveError, Scope};
    ///
    /// struct Pool;
    /// struct Tenant(u64);
    ///
    /// /// The orders of the caller's tenant.
    /// struct Orders { _pool: Arc<Pool>, tenant: Arc<Tenant> }
    ///
    /// impl FromScope for Orders {
    ///     async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
    ///         Ok(Orders { _pool: scope.resolve().await?, tenant: scope.resolve().await? })
    ///     }
    /// }
    ///
    /// /// Which tenant's orders this call sees.
    /// #[tool(key = "orders.tenant", effect = read, authorize = public)]
    /// async fn orders_tenant(#[inject] orders: Orders) -> u64 {
    ///     orders.tenant.0
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let container = Container::builder()
    ///     .app(Arc::new(Pool))
    ///     .request::<Tenant>(|_: Scope| async { Ok::<_, ResolveError>(Tenant(7)) })
    ///     .build();
    /// let catalog = Catalog::builder().register::<OrdersTenantArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, container).unwrap();
    /// assert_eq!(executor.invoke("orders_tenant", json!({}), &()).await.unwrap(), 7);
    /// # }
    /// ```
    fn from_scope(scope: &Scope) -> impl Future<Output = Result<Self, ResolveError>> + Send;

    /// The types this resolves, so a missing provider is reported when the
    /// executor is built instead of at the first call.
    ///
    /// The default lists nothing, which suits a type whose dependencies are
    /// optional; for any other, a missing provider then shows only at a call,
    /// as [`CallError::DependencyMissing`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolwright::{tool, Catalog, Container, Executor, ExecutorProblem};
    /// use toolwright::{FromScope, Requirement, ResolveError, Scope};
    ///
    /// struct Db;
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
    ///
    /// /// Count the products.
    /// #[tool(key = "products.count", effect = read, authorize = public)]
    /// async fn count_products(#[inject] _db: ReadOnly) -> u64 { 0 }
    ///
    /// let catalog = Catalog::builder().register::<CountProductsArgs>().build().unwrap();
    /// // Forgot to provide the database: caught at start-up, not at the first call.
    /// let error = Executor::new(catalog.clone(), Container::default()).unwrap_err();
    /// assert!(matches!(
    ///     error.problems[..],
    ///     [ExecutorProblem::MissingProvider { tool: "products.count", .. }]
    /// ));
    ///
    /// let container = Container::builder().app(Arc::new(Db)).build();
    /// assert!(Executor::new(catalog, container).is_ok());
    /// ```
    ///
    /// [`CallError::DependencyMissing`]: crate::CallError::DependencyMissing
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
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Context, Executor};
///
/// #[derive(Clone)]
/// struct Actor { name: String }
///
/// /// Say who is calling.
/// #[tool(key = "demo.whoami", effect = read, authorize = public)]
/// async fn whoami(actor: Context<Actor>) -> String {
///     actor.0.name
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<WhoamiArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// let ada = Actor { name: "Ada".into() };
/// assert_eq!(executor.invoke("whoami", json!({}), &ada).await.unwrap(), "Ada");
///
/// // The actor is not an input: a model cannot claim to be someone else.
/// let spoofed = executor.invoke("whoami", json!({"actor": {"name": "Eve"}}), &ada).await;
/// assert!(matches!(spoofed, Err(CallError::InvalidArguments { .. })));
///
/// // A context of another type is refused.
/// let wrong = executor.invoke("whoami", json!({}), &"Ada").await;
/// assert!(matches!(wrong, Err(CallError::ContextMismatch { .. })));
/// # }
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

#[cfg(test)]
mod tests {
    use super::*;

    struct Replaced;
    struct Kept;

    #[test]
    fn a_provider_replaced_by_an_app_value_has_no_slot() {
        let container = Container::builder()
            .request::<Replaced>(|_: Scope| async { Ok::<_, ResolveError>(Replaced) })
            .app(Arc::new(Replaced))
            .request::<Kept>(|_: Scope| async { Ok::<_, ResolveError>(Kept) })
            .build();
        // One cell per call, for `Kept`.
        assert_eq!(container.inner.slots, 1);
        assert_eq!(container.type_name(0), std::any::type_name::<Kept>());
    }
}
