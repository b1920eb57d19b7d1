//! The seam between the one pipeline and each tool: all that is compiled
//! per tool.
//!
//! The steps (steps.rs) are ordinary code, compiled once for every tool.
//! They meet a tool's types only here:
//! - [`Thunks::read`] deserializes a call's JSON arguments into the tool's
//!   argument struct, held in its [`Invocation`];
//! - the invocation, as a [`Call`], asks the tool's typed hooks about
//!   itself and runs the tool's body, serializing its output (or, for a
//!   typed call, handing it over as it is).
//!
//! A tool built at run time ([`Arguments`](super::Arguments)) meets the
//! steps through the same [`Call`], read from its JSON by its own schema.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use serde::Serialize;
use serde_json::Value;

use super::Env;
use super::dynamic::Dynamic;
use crate::context::ErasedContext;
use crate::effect::Effect;
use crate::error::CallError;
use crate::hook::Asked;
use crate::invocation::{Invocation, Ledgered};
use crate::request::ApprovalId;
use crate::scope::Scope;
use crate::tool::Tool;
use crate::util::BoxFuture;

/// Where a typed call's output goes: `None` for a JSON call (the output is
/// serialized), or the typed caller's `Option<T::Output>`.
pub(crate) type Out<'b> = Option<&'b mut (dyn Any + Send)>;

/// One call of one tool, its arguments read and held (an [`Invocation`]):
/// what the steps ask of it. Its methods are the tool's typed hooks and
/// body, reached through one vtable per tool.
pub(crate) trait Call<'a>: Ledgered + Send + Sync {
    /// The tool's `authorize` hook, asked about this call.
    fn authorize<'b>(&'b self, ctx: ErasedContext<'b>) -> Asked<'b>;

    /// The tool's `approve` hook, asked about this call.
    fn approve<'b>(&'b self, ctx: ErasedContext<'b>) -> Asked<'b>;

    /// The ledger approval a hook consumed for this call, if any.
    fn consumed(&self) -> Option<ApprovalId>;

    /// The tool's body on the arguments: its output serialized, or, when
    /// `out` is a typed caller's slot, put there (and `null` returned).
    fn run<'b>(
        self: Box<Self>,
        ctx: ErasedContext<'b>,
        scope: Option<&'b Scope>,
        out: Out<'b>,
    ) -> BoxFuture<'b, Result<Value, CallError>>;
}

impl<'a, T: Tool> Call<'a> for Invocation<'a, T> {
    fn authorize<'b>(&'b self, ctx: ErasedContext<'b>) -> Asked<'b> {
        T::__authorize(ctx, self).erased()
    }

    fn approve<'b>(&'b self, ctx: ErasedContext<'b>) -> Asked<'b> {
        T::__approve(ctx, self).erased()
    }

    fn consumed(&self) -> Option<ApprovalId> {
        Invocation::consumed(self)
    }

    fn run<'b>(
        self: Box<Self>,
        ctx: ErasedContext<'b>,
        scope: Option<&'b Scope>,
        out: Out<'b>,
    ) -> BoxFuture<'b, Result<Value, CallError>> {
        let body = T::__run(self.into_args(), ctx, scope);
        Box::pin(Finish {
            key: T::KEY,
            body,
            out,
        })
    }
}

pin_project_lite::pin_project! {
    /// A tool's body, then its output serialized or handed to a typed caller.
    struct Finish<'b, F> {
        key: &'static str,
        #[pin]
        body: F,
        out: Out<'b>,
    }
}

impl<F, O> Future for Finish<'_, F>
where
    F: Future<Output = Result<O, CallError>>,
    O: Serialize + Send + 'static,
{
    type Output = Result<Value, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let output = ready!(this.body.poll(cx))?;
        Poll::Ready(finish(this.key, output, this.out.take()))
    }
}

/// `output` of tool `key`, serialized, or put into a typed caller's slot.
fn finish<O: Serialize + Send + 'static>(
    key: &'static str,
    output: O,
    out: Out<'_>,
) -> Result<Value, CallError> {
    let Some(out) = out else {
        return crate::util::json::to_value(&output)
            .map_err(|source| CallError::Output { key, source });
    };
    match out.downcast_mut::<Option<O>>() {
        Some(slot) => {
            *slot = Some(output);
            Ok(Value::Null)
        }
        // A typed call always brings the slot of its tool's output type.
        None => Err(CallError::Panicked {
            key,
            message: "the typed call's output slot has another type".to_owned(),
        }),
    }
}

