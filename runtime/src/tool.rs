//! The [`Tool`] trait the `#[tool]` attribute implements, and the metadata
//! every tool carries.

use std::any::TypeId;
use std::fmt;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::__private::{Answered, HookCall, Now, Waits, answered};
use crate::error::{BoxError, CallError};
use crate::invocation::Invocation;
use crate::scope::{Requirement, Scope};

/// A boxed, sendable future, the shape of every erased step of the pipeline.
///
/// ```
/// use toolwright::BoxFuture;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // Futures of different types, in one list.
/// let checks: Vec<BoxFuture<'static, bool>> = vec![
///     Box::pin(async { true }),
///     Box::pin(async { "ok".len() == 2 }),
/// ];
/// for check in checks {
///     // `Send` and `'static`, so it can be spawned.
///     assert!(tokio::spawn(check).await.unwrap());
/// }
/// # }
/// ```
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// What a tool declares it does to the world.
///
/// `Write` and `Destructive` tools need an `approve` hook: the executor never
/// runs them unless that hook approved the exact arguments.
///
/// ```
/// use toolwright::Effect;
/// assert!(!Effect::Read.requires_approval());
/// assert!(Effect::Destructive.requires_approval());
/// assert_eq!(Effect::Write.to_string(), "write");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Effect {
    /// Reads state and changes nothing.
    Read,
    /// Changes state in a way that can be undone or repeated.
    Write,
    /// Changes state in a way that cannot be undone (deletes, payments, sends).
    Destructive,
}

impl Effect {
    /// Whether the executor asks the tool's `approve` hook before running it.
    ///
    /// ```
    /// use toolwright::Effect;
    ///
    /// let gated: Vec<_> = [Effect::Read, Effect::Write, Effect::Destructive]
    ///     .into_iter()
    ///     .filter(|effect| effect.requires_approval())
    ///     .collect();
    /// assert_eq!(gated, [Effect::Write, Effect::Destructive]);
    /// ```
    pub const fn requires_approval(self) -> bool {
        !matches!(self, Effect::Read)
    }

    /// The lowercase word used in `#[tool(effect = ...)]`, in `Display`,
    /// and in serialized descriptors.
    ///
    /// ```
    /// use toolwright::Effect;
    ///
    /// assert_eq!(Effect::Destructive.as_str(), "destructive");
    /// assert_eq!(serde_json::to_value(Effect::Write).unwrap(), Effect::Write.as_str());
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Destructive => "destructive",
        }
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Where a tool was declared: named by catalog conflicts ([`crate::Conflict`])
/// and executor build problems ([`crate::ExecutorProblem`]), and part of a
/// tool's descriptor ([`crate::ToolEntry::location`]).
///
/// ```
/// use toolwright::Location;
/// let here = Location { file: "src/tools.rs", line: 12, module_path: "shop::tools" };
/// assert_eq!(here.to_string(), "src/tools.rs:12 (shop::tools)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Location {
    /// `file!()` of the declaration.
    pub file: &'static str,
    /// `line!()` of the declaration.
    pub line: u32,
    /// `module_path!()` of the declaration.
    pub module_path: &'static str,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} ({})", self.file, self.line, self.module_path)
    }
}

/// A hook's answer: run, refuse, or wait for a person.
///
/// `async` hooks may return `bool`, a `Verdict`, or a `Result` of either
/// (see [`IntoVerdict`]); a hook that never waits may be a plain `fn`
/// returning a `Verdict`. `Pending` only makes sense from an `approve`
/// hook: the call then fails with [`CallError::ApprovalRequired`], carrying
/// what a person needs to approve. An `authorize` hook that answers
/// `Pending` denies.
///
/// ```
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Executor, Invocation, Verdict};
///
/// /// Refund an order.
/// #[tool(key = "orders.refund", effect = write, authorize = public, approve = by_amount)]
/// async fn refund(order_id: u64, cents: u64) -> bool { true }
///
/// async fn by_amount(_: &(), call: &Invocation<'_, RefundArgs>) -> Verdict {
///     match call.cents {
///         0..=5_000 => Verdict::Allow,
///         5_001..=100_000 => Verdict::Pending,
///         _ => Verdict::Deny,
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<RefundArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
///
/// let small = executor.invoke("refund", json!({"order_id": 1, "cents": 1_000}), &()).await;
/// assert!(small.is_ok());
/// let large = executor.invoke("refund", json!({"order_id": 1, "cents": 20_000}), &()).await;
/// assert!(matches!(large, Err(CallError::ApprovalRequired(_))));
/// let huge = executor.invoke("refund", json!({"order_id": 1, "cents": 500_000}), &()).await;
/// assert!(matches!(huge, Err(CallError::NotApproved { .. })));
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Verdict {
    /// Go on.
    Allow,
    /// Refuse; nothing runs.
    Deny,
    /// Not decided yet: a person must approve this exact call.
    Pending,
}

