//! Typed `async fn`s as function tools for language models and MCP clients.
//!
//! Annotate an ordinary `async fn` with [`#[tool]`](macro@tool): the
//! attribute generates the input struct, its JSON Schema and a link-time
//! registration. [`Catalog::discover`] collects the registrations at
//! start-up and [`Executor`] runs every call through one pipeline: validate
//! the arguments against the advertised schema, authorize, approve the exact
//! arguments of any write, open a per-call dependency scope, run the body,
//! close the scope, return the result.
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolwright::{tool, Catalog, Container, Executor, Inject, Invocation};
//!
//! struct Actor { tenant: u64 }
//!
//! trait Prices: Send + Sync { fn price(&self, sku: &str) -> Option<u64>; }
//! struct Fixed;
//! impl Prices for Fixed { fn price(&self, _: &str) -> Option<u64> { Some(250) } }
//!
//! /// Look up the price of a product, in cents.
//! #[tool(key = "pricing.get", effect = read, authorize = same_tenant)]
//! async fn get_price(
//!     /// The product's stock-keeping unit.
//!     sku: String,
//!     tenant: u64,
//!     prices: Inject<dyn Prices>,
//! ) -> Option<u64> {
//!     prices.price(&sku)
//! }
//!
//! async fn same_tenant(actor: &Actor, call: &Invocation<'_, GetPriceArgs>) -> bool {
//!     call.tenant == actor.tenant
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let catalog = Catalog::builder().register::<GetPriceArgs>().build().unwrap();
//! let container = Container::builder().app::<dyn Prices>(Arc::new(Fixed)).build();
//! let executor = Executor::new(catalog, container).unwrap();
//! let price = executor
//!     .invoke("get_price", json!({"sku": "A-1", "tenant": 7}), &Actor { tenant: 7 })
//!     .await
//!     .unwrap();
//! assert_eq!(price, json!(250));
//! # }
//! ```
//!
//! # Linking
//!
//! Registrations are collected at link time with `inventory`. A crate of
//! tools that nothing in the final binary references is not linked, so its
//! tools are missing from [`Catalog::discover`]. Reference such a crate
//! with `use my_tools as _;`.
#![deny(missing_docs)]

mod args;
mod catalog;
mod error;
mod executor;
mod hash;
mod invocation;
mod json;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "providers")]
pub mod providers;
mod schema;
mod scope;
mod tool;

pub use catalog::{Catalog, CatalogBuilder, CatalogError, Conflict, ToolEntry};
pub use error::{BoxError, CallError, HookKind, Violation, Violations};
pub use executor::{Executor, ExecutorBuilder, ExecutorError, ExecutorProblem};
pub use invocation::{ApprovalRequest, Digest, Invocation, ParseDigestError};
pub use scope::{
    Container, ContainerBuilder, Context, FromScope, Inject, Outcome, RequestFactory, Requirement,
    ResolveError, Scope,
};
pub use tool::{BoxFuture, Effect, IntoVerdict, Location, Registration, Tool, Verdict};

