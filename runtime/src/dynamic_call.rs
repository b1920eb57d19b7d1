//! What a tool built at run time (`DynamicTool`) is made of and what its
//! parts receive: its hooks see the call's [`Arguments`], its handler a
//! [`DynamicCall`]. `Arguments` is the one `Tool` whose seam (the
//! pipeline's) serves them all: its hooks and body are those of the
//! [`Dynamic`] parts the arguments carry.

use std::any::Any;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::concurrency::Concurrency;
use crate::context::ErasedContext;
use crate::effect::Effect;
use crate::error::{BoxError, CallError, HookKind};
use crate::hook::{HookCall, HookReturn, IntoVerdict, Verdict};
use crate::invocation::Invocation;
use crate::scope::{Requirement, Scope};
use crate::tool::{Location, Tool};
use crate::tool_str::ToolStr;
use crate::util::BoxFuture;

/// The validated JSON arguments of a call of a tool built at run time, as
/// its hooks see them (`&Invocation<'_, Arguments>`): it dereferences to
/// the arguments' `Value`.
///
/// ```
/// use serde_json::json;
/// use toolwright::{Effect, Invocation, registry::{Arguments, DynamicTool}};
///
/// fn small<'a>(_: &'a (), call: &'a Invocation<'a, Arguments>) -> toolwright::executor::BoxFuture<'a, bool> {
///     Box::pin(async move { call.args()["cents"].as_u64().is_some_and(|cents| cents <= 1_000) })
/// }
///
/// let tool = DynamicTool::builder("payments.tip", "tip")
///     .description("Leave a tip.")
///     .effect(Effect::Write)
///     .input_schema(json!({"type": "object", "properties": {"cents": {"type": "integer"}}}))
///     .approve(small)
///     .handler(|call| Box::pin(async move { Ok(call.arguments()["cents"].clone()) }))
///     .build()
///     .unwrap();
/// assert_eq!(tool.key(), "payments.tip");
/// ```
pub struct Arguments {
    value: Value,
    tool: Arc<Dynamic>,
}

impl Arguments {
    /// The arguments of a call of `tool`, validated against its schema.
    pub(crate) fn new(value: Value, tool: Arc<Dynamic>) -> Self {
        Arguments { value, tool }
    }

    /// The arguments as JSON.
    ///
    /// ```
    /// use toolwright::{Invocation, registry::Arguments};
    ///
    /// fn cents(call: &Invocation<'_, Arguments>) -> Option<u64> {
    ///     call.args().json()["cents"].as_u64()
    /// }
    /// # let _ = cents;
    /// ```
    pub fn json(&self) -> &Value {
        &self.value
    }
}

impl Deref for Arguments {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.value
    }
}

impl fmt::Debug for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

impl Serialize for Arguments {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

/// Never called: a dynamic tool's arguments are read against its own schema
/// (`DynamicJson`), not deserialized into a type.
impl<'de> Deserialize<'de> for Arguments {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(serde::de::Error::custom(
            "the arguments of a tool built at run time are read by its executor",
        ))
    }
}

/// The executable parts of a tool built at run time.
pub(crate) struct Dynamic {
    pub(crate) authorize: Option<ErasedHook>,
    pub(crate) approve: Option<ErasedHook>,
    pub(crate) handler: Handler,
}

/// A hook over the caller's context, whatever its type.
pub(crate) type ErasedHook = Box<
    dyn for<'a> Fn(
            ErasedContext<'a>,
            &'a Invocation<'a, Arguments>,
            HookKind,
        ) -> HookCall<BoxFuture<'a, Result<Verdict, BoxError>>>
        + Send
        + Sync,
>;

/// The body of a tool built at run time.
pub(crate) type Handler =
    Box<dyn for<'a> Fn(DynamicCall<'a>) -> BoxFuture<'a, Result<Value, BoxError>> + Send + Sync>;

/// `hook`, a hook taking context `C`, over any context: a context of
/// another type is [`CallError::ContextMismatch`], as for a `#[tool]`.
pub(crate) fn erase_hook<C, H, V>(hook: H) -> ErasedHook
where
    C: Any + Sync,
    H: for<'a> Fn(&'a C, &'a Invocation<'a, Arguments>) -> BoxFuture<'a, V> + Send + Sync + 'static,
    V: IntoVerdict + 'static,
{
    Box::new(move |ctx, call, kind| {
        let key = <Arguments as Tool>::KEY;
        match ctx.downcast::<C>(key) {
            Ok(ctx) => {
                let answer = hook(ctx, call);
                let answer: BoxFuture<'_, Result<Verdict, BoxError>> =
                    Box::pin(async move { answer.await.into_verdict() });
                answer.ask(key, kind)
            }
            Err(error) => HookCall::answered(Err(error)),
        }
    })
}

/// One call of a tool built at run time, as its handler receives it: the
/// validated arguments, the call's scope and the caller's context.
///
/// ```
/// use serde_json::json;
/// use toolwright::{Effect, registry::DynamicTool};
///
/// struct Actor { name: String }
///
/// let greet = DynamicTool::builder("demo.greet", "greet")
///     .description("Greet the caller.")
///     .effect(Effect::Read)
///     .input_schema(json!({"type": "object"}))
///     .handler(|call| Box::pin(async move {
///         let actor: &Actor = call.context()?;
///         Ok(json!(format!("hello, {}", actor.name)))
///     }))
///     .build()
///     .unwrap();
/// # let _ = greet;
/// ```
pub struct DynamicCall<'a> {
    arguments: Value,
    scope: &'a Scope,
    ctx: ErasedContext<'a>,
}