/// `true` allows, `false` denies: the answer of a plain `fn` hook that
/// decides yes or no.
///
/// ```
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Executor, Invocation, Verdict};
///
/// struct Actor { admin: bool }
///
/// /// Delete a report.
/// #[tool(key = "reports.delete", effect = destructive, authorize = admins, approve = admins)]
/// async fn delete_report(id: u64) -> u64 { id }
///
/// // Never waits, so a plain `fn`: asked in the call's first poll.
/// fn admins<A>(actor: &Actor, _: &Invocation<'_, A>) -> Verdict {
///     Verdict::from(actor.admin)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<DeleteReportArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// let args = json!({"id": 7});
/// let admin = executor.invoke("delete_report", args.clone(), &Actor { admin: true }).await;
/// assert_eq!(admin.unwrap(), json!(7));
/// let other = executor.invoke("delete_report", args, &Actor { admin: false }).await;
/// assert!(matches!(other, Err(CallError::Denied { .. })));
/// # }
/// ```
impl From<bool> for Verdict {
    fn from(allow: bool) -> Self {
        if allow { Verdict::Allow } else { Verdict::Deny }
    }
}

/// What an `async` hook may return (a plain `fn` hook returns a [`Verdict`]):
/// `bool`, [`Verdict`], or `Result<_, E>` of either
/// with `E: Into<Box<dyn Error + Send + Sync>>`.
///
/// ```
/// use toolwright::{IntoVerdict, Verdict};
/// assert_eq!(true.into_verdict().unwrap(), Verdict::Allow);
/// let failed: Result<bool, std::io::Error> = Err(std::io::Error::other("policy store down"));
/// assert!(failed.into_verdict().is_err());
/// ```
#[diagnostic::on_unimplemented(
    message = "a toolwright hook cannot return `{Self}`",
    label = "this hook's return type",
    note = "an `authorize` or `approve` hook returns `bool`, `toolwright::Verdict`, or `Result<_, E>` of either"
)]
pub trait IntoVerdict {
    /// Converts the hook's answer; an `Err` becomes [`CallError::Hook`].
    ///
    /// ```
    /// use toolwright::{IntoVerdict, Verdict};
    ///
    /// assert_eq!(false.into_verdict().unwrap(), Verdict::Deny);
    /// assert_eq!(Verdict::Pending.into_verdict().unwrap(), Verdict::Pending);
    /// let lookup: Result<Verdict, std::io::Error> = Err(std::io::Error::other("store down"));
    /// assert_eq!(lookup.into_verdict().unwrap_err().to_string(), "store down");
    /// ```
    fn into_verdict(self) -> Result<Verdict, BoxError>;
}

impl IntoVerdict for bool {
    fn into_verdict(self) -> Result<Verdict, BoxError> {
        Ok(Verdict::from(self))
    }
}

impl IntoVerdict for Verdict {
    fn into_verdict(self) -> Result<Verdict, BoxError> {
        Ok(self)
    }
}

impl<V: IntoVerdict, E: Into<BoxError>> IntoVerdict for Result<V, E> {
    fn into_verdict(self) -> Result<Verdict, BoxError> {
        self.map_err(Into::into)?.into_verdict()
    }
}