/// Turns an `async fn` into a tool.
///
/// ```
/// use toolwright::{tool, Invocation};
///
/// # struct Actor;
/// /// Read a product by its identifier.
/// #[tool(key = "products.get", name = "get_product", effect = read, authorize = can_read)]
/// async fn get_product(
///     /// The product's identifier.
///     product_id: u64,
/// ) -> String {
///     format!("product {product_id}")
/// }
///
/// async fn can_read(_: &Actor, _: &Invocation<'_, GetProductArgs>) -> bool { true }
/// ```
///
/// | key | required | meaning |
/// |---|---|---|
/// | `key = "products.get"` | yes | stable capability identity: dot-separated lowercase segments |
/// | `name = "get_product"` | no (fn name) | caller-facing name, `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` |
/// | `title = "..."` | no | short human title |
/// | `description = "..."` | no (doc comment) | what models read; the doc comment is the default, one must exist |
/// | `effect = read \| write \| destructive` | yes | declared effect |
/// | `authorize = path` | yes | `async fn(&C, &Invocation<'_, Args>) -> bool` (or `Verdict`, or `Result` of either), or a plain `fn(&C, &Invocation<'_, Args>) -> Verdict` for a hook that never waits; `authorize = public` opens the tool to every caller |
/// | `approve = path` | for `write`, `destructive` | same shape; runs on the exact arguments; may answer [`Verdict::Pending`] |
/// | `idempotent`, `open_world` | no | `= true` or `= false`; hints for clients |
/// | `timeout = "30s"` | no | `ms`, `s`, `m` or `h` |
/// | `args = TypeName` | no | name of the generated struct (default `<CamelName>Args`) |
/// | `crate = path` | no (`::toolwright`) | where the generated code finds toolwright, for a renamed dependency (`crate = tw`) or a crate that re-exports it (`crate = my_sdk::toolwright`); also written as a string, as serde and schemars take it |
///
/// Parameters: `Inject<T>` (or any [`FromScope`] type marked `#[inject]`)
/// is resolved per call; `Context<C>` receives the caller's context; every
/// other parameter is an input field. On inputs, doc comments become
/// descriptions, `#[default = expr]` makes a field optional with that value,
/// `#[rename = "..."]` renames it, and `#[schemars(...)]` adds schema
/// constraints (`range`, `length`, `regex`, ...) that the executor enforces.
///
/// The generated struct implements `Serialize`, `Deserialize`,
/// `JsonSchema` and `Debug`, which shows the fields as a caller sends
/// them: by wire name, in declaration order, each value as JSON text (so
/// fields of any type show, `Debug` or not). Its `Deserialize` reads a
/// JSON object only (not an array in field order, which serde's derive
/// also takes), refuses unknown and duplicate fields, and fills in `None`
/// for a missing `Option` and the `#[default]` for a defaulted field, with
/// serde's error messages:
///
/// ```
/// use toolwright::tool;
///
/// /// List orders.
/// #[tool(key = "shop.orders", effect = read, authorize = public)]
/// async fn list_orders(#[rename = "customerId"] customer_id: u64, #[default = 20] limit: u32) -> Vec<u64> {
///     vec![customer_id; limit as usize]
/// }
///
/// let args: ListOrdersArgs = serde_json::from_str(r#"{"customerId": 7}"#).unwrap();
/// assert_eq!((args.customer_id, args.limit), (7, 20));
/// let error = serde_json::from_str::<ListOrdersArgs>(r#"[7, 20]"#).unwrap_err();
/// assert!(error.to_string().starts_with("invalid type: sequence, expected struct ListOrdersArgs"));
/// assert_eq!(format!("{args:?}"), "ListOrdersArgs { customerId: 7, limit: 20 }");
/// ```
///
/// A body that never waits: when the fn's body has no `.await`, calls no
/// macro but the standard library's, `tracing`'s, `log`'s and
/// `serde_json::json!`, and carries no attribute that could rewrite it
/// (only `doc`, lint levels, `inline`, `must_use`, ... do not), a public
/// tool that needs no approval and injects nothing runs whole in the
/// first poll of [`Executor::invoke`]'s future: its arguments are read,
/// its body run and its result serialized in one step, with its body's
/// future on the stack instead of the heap. Nothing changes for the
/// caller (the call still starts only when awaited), but the call costs no
/// allocation of its own. Such a body cannot be cut short by a `timeout`
/// (none can: a timeout fires only while the body waits).
///
/// ```
/// use toolwright::{tool, Catalog, Container, Executor};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 {
///     tracing::debug!(a, b, "adding"); // a known macro: still never waits
///     a + b
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// let sum = executor.invoke("add", serde_json::json!({"a": 2, "b": 3}), &()).await;
/// assert_eq!(sum.unwrap(), 5);
/// # }
/// ```
///
/// The macros are known by name, so a macro of your own named like one of
/// them (`info!`, `format!`, ...) that expands to an `.await` makes such a
/// call fail with [`CallError::Panicked`], whose message says so, where it
/// first waits; call your macro by another name or by its path
/// (`crate::info!`).
///
/// Lints: the generated items are linted at your crate's levels, as your
/// own code. They meet rustc's lints, `missing_debug_implementations`
/// and `unused_results` included, and clippy's default ones. `#[tool]`
/// allows on them (not on your fn) only what they cannot meet: clippy's
/// `pedantic`, `nursery` and `restriction` groups and rustc's
/// `missing_copy_implementations` (so a crate that *forbids* one of these,
/// rather than denying it, cannot use `#[tool]`). One restriction lint
/// cannot be allowed per item: clippy's `arbitrary_source_item_ordering`
/// wants every struct of a module above every fn, which a struct generated
/// next to its fn breaks when a module has two tools.
pub use toolwright_macros::tool;