/// What a call's [`Invocation`] is made of, besides its arguments.
#[derive(Clone, Copy)]
pub(crate) struct Parts<'a> {
    env: Env<'a>,
}

impl<'a> Parts<'a> {
    pub(super) fn of(env: Env<'a>) -> Self {
        Parts { env }
    }

    /// The invocation of `args` for this call.
    pub(super) fn invocation<A: Serialize>(self, args: A) -> Invocation<'a, A> {
        let env = self.env;
        let served = env.served;
        Invocation::new(
            args,
            served.key,
            served.name,
            served.effect,
            env.services.approvals.as_ref(),
            env.preflight,
            env.validation.secrets(),
        )
    }
}

/// A call of some tool, its arguments read.
pub(crate) type Called<'a> = Box<dyn Call<'a> + 'a>;

/// Deserializes JSON arguments into a call of one tool.
pub(crate) type Read = for<'a> fn(&Value, Parts<'a>) -> Result<Called<'a>, serde_json::Error>;

/// How a `#[tool]` meets the steps: its per-tool functions and the
/// constants that choose which steps it needs. Built at compile time by
/// [`Thunks::of`].
#[derive(Clone, Copy)]
pub(crate) struct Thunks {
    /// Deserializes JSON arguments into an invocation of the tool.
    pub(super) read: Read,
    /// Reads valid JSON arguments again and serializes them: the
    /// arguments as validated, for the event of a call that asks no hook.
    pub(super) reread: fn(&Value) -> Value,
    /// The effect the tool declares.
    effect: Effect,
    /// Whether the tool is open to every caller (`authorize = public`).
    public: bool,
    /// Whether the tool has injected parameters (and so needs a scope).
    injects: bool,
}

impl Thunks {
    /// The thunks of tool `T`.
    pub(crate) const fn of<T: Tool>() -> Self {
        Thunks {
            read: read::<T>,
            reread: reread::<T>,
            effect: T::EFFECT,
            public: T::PUBLIC,
            injects: T::INJECTS,
        }
    }
}

/// JSON arguments of `T`, deserialized into an invocation.
fn read<'a, T: Tool>(
    arguments: &Value,
    parts: Parts<'a>,
) -> Result<Called<'a>, serde_json::Error> {
    let args = T::deserialize(arguments)?;
    Ok(Box::new(parts.invocation(args)))
}

/// Valid JSON arguments of `T`, read again and serialized.
fn reread<T: Tool>(sent: &Value) -> Value {
    super::arguments::reread(sent, &mut |value| {
        let args = T::deserialize(value)?;
        crate::util::json::to_value(&args)
    })
}

/// Typed arguments of `T`, in an invocation.
pub(crate) fn typed<'a, T: Tool>(args: T, env: Env<'a>) -> Called<'a> {
    Box::new(Parts::of(env).invocation(args))
}

/// The tool a call meets: a `#[tool]`'s thunks, or a tool built at run time.
#[derive(Clone, Copy)]
pub(crate) enum Seam<'a> {
    /// A `#[tool]`.
    Declared(&'a Thunks),
    /// A tool built at run time.
    Dynamic(&'a Arc<Dynamic>),
}

impl<'a> Seam<'a> {
    /// Whether a call asks no hook, so builds no digest (unless a policy
    /// asks for approval): its event's arguments are left by step 2.
    pub(super) fn hookless(self) -> bool {
        match self {
            Seam::Declared(thunks) => thunks.public && !thunks.effect.requires_approval(),
            // The `authorize` step always runs; a tool without the hook allows.
            Seam::Dynamic(_) => false,
        }
    }

    /// Whether the tool is open to every caller (`authorize = public`): its
    /// `authorize` step is skipped.
    pub(super) fn public(self) -> bool {
        match self {
            Seam::Declared(thunks) => thunks.public,
            Seam::Dynamic(_) => false,
        }
    }

    /// Whether a call needs a scope: a `#[tool]` with injected parameters,
    /// or any tool built at run time (its handler may resolve from it).
    pub(super) fn injects(self) -> bool {
        match self {
            Seam::Declared(thunks) => thunks.injects,
            Seam::Dynamic(_) => true,
        }
    }

    /// The effect the tool declares (a tool built at run time, the
    /// strictest: the steps ask its effect as served).
    pub(super) fn declared_effect(self) -> Effect {
        match self {
            Seam::Declared(thunks) => thunks.effect,
            Seam::Dynamic(_) => Effect::Destructive,
        }
    }
}