/// A tool: the argument struct generated by `#[tool]` implements this.
///
/// You do not implement it by hand; the attribute does, and the associated
/// items let typed code name a tool without strings:
///
/// ```
/// use toolwright::{tool, Effect, Tool};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// assert_eq!(AddArgs::KEY, "math.add");
/// assert_eq!(AddArgs::NAME, "add");
/// assert_eq!(AddArgs::EFFECT, Effect::Read);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a toolwright tool",
    note = "tools are the `...Args` structs that `#[toolwright::tool]` generates for an `async fn`"
)]
pub trait Tool: Serialize + DeserializeOwned + Send + Sync + Sized + 'static {
    /// The stable capability key, such as `"products.get"`.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Tool};
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// let catalog = Catalog::builder().register::<GetProductArgs>().build().unwrap();
    /// assert_eq!(GetProductArgs::KEY, "products.get");
    /// assert!(catalog.get_by_key(GetProductArgs::KEY).is_some());
    /// ```
    const KEY: &'static str;
    /// The caller-facing name, such as `"get_product"`.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, Tool};
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<GetProductArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// // No string to mistype.
    /// let id = executor.invoke(GetProductArgs::NAME, json!({"id": 3}), &()).await.unwrap();
    /// assert_eq!(id, 3);
    /// # }
    /// ```
    const NAME: &'static str;
    /// A short human title, if declared.
    ///
    /// ```
    /// use toolwright::{tool, Tool};
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", title = "Product details", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// assert_eq!(GetProductArgs::TITLE, Some("Product details"));
    /// ```
    const TITLE: Option<&'static str>;
    /// The description shown to models (the fn's doc comment by default).
    ///
    /// ```
    /// use toolwright::{tool, Tool};
    ///
    /// /// Look up a product by its identifier.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// assert_eq!(GetProductArgs::DESCRIPTION, "Look up a product by its identifier.");
    /// ```
    const DESCRIPTION: &'static str;
    /// The declared effect.
    ///
    /// ```
    /// use toolwright::{tool, Effect, Invocation, Tool};
    ///
    /// /// Delete a product.
    /// #[tool(key = "products.delete", effect = destructive, authorize = public, approve = ask)]
    /// async fn delete_product(id: u64) -> bool { true }
    ///
    /// async fn ask(_: &(), _: &Invocation<'_, DeleteProductArgs>) -> bool { false }
    ///
    /// // Known at compile time.
    /// const GATED: bool = DeleteProductArgs::EFFECT.requires_approval();
    /// assert!(GATED);
    /// assert_eq!(DeleteProductArgs::EFFECT, Effect::Destructive);
    /// ```
    const EFFECT: Effect;
    /// Whether repeating the call with the same arguments has no further
    /// effect (`idempotent = ...`; by default `true` for `read` tools and
    /// `false` for the others).
    ///
    /// ```
    /// use toolwright::{tool, Invocation, Tool};
    ///
    /// /// Set a product's price.
    /// #[tool(key = "products.set_price", effect = write, idempotent, authorize = public,
    ///        approve = ask)]
    /// async fn set_price(id: u64, cents: u64) -> bool { true }
    ///
    /// /// Add stock to a product.
    /// #[tool(key = "products.restock", effect = write, authorize = public, approve = ask)]
    /// async fn restock(id: u64, quantity: u64) -> bool { true }
    ///
    /// async fn ask<A>(_: &(), _: &Invocation<'_, A>) -> bool { false }
    ///
    /// assert!(SetPriceArgs::IDEMPOTENT);
    /// assert!(!RestockArgs::IDEMPOTENT);
    /// ```
    const IDEMPOTENT: bool;
    /// Whether the tool reaches outside the application's own systems
    /// (`open_world`: the web, e-mail, third-party APIs).
    ///
    /// ```
    /// use toolwright::{tool, Tool};
    ///
    /// /// Fetch a web page.
    /// #[tool(key = "web.fetch", effect = read, open_world, authorize = public)]
    /// async fn fetch_page(url: String) -> String { url }
    ///
    /// assert!(FetchPageArgs::OPEN_WORLD);
    /// ```
    const OPEN_WORLD: bool;
    /// The declared timeout, if any.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::{tool, Tool};
    ///
    /// /// Fetch a web page.
    /// #[tool(key = "web.fetch", effect = read, timeout = "500ms", authorize = public)]
    /// async fn fetch_page(url: String) -> String { url }
    ///
    /// assert_eq!(FetchPageArgs::TIMEOUT, Some(Duration::from_millis(500)));
    /// ```
    const TIMEOUT: Option<Duration>;
    /// Where the tool was declared.
    ///
    /// ```
    /// use toolwright::{tool, Tool};
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// assert_eq!(GetProductArgs::LOCATION.module_path, module_path!());
    /// ```
    const LOCATION: Location;
    /// Whether the tool has injected parameters (and so needs a scope).
    #[doc(hidden)]
    const INJECTS: bool;
    /// Whether the tool is open to every caller (`authorize = public`).
    #[doc(hidden)]
    const PUBLIC: bool;
    /// Whether the fn's body may wait (`#[tool]` writes `false` for a body
    /// with no `.await` and no macro that could hide one, which finishes
    /// the first time it is polled).
    #[doc(hidden)]
    const AWAITS: bool = true;

    /// The successful result of the tool: the fn's return type, or `T` when
    /// it returns `Result<T, E>`.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Container, Executor, Tool};
    ///
    /// /// Parse a whole number.
    /// #[tool(key = "math.parse", effect = read, authorize = public)]
    /// async fn parse(text: String) -> Result<i64, std::num::ParseIntError> {
    ///     text.trim().parse()
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<ParseArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let n: <ParseArgs as Tool>::Output = executor
    ///     .call(ParseArgs { text: " 42 ".into() }, &())
    ///     .await
    ///     .unwrap();
    /// assert_eq!(n, 42_i64);
    /// # }
    /// ```
    type Output: Serialize + Send + 'static;

    #[doc(hidden)]
    fn __input_schema() -> serde_json::Value;

    #[doc(hidden)]
    fn __output_schema() -> Option<serde_json::Value>;

    // The three below have defaults so that `#[tool]` writes them only for
    // a tool that has injected parameters or the hook: one generic body is
    // type-checked once, instead of a copy in every tool.

    #[doc(hidden)]
    fn __requirements(out: &mut Vec<Requirement>) {
        let _ = out;
    }

    #[doc(hidden)]
    fn __authorize<'a>(
        ctx: ErasedContext<'a>,
        call: &'a Invocation<'a, Self>,
    ) -> HookCall<impl Send + 'a, impl Waits> {
        let _ = (ctx, call);
        undeclared_hook()
    }

    #[doc(hidden)]
    fn __approve<'a>(
        ctx: ErasedContext<'a>,
        call: &'a Invocation<'a, Self>,
    ) -> HookCall<impl Send + 'a, impl Waits> {
        let _ = (ctx, call);
        undeclared_hook()
    }

    #[doc(hidden)]
    fn __run<'a>(
        self,
        ctx: ErasedContext<'a>,
        scope: Option<&'a Scope>,
    ) -> impl std::future::Future<Output = Result<Self::Output, CallError>> + Send + 'a;
}