/// What generated code names; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::args::{
        FieldSeed, IsOption, NotOption, OptionProbe, bound, debug_args, describe, format,
        missing_field, noted, object_property, object_schema,
    };
    pub use crate::error::{BoxError, CallError, HookKind};
    pub use crate::json::to_value;
    pub use crate::scope::{FromContext, FromScope, Requirement, Scope};
    pub use crate::tool::{Effect, ErasedContext, Location, Registration, Verdict};
    pub use core::time::Duration;

    use serde_json::Value;

    /// The canonical input schema of a tool whose argument struct's
    /// `JsonSchema::json_schema` is `json_schema`.
    pub fn input_schema(
        json_schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
    ) -> Value {
        crate::schema::input_schema(json_schema)
    }

    /// Picks the output schema when the output type has one.
    pub struct OutputProbe<T>(pub core::marker::PhantomData<T>);

    /// Chosen by autoref when `T: JsonSchema`.
    pub trait OutputWithSchema {
        /// The schema.
        fn output_schema(&self) -> Option<Value>;
    }

    impl<T: schemars::JsonSchema> OutputWithSchema for &OutputProbe<T> {
        fn output_schema(&self) -> Option<Value> {
            Some(crate::schema::root_schema(
                T::json_schema,
                Some(T::schema_name().into_owned()),
            ))
        }
    }

    /// The fallback when `T` has no schema.
    pub trait OutputWithoutSchema {
        /// No schema.
        fn output_schema(&self) -> Option<Value>;
    }

    impl<T> OutputWithoutSchema for OutputProbe<T> {
        fn output_schema(&self) -> Option<Value> {
            None
        }
    }

    /// The answer of a hook, or the error it returned.
    pub fn verdict<R: crate::IntoVerdict>(
        answer: R,
        tool: &'static str,
        hook: HookKind,
    ) -> Result<Verdict, CallError> {
        answer
            .into_verdict()
            .map_err(|source| CallError::Hook { tool, hook, source })
    }

    /// A `Result` returned by a tool body.
    #[diagnostic::on_unimplemented(
        message = "a tool returning `{Self}` must return `Result<T, E>`",
        note = "a return type named `Result` is read as `Result<T, E>` with `T: Serialize` and `E: std::error::Error + Send + Sync + 'static`"
    )]
    pub trait Fallible {
        /// The success type.
        type Ok;
        /// The error type.
        type Err;
        /// Back to a `Result`.
        fn into_result(self) -> Result<Self::Ok, Self::Err>;
    }

    impl<T, E> Fallible for Result<T, E> {
        type Ok = T;
        type Err = E;
        fn into_result(self) -> Result<T, E> {
            self
        }
    }

    /// An error a tool body may return.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool's error",
        label = "the error type of this tool",
        note = "a tool's error implements `std::error::Error + Send + Sync + 'static` (or converts into `Box<dyn Error + Send + Sync>`, as `anyhow::Error` does)"
    )]
    pub trait ToolError {
        /// Boxes the error, keeping its type for `downcast_ref`.
        fn into_box(self) -> BoxError;
    }

    impl<E: Into<BoxError>> ToolError for E {
        fn into_box(self) -> BoxError {
            self.into()
        }
    }

    /// The body of a tool that takes only inputs and cannot fail: its fn's
    /// future, with the output in `Ok`. A plain future, where an `async`
    /// block would be one more state machine for every such tool to compile.
    pub fn infallible<F: core::future::Future>(body: F) -> Infallible<F> {
        Infallible { body }
    }

    pin_project_lite::pin_project! {
        /// See [`infallible`].
        pub struct Infallible<F> {
            #[pin]
            body: F,
        }
    }

    impl<F: core::future::Future> core::future::Future for Infallible<F> {
        type Output = Result<F::Output, CallError>;

        fn poll(
            self: core::pin::Pin<&mut Self>,
            cx: &mut core::task::Context<'_>,
        ) -> core::task::Poll<Self::Output> {
            self.project().body.poll(cx).map(Ok)
        }
    }

    /// The result of a fallible tool body.
    pub fn fallible_output<R>(returned: R, tool: &'static str) -> Result<R::Ok, CallError>
    where
        R: Fallible,
        R::Err: ToolError,
    {
        returned.into_result().map_err(|error| CallError::Tool {
            tool,
            source: error.into_box(),
        })
    }

    /// Calls an `authorize` or `approve` hook: downcasts the caller's
    /// context to the type the hook takes and converts its answer.
    ///
    /// Generated code passes the hook as a value, after the invocation that
    /// fixes `A`, so that a hook of the wrong shape fails one bound, on the
    /// hook's path, showing the signature that was expected.
    pub fn call_hook<'a, C, A, H, R>(
        ctx: ErasedContext<'a>,
        call: &'a crate::Invocation<'a, A>,
        hook: H,
        tool: &'static str,
        kind: HookKind,
    ) -> HookCall<R::Answer, R::Kind>
    where
        C: core::any::Any + Sync,
        crate::Invocation<'a, A>: Sync,
        H: FnOnce(&'a C, &'a crate::Invocation<'a, A>) -> R + Send + 'a,
        R: HookReturn,
        R::Resolved: crate::IntoVerdict,
        R::Answer: Send + 'a,
    {
        match ctx.downcast::<C>(tool) {
            Ok(ctx) => hook(ctx, call).ask(tool, kind),
            // Written out: a generic constructor would be one more
            // function for every hook.
            Err(error) => HookCall::Answered {
                answer: Some(Err(error)),
                kind: core::marker::PhantomData,
            },
        }
    }

    pin_project_lite::pin_project! {
        /// A hook's answer on its way: the future `F` of an `async` hook,
        /// which the pipeline awaits in place, not boxed; or the answer
        /// itself, from a hook that is a plain `fn`. `W` says which the
        /// hook is ([`Waits`]), for the executor to choose its path.
        ///
        /// A `Future` for every `F`, through `poll`, which [`HookReturn`]
        /// chose where its bounds hold: so that a hook of the wrong shape
        /// fails those bounds, once, and nothing that awaits this type
        /// reports the same mistake again.
        #[project = HookCallProjection]
        pub enum HookCall<F, W> {
            /// An `async` hook was called; `poll` polls its future.
            Asked {
                #[pin]
                answer: F,
                poll: PollHook<F>,
                tool: &'static str,
                kind: HookKind,
            },
            /// The answer: a plain `fn` hook's, or the error of a caller
            /// whose context is not the type the hook takes.
            Answered {
                answer: Option<Result<Verdict, CallError>>,
                kind: core::marker::PhantomData<fn() -> W>,
            },
        }
    }

    impl<F, W> HookCall<F, W> {
        /// The answer of a hook that does not wait ([`Waits::WAITS`] is
        /// `false` for `W`), without polling.
        pub(crate) fn now(self) -> Result<Verdict, CallError> {
            match self {
                HookCall::Answered { mut answer, .. } => take_answer(&mut answer),
                HookCall::Asked { tool, kind, .. } => Err(CallError::Hook {
                    tool,
                    hook: kind,
                    source: "an `async` hook was asked for its answer without being awaited".into(),
                }),
            }
        }
    }

    /// A [`HookCall::Answered`]'s answer, once. Not generic: one copy for
    /// every hook; inlined where a plain `fn` hook is asked, on every call.
    #[inline]
    fn take_answer(answer: &mut Option<Result<Verdict, CallError>>) -> Result<Verdict, CallError> {
        answer
            .take()
            .unwrap_or_else(|| Err(crate::executor::polled_after_finishing()))
    }

    /// How [`HookCall`] polls a hook's future `F`.
    pub type PollHook<F> = fn(
        core::pin::Pin<&mut F>,
        &mut core::task::Context<'_>,
        &'static str,
        HookKind,
    ) -> core::task::Poll<Result<Verdict, CallError>>;

    fn poll_hook<F>(
        answer: core::pin::Pin<&mut F>,
        cx: &mut core::task::Context<'_>,
        tool: &'static str,
        kind: HookKind,
    ) -> core::task::Poll<Result<Verdict, CallError>>
    where
        F: core::future::Future,
        F::Output: crate::IntoVerdict,
    {
        answer.poll(cx).map(|answer| verdict(answer, tool, kind))
    }

    impl<F, W> core::future::Future for HookCall<F, W> {
        type Output = Result<Verdict, CallError>;

        fn poll(
            self: core::pin::Pin<&mut Self>,
            cx: &mut core::task::Context<'_>,
        ) -> core::task::Poll<Self::Output> {
            match self.project() {
                HookCallProjection::Asked {
                    answer,
                    poll,
                    tool,
                    kind,
                } => poll(answer, cx, tool, *kind),
                HookCallProjection::Answered { answer, .. } => {
                    core::task::Poll::Ready(take_answer(answer))
                }
            }
        }
    }

    /// What a hook returns: a future, because a hook is an `async fn`; or
    /// a [`Verdict`], from a hook that is a plain `fn` and never waits.
    #[diagnostic::on_unimplemented(
        message = "a toolwright hook is an `async fn`, or a `fn` returning `toolwright::Verdict`; this one returns `{Self}`",
        label = "this hook is neither `async` nor returns a `Verdict`",
        note = "write the hook as `async fn hook(ctx: &C, call: &toolwright::Invocation<'_, Args>) -> bool`, or as `fn hook(ctx: &C, call: &toolwright::Invocation<'_, Args>) -> toolwright::Verdict`"
    )]
    pub trait HookReturn {
        /// The hook's answer: its future's output, or the [`Verdict`].
        type Resolved;
        /// What [`HookCall`] holds: the hook's future, or [`Answered`].
        type Answer;
        /// Whether the hook may wait: [`Later`] or [`Now`].
        type Kind: Waits;
        /// The answer on its way.
        fn ask(self, tool: &'static str, kind: HookKind) -> HookCall<Self::Answer, Self::Kind>
        where
            Self::Resolved: crate::IntoVerdict;
    }

    // No bound on the output here, but on `HookReturn::Resolved` where the
    // hook is called: so that a hook returning a future of the wrong output
    // is told about the output (`IntoVerdict`), one that is not `async` at
    // all about that.
    #[diagnostic::do_not_recommend]
    impl<F: core::future::Future> HookReturn for F {
        type Resolved = F::Output;
        type Answer = F;
        type Kind = Later;

        fn ask(self, tool: &'static str, kind: HookKind) -> HookCall<F, Later>
        where
            F::Output: crate::IntoVerdict,
        {
            HookCall::Asked {
                answer: self,
                poll: poll_hook::<F>,
                tool,
                kind,
            }
        }
    }

    impl HookReturn for Verdict {
        type Resolved = Verdict;
        type Answer = Answered;
        type Kind = Now;

        fn ask(self, tool: &'static str, kind: HookKind) -> HookCall<Answered, Now> {
            answered(verdict(self, tool, kind))
        }
    }

    /// A plain `fn` hook's answer as a [`HookCall`]. One copy for every
    /// such hook: its types are always the same.
    pub(crate) fn answered(answer: Result<Verdict, CallError>) -> HookCall<Answered, Now> {
        HookCall::Answered {
            answer: Some(answer),
            kind: core::marker::PhantomData,
        }
    }

    /// The [`HookReturn::Answer`] of a hook that is a plain `fn`: it has
    /// answered, so there is nothing to await.
    pub enum Answered {}

    /// The [`HookReturn::Kind`] of an `async` hook: it may wait.
    pub struct Later;

    /// The [`HookReturn::Kind`] of a plain `fn` hook: it answers at once.
    pub struct Now;

    /// Whether a hook's [`HookCall`] may wait: `true` for an `async` hook
    /// ([`Later`]), `false` for a plain `fn` ([`Now`]). The executor runs
    /// a call whose only hook does not wait as it runs a public tool's.
    pub trait Waits {
        /// May the hook wait?
        const WAITS: bool;
    }

    impl Waits for Later {
        const WAITS: bool = true;
    }

    impl Waits for Now {
        const WAITS: bool = false;
    }

    /// Resolves an injected parameter of type `T`.
    ///
    /// Generated code calls it as `(&&Injector::<T>(PhantomData)).resolve(..)`:
    /// when `T` is not [`FromScope`] the call falls back to
    /// [`InjectorFallback`] instead of failing, so that the one error the
    /// user sees is `assert_injectable`'s, on the parameter's type.
    pub struct Injector<T>(pub core::marker::PhantomData<T>);

    /// Chosen by autoref when `T: FromScope`.
    pub trait InjectorResolve<T> {
        /// `T::requirements`.
        fn requirements(&self, out: &mut Vec<Requirement>);
        /// Resolves `T`. The future's `Send` is declared, not inferred, so
        /// the generated body's future is `Send` without relying on
        /// auto-trait leakage through nested async fns.
        fn resolve<'a>(
            &self,
            scope: Option<&'a Scope>,
            tool: &'static str,
        ) -> impl core::future::Future<Output = Result<T, CallError>> + Send + 'a
        where
            T: 'a;
    }

    impl<T: FromScope> InjectorResolve<T> for &Injector<T> {
        fn requirements(&self, out: &mut Vec<Requirement>) {
            T::requirements(out);
        }

        // Not an `async fn`: that would capture the lifetime of `&self`.
        #[allow(clippy::manual_async_fn)]
        fn resolve<'a>(
            &self,
            scope: Option<&'a Scope>,
            tool: &'static str,
        ) -> impl core::future::Future<Output = Result<T, CallError>> + Send + 'a
        where
            T: 'a,
        {
            async move {
                let Some(scope) = scope else {
                    // Unreachable: `INJECTS` is true whenever a parameter is injected.
                    return Err(CallError::DependencyMissing {
                        tool,
                        type_name: core::any::type_name::<T>(),
                    });
                };
                T::from_scope(scope).await.map_err(|e| e.for_tool(tool))
            }
        }
    }

    /// The fallback when `T` is not [`FromScope`]; only ever compiled next to
    /// the `assert_injectable` error.
    pub trait InjectorFallback<T> {
        /// Nothing.
        fn requirements(&self, out: &mut Vec<Requirement>);
        /// Never resolves.
        fn resolve<'a>(
            &self,
            scope: Option<&'a Scope>,
            tool: &'static str,
        ) -> impl core::future::Future<Output = Result<T, CallError>> + Send + 'a
        where
            T: 'a;
    }

    impl<T> InjectorFallback<T> for Injector<T> {
        fn requirements(&self, _: &mut Vec<Requirement>) {}

        #[allow(clippy::manual_async_fn)]
        fn resolve<'a>(
            &self,
            _: Option<&'a Scope>,
            tool: &'static str,
        ) -> impl core::future::Future<Output = Result<T, CallError>> + Send + 'a
        where
            T: 'a,
        {
            async move {
                Err(CallError::DependencyMissing {
                    tool,
                    type_name: core::any::type_name::<T>(),
                })
            }
        }
    }

    /// Used by generated code to check an injected type.
    pub const fn assert_injectable<T: FromScope>() {}
}
