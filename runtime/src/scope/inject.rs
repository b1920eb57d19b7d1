//! Injection: the parameter types a tool receives from its call's scope.

use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::sync::Arc;

use super::{Requirement, ResolveError, Scope};

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
/// use toolwright::{scope::{FromScope, Requirement, ResolveError, Scope}};
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
    note = "inject `toolwright::Inject<T>` with `T: Send + Sync + 'static` provided by the container, or implement `toolwright::scope::FromScope` for `{Self}`"
)]
pub trait FromScope: Sized + Send {
    /// Resolves the value for one call.
    ///
    /// A value may be built from several others in the scope:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, scope::{FromScope, ResolveError, Scope}};
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
    /// use toolwright::{tool, Catalog, Container, Executor, executor::ExecutorProblem};
    /// use toolwright::{scope::{FromScope, Requirement, ResolveError, Scope}};
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
    ///     &error.problems[..],
    ///     [ExecutorProblem::MissingProvider { tool, .. }] if tool == "products.count"
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