/// The answer of a hook a tool does not declare. The pipeline never asks
/// one (it skips `authorize` for a public tool and `approve` for a `read`
/// one); should it ever, the answer refuses.
fn undeclared_hook() -> HookCall<Answered, Now> {
    answered(Ok(Verdict::Deny))
}

/// The caller's context, type-erased so one catalog serves every context type.
///
/// One fat pointer: the type's name, for the mismatch error, is behind the
/// same vtable as the downcast, so that every future that carries a context
/// carries 16 bytes, not 32.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct ErasedContext<'a> {
    value: &'a dyn ContextValue,
}

/// A context value: `Any`, plus its type's name.
trait ContextValue: std::any::Any + Send + Sync {
    fn type_name(&self) -> &'static str;
}

impl<C: std::any::Any + Send + Sync> ContextValue for C {
    fn type_name(&self) -> &'static str {
        std::any::type_name::<C>()
    }
}

impl<'a> ErasedContext<'a> {
    pub(crate) fn new<C: std::any::Any + Send + Sync>(value: &'a C) -> Self {
        ErasedContext { value }
    }

    /// The context as `C`, or the error that names both types.
    pub fn downcast<C: std::any::Any>(self, tool: &'static str) -> Result<&'a C, CallError> {
        let value: &'a dyn std::any::Any = self.value;
        value
            .downcast_ref::<C>()
            .ok_or_else(|| CallError::ContextMismatch {
                tool,
                expected: std::any::type_name::<C>(),
                found: self.value.type_name(),
            })
    }
}

/// A registration of one tool, collected at link time or added by hand.
///
/// `#[tool]` submits one for every tool; [`crate::CatalogBuilder::register`]
/// builds one from a tool type when link-time collection is not wanted.
///
/// ```
/// use toolwright::{tool, Catalog, CatalogBuilder, Registration};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// /// Negate a number.
/// #[tool(key = "math.negate", effect = read, authorize = public)]
/// async fn negate(a: i64) -> i64 { -a }
///
/// // A tool crate can list its tools for platforms without link-time collection.
/// fn math_tools() -> Vec<Registration> {
///     vec![Registration::of::<AddArgs>(), Registration::of::<NegateArgs>()]
/// }
///
/// let catalog = math_tools()
///     .into_iter()
///     .fold(Catalog::builder(), CatalogBuilder::add_registration)
///     .build()
///     .unwrap();
/// assert_eq!(catalog.len(), 2);
/// ```
#[derive(Clone, Copy)]
pub struct Registration {
    pub(crate) key: &'static str,
    pub(crate) name: &'static str,
    pub(crate) title: Option<&'static str>,
    pub(crate) description: &'static str,
    pub(crate) effect: Effect,
    pub(crate) idempotent: bool,
    pub(crate) open_world: bool,
    pub(crate) timeout: Option<Duration>,
    pub(crate) location: Location,
    pub(crate) type_id: fn() -> TypeId,
    pub(crate) input_schema: fn() -> serde_json::Value,
    pub(crate) output_schema: fn() -> Option<serde_json::Value>,
    pub(crate) requirements: fn(&mut Vec<Requirement>),
    pub(crate) public: bool,
    pub(crate) injects: bool,
    pub(crate) prepare: crate::executor::Prepare,
}

impl Registration {
    /// The registration of tool `T`.
    ///
    /// ```
    /// use toolwright::{tool, Registration};
    ///
    /// /// Echo a word.
    /// #[tool(key = "demo.echo", effect = read, authorize = public)]
    /// async fn echo(word: String) -> String { word }
    ///
    /// let registration = Registration::of::<EchoArgs>();
    /// assert_eq!(registration.name(), "echo");
    /// ```
    pub const fn of<T: Tool>() -> Self {
        Registration {
            key: T::KEY,
            name: T::NAME,
            title: T::TITLE,
            description: T::DESCRIPTION,
            effect: T::EFFECT,
            idempotent: T::IDEMPOTENT,
            open_world: T::OPEN_WORLD,
            timeout: T::TIMEOUT,
            location: T::LOCATION,
            type_id: TypeId::of::<T>,
            input_schema: T::__input_schema,
            output_schema: T::__output_schema,
            requirements: T::__requirements,
            public: T::PUBLIC,
            injects: T::INJECTS,
            prepare: crate::executor::Prepare::of::<T>(),
        }
    }

    /// The tool's key.
    ///
    /// ```
    /// use toolwright::{tool, Registration};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// assert_eq!(Registration::of::<AddArgs>().key(), "math.add");
    /// ```
    pub const fn key(&self) -> &'static str {
        self.key
    }

    /// The tool's caller-facing name.
    ///
    /// ```
    /// use toolwright::{tool, Registration};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", name = "sum", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// assert_eq!(Registration::of::<AddArgs>().name(), "sum");
    /// ```
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Where the tool was declared.
    ///
    /// ```
    /// use toolwright::{tool, Registration};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registration = Registration::of::<AddArgs>();
    /// assert_eq!(registration.location().module_path, module_path!());
    /// ```
    pub const fn location(&self) -> Location {
        self.location
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("key", &self.key)
            .field("name", &self.name)
            .field("effect", &self.effect)
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

inventory::collect!(Registration);
