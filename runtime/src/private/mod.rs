//! What generated code names (`::toolwright::__private`), and nothing else
//! imports: re-exports of the crates the code needs, and the small helpers
//! it calls.

pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::args::{
    FailedField, FieldSeed, Fields, IsOption, NotOption, OptionProbe, ReadFields, Runtime,
    SchemaFields, WriteFields, bound, debug_args, describe, fields, format, missing_field, noted,
    object_property, object_schema, write_only,
};
pub use crate::concurrency::Concurrency;
pub use crate::context::{ErasedContext, FromContext};
pub use crate::effect::Effect;
pub use crate::error::{BoxError, CallError, HookKind};
pub use crate::field_schema::field_schema;
pub use crate::hook::{Answered, HookCall, HookReturn, PollHook, Verdict, call_hook};
pub use crate::registration::Registration;
pub use crate::scope::FromScope;
pub use crate::scope::{Requirement, Scope};
pub use crate::tool::Location;
pub use crate::util::json::to_value;
pub use core::time::Duration;
pub use infallible::{Infallible, infallible};
pub use injected::injected;

use serde_json::Value;

use crate::tool_str::ToolStr;

/// A tool body's future, boxed in a debug build: the seam's generic
/// instances see this one type instead of each body's own, so that an edit
/// to a body recompiles that body, not every tool's instances (see
/// BENCHMARKS.md, "Compile cost of tools"). A release build runs the body
/// in place, sparing each call the allocation. A tool with injected
/// parameters resolves them through [`injected()`], not an `async` block of
/// its own, for the same reason and one state machine less to compile.
pub type BodyFuture<'a, T> = crate::util::BoxFuture<'a, T>;

mod infallible;
mod injected;

/// `concurrency = n` (the attribute refuses 0, which would read as no limit).
pub const fn concurrency_limit(n: u32) -> crate::concurrency::Concurrency {
    match core::num::NonZeroU32::new(n) {
        Some(n) => crate::concurrency::Concurrency::Limit(n),
        None => crate::concurrency::Concurrency::Unlimited,
    }
}

/// The canonical input schema of a tool whose argument struct's
/// `JsonSchema::json_schema` is `json_schema`.
pub fn input_schema(json_schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema) -> Value {
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

/// The result of a fallible tool body.
pub fn fallible_output<R>(returned: R, tool: &'static str) -> Result<R::Ok, CallError>
where
    R: Fallible,
    R::Err: ToolError,
{
    returned.into_result().map_err(|error| CallError::Tool {
        key: ToolStr::from_static(tool),
        source: error.into_box(),
    })
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
                    key: ToolStr::from_static(tool),
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
                key: ToolStr::from_static(tool),
                type_name: core::any::type_name::<T>(),
            })
        }
    }
}

/// Used by generated code to check an injected type.
pub const fn assert_injectable<T: FromScope>() {}
