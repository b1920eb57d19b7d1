//! The container: APP values and REQUEST providers, built once at start-up.

use std::any::{Any, TypeId};
use std::collections::hash_map::Entry;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use super::request::Scope;
use crate::error::BoxError;
use crate::util::BoxFuture;
use crate::util::hash::KeyMap;

/// A value as the container stores it: the `Arc<T>` it was given or built.
pub(crate) type Erased = Box<dyn Any + Send + Sync>;
/// A REQUEST provider's build, its value type-erased.
type ErasedBuild = BoxFuture<'static, Result<Erased, BoxError>>;
type Factory = Box<dyn Fn(Scope) -> ErasedBuild + Send + Sync>;

/// The providers every call draws from: APP values and REQUEST factories.
///
/// Cheap to clone.
///
/// ```
/// use std::sync::Arc;
/// use toolwright::{Container, scope::Scope};
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
///         Ok::<_, toolwright::scope::ResolveError>(Tx { id: clock.now() })
///     })
///     .build();
/// assert!(container.provides::<dyn Clock>() && container.provides::<Tx>());
/// ```
#[derive(Clone, Default)]
pub struct Container {
    pub(crate) inner: Arc<ContainerInner>,
}

#[derive(Default)]
pub(crate) struct ContainerInner {
    /// What the container provides for each type: one map, so that
    /// resolving a value looks its type up once.
    pub(crate) sources: KeyMap<TypeId, Source>,
    /// How many REQUEST providers there are, each with its slot
    /// (`Provider::slot`), numbered when the container is built.
    pub(crate) slots: usize,
}

pub(crate) enum Source {
    App(Erased),
    Request(Provider),
}

pub(crate) struct Provider {
    pub(crate) type_name: &'static str,
    pub(crate) factory: Factory,
    /// Where a scope keeps this provider's value: the providers are
    /// numbered `0..slots`.
    pub(crate) slot: usize,
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
    /// use toolwright::{Container, scope::Scope};
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
    pub(crate) fn type_name(&self, slot: usize) -> &'static str {
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
/// use toolwright::{tool, Catalog, Container, Executor, Inject, scope::Scope};
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
/// use toolwright::{tool, Catalog, Container, Executor, Inject, scope::{ResolveError, Scope}};
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
    /// use toolwright::{tool, Catalog, Container, Executor, Inject, scope::{RequestFactory, Scope}};
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
    /// [`ResolveError::Cycle`](crate::scope::ResolveError::Cycle) instead of waiting for itself.
    ///
    /// A factory that fails fails the call with [`CallError::Dependency`],
    /// which keeps the factory's error:
    ///
    /// ```
    /// use std::error::Error as _;
    /// use serde_json::json;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, Inject, scope::Scope};
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
    /// assert!(matches!(&error, CallError::Dependency { key, .. } if key == "orders.count"));
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

/// A value as a container stores it, as the `Arc<T>` it was given or built.
pub(crate) fn downcast<T: ?Sized + 'static>(value: &Erased) -> &Arc<T> {
    value
        .downcast_ref::<Arc<T>>()
        .expect("values are stored under their own TypeId")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::ResolveError;

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