impl<'a> DynamicCall<'a> {
    /// The validated arguments.
    ///
    /// ```
    /// use toolwright::registry::DynamicCall;
    /// fn city<'a>(call: &'a DynamicCall<'_>) -> Option<&'a str> {
    ///     call.arguments()["city"].as_str()
    /// }
    /// # let _ = city;
    /// ```
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The validated arguments, owned.
    ///
    /// ```
    /// use toolwright::registry::DynamicCall;
    /// fn forward(call: DynamicCall<'_>) -> serde_json::Value {
    ///     call.into_arguments()
    /// }
    /// # let _ = forward;
    /// ```
    pub fn into_arguments(self) -> Value {
        self.arguments
    }

    /// The call's REQUEST scope: resolve dependencies from it, register
    /// finalizers on it, as a `#[tool]`'s `Inject<T>` parameters do.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolwright::{BoxError, registry::DynamicCall};
    ///
    /// struct Db;
    ///
    /// async fn db(call: &DynamicCall<'_>) -> Result<Arc<Db>, BoxError> {
    ///     Ok(call.scope().resolve::<Db>().await?)
    /// }
    /// # let _ = db;
    /// ```
    pub fn scope(&self) -> &'a Scope {
        self.scope
    }

    /// The caller's context, when it is a `C`; otherwise the error a
    /// `#[tool]` taking a `Context<C>` would give.
    ///
    /// ```
    /// use toolwright::{CallError, registry::DynamicCall};
    ///
    /// struct Actor { admin: bool }
    ///
    /// fn is_admin(call: &DynamicCall<'_>) -> Result<bool, CallError> {
    ///     Ok(call.context::<Actor>()?.admin)
    /// }
    /// # let _ = is_admin;
    /// ```
    pub fn context<C: Any>(&self) -> Result<&'a C, CallError> {
        self.ctx.downcast::<C>(<Arguments as Tool>::KEY)
    }
}

impl fmt::Debug for DynamicCall<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicCall")
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

/// The seam of every tool built at run time, compiled once. What varies
/// per tool (key, name, effect, timeout) is read from the call's `Env`;
/// the hooks and the handler from the arguments' tool.
impl Tool for Arguments {
    /// Never shown: a call answers with the key its tool is served under.
    const KEY: &'static str = "toolwright.dynamic";
    const NAME: &'static str = "dynamic";
    const TITLE: Option<&'static str> = None;
    const DESCRIPTION: &'static str = "";
    /// The strictest, for anything that would read it: the steps ask the
    /// tool's effect as served.
    const EFFECT: Effect = Effect::Destructive;
    const IDEMPOTENT: bool = false;
    const OPEN_WORLD: bool = false;
    const TAGS: &'static [&'static str] = &[];
    const TIMEOUT: Option<std::time::Duration> = None;
    /// Unread: the steps ask the tool's concurrency as served.
    const CONCURRENCY: Concurrency = Concurrency::Unlimited;
    const MAX_RESULT: Option<usize> = None;
    const LOCATION: Location = Location {
        file: file!(),
        line: line!(),
        module_path: module_path!(),
    };
    /// Every call gets a scope, for the handler to resolve from.
    const INJECTS: bool = true;
    /// The `authorize` step always runs; a tool without the hook allows.
    const PUBLIC: bool = false;

    type Output = Value;

    fn __input_schema() -> Value {
        Value::Object(serde_json::Map::new())
    }

    fn __output_schema() -> Option<Value> {
        None
    }

    fn __requirements(_: &mut Vec<Requirement>) {}

    fn __authorize<'a>(
        ctx: ErasedContext<'a>,
        call: &'a Invocation<'a, Self>,
    ) -> HookCall<impl Send + 'a> {
        match &call.args().tool.authorize {
            Some(hook) => hook(ctx, call, HookKind::Authorize),
            None => HookCall::answered(Ok(Verdict::Allow)),
        }
    }

    fn __approve<'a>(
        ctx: ErasedContext<'a>,
        call: &'a Invocation<'a, Self>,
    ) -> HookCall<impl Send + 'a> {
        match &call.args().tool.approve {
            Some(hook) => hook(ctx, call, HookKind::Approve),
            // A tool that needs approval always has the hook (`build`
            // checks); any other is asked only when the policy says "ask",
            // and then the steps do not ask it.
            None => HookCall::answered(Ok(Verdict::Pending)),
        }
    }

    async fn __run<'a>(
        self,
        ctx: ErasedContext<'a>,
        scope: Option<&'a Scope>,
    ) -> Result<Value, CallError> {
        let Some(scope) = scope else {
            // Unreachable: `INJECTS` makes the steps open a scope for every call.
            return Err(CallError::DependencyMissing {
                key: ToolStr::from_static(Self::KEY),
                type_name: std::any::type_name::<Scope>(),
            });
        };
        let Arguments { value, tool } = self;
        let call = DynamicCall {
            arguments: value,
            scope,
            ctx,
        };
        (tool.handler)(call)
            .await
            .map_err(|source| CallError::Tool {
                key: ToolStr::from_static(Self::KEY),
                source,
            })
    }
}
