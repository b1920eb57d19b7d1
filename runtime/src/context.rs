//! The caller's context: what hooks and `Context<C>` parameters receive.

use std::any::Any;
use std::ops::Deref;

use crate::error::CallError;
use crate::tool_str::ToolStr;

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
trait ContextValue: Any + Send + Sync {
    fn type_name(&self) -> &'static str;
}

impl<C: Any + Send + Sync> ContextValue for C {
    fn type_name(&self) -> &'static str {
        std::any::type_name::<C>()
    }
}

impl<'a> ErasedContext<'a> {
    pub(crate) fn new<C: Any + Send + Sync>(value: &'a C) -> Self {
        ErasedContext { value }
    }

    /// The context as `C`, or the error that names both types.
    pub fn downcast<C: Any>(self, tool: &'static str) -> Result<&'a C, CallError> {
        let value: &'a dyn Any = self.value;
        value
            .downcast_ref::<C>()
            .ok_or_else(|| CallError::ContextMismatch {
                key: ToolStr::from_static(tool),
                expected: std::any::type_name::<C>(),
                found: self.value.type_name(),
            })
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
