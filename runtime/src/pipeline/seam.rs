//! The seam between the one pipeline and each tool: all that is compiled
//! per tool.
//!
//! The steps (steps.rs) are ordinary code, compiled once for every tool.
//! Per tool there is only:
//! - [`json`] (and [`typed`], for typed calls): the call's one future. It
//!   deserializes the JSON arguments into the tool's argument struct, holds
//!   them in a [`Slot`] beside the scope the call may open, and awaits the
//!   steps on them;
//! - the [`Slot`], which the steps see as a [`Call`]: the tool's typed
//!   hooks, asked about its [`Invocation`], and its body, run in place and
//!   its output serialized (or, for a typed call, handed over as it is).
//!
//! What is compiled per tool but does not hold the tool's body (reading
//! its arguments, its hooks' adapters, its output) is in `reading.rs`: this
//! module's instances are compiled again whenever a tool's body is edited,
//! in a release build. A debug build boxes each body's future (the macro
//! writes `__private::BodyFuture`; a tool with injected parameters has
//! `__private::injected`'s future, which holds the boxed rest of its
//! body, one type per injected type and output type), so these instances
//! hold no body's own future and an edit recompiles only the body: what a
//! user's edit-build loop pays, against an allocation per call (one more
//! per injected value) that only a release build spares.
//!
//! A tool built at run time ([`Arguments`](crate::registry::Arguments)) meets the
//! steps through the same slot, its arguments checked by its own schema.

use std::any::Any;
use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, ready};

use serde::Serialize;
use serde_json::Value;

use super::reading::{finish, read};
use super::{Env, steps};
use crate::context::ErasedContext;
use crate::effect::Effect;
use crate::error::CallError;
use crate::hook::Asked;
use crate::invocation::{Facts, Invocation, Ledgered};
use crate::request::ApprovalId;
use crate::scope::{Scope, ScopeGuard};
use crate::tool::Tool;
use crate::tool_str::ToolStr;
use crate::util::BoxFuture;

/// Where a typed call's output goes: `None` for a JSON call (the output is
/// serialized), or the typed caller's `Option<T::Output>`.
pub(crate) type Out<'a> = Option<&'a mut (dyn Any + Send + 'static)>;

/// How a registration starts a JSON call of its tool: [`json`] for its type.
pub(crate) type JsonCall = for<'a> fn(Env<'a>, Value) -> BoxFuture<'a, Result<Value, CallError>>;

/// What the steps need to know of a tool's declaration.
#[derive(Clone, Copy)]
pub(crate) struct Declared {
    /// The effect the tool declares.
    pub(super) effect: Effect,
    /// Whether the tool is open to every caller (`authorize = public`): its
    /// `authorize` step is skipped.
    pub(super) public: bool,
    /// Whether a call needs a scope: a `#[tool]` with injected parameters,
    /// or any tool built at run time (its handler may resolve from it).
    pub(super) injects: bool,
}

impl Declared {
    /// What `T` declares.
    pub(super) const fn of<T: Tool>() -> Self {
        Declared {
            effect: T::EFFECT,
            public: T::PUBLIC,
            injects: T::INJECTS,
        }
    }

    /// Whether a call asks no hook, so builds no digest (unless a policy
    /// asks for approval): its event's arguments are left by step 2.
    pub(super) fn hookless(self) -> bool {
        self.public && !self.effect.requires_approval()
    }
}

/// A JSON call of `T`: its one future, steps 2 to 7 and its output
/// serialized. In a preflight, steps 2 to 4 and `null`.
pub(crate) fn json<'a, T: Tool>(
    env: Env<'a>,
    arguments: Value,
) -> BoxFuture<'a, Result<Value, CallError>> {
    let secrets = steps::secret_values(&env, &arguments);
    let call = Box::pin(async move {
        let declared = Declared::of::<T>();
        let args = read::<T>(env, declared, arguments)?;
        let mut scope = None;
        let slot = pin!(Slot::read(args, Parts::of(env), T::__run, None));
        steps::run(env, declared, &mut scope, slot).await
    });
    steps::keeping_secrets(env, secrets, call)
}

/// A typed call of `T` with `args`: its one future, steps 2 to 7, its
/// output put into `out`.
pub(crate) fn typed<'a, T: Tool>(
    env: Env<'a>,
    args: T,
    out: &'a mut Option<T::Output>,
) -> BoxFuture<'a, Result<Value, CallError>> {
    let invocation = Parts::of(env).invocation(args);
    let secrets = steps::secrets_of(&env, &invocation);
    let call = Box::pin(async move {
        let declared = Declared::of::<T>();
        steps::check_typed(env, declared, &invocation)?;
        run(env, declared, invocation, Some(out)).await
    });
    steps::keeping_secrets(env, secrets, call)
}

/// Steps 3 to 7 of a call of `T` whose arguments are in their invocation
/// already (a typed call's, a tool built at run time's): in place, in the
/// caller's future, beside the scope the steps may open.
pub(super) async fn run<'a, T: Tool>(
    env: Env<'a>,
    declared: Declared,
    invocation: Invocation<'a, T>,
    out: Out<'a>,
) -> Result<Value, CallError> {
    let mut scope = None;
    let slot = pin!(Slot::asking(invocation, Parts::of(env), T::__run, out));
    steps::run(env, declared, &mut scope, slot).await
}

/// One call's tool, as the steps hold it: its arguments, in their
/// invocation while hooks are asked about them, then its body.
pub(crate) trait Call<'a>: Send {
    /// The call's invocation, which hooks are asked about, built from the
    /// arguments the first time it is asked for: until the body starts
    /// (`None` after).
    fn asking(self: Pin<&mut Self>) -> Option<&(dyn Asking + 'a)>;

    /// Starts the body on the arguments, in place.
    fn start(self: Pin<&mut Self>, ctx: ErasedContext<'a>, scope: Option<&'a Scope>);

    /// Polls the body: its output serialized, or, when the call is typed,
    /// put into the caller's slot (and `null` returned).
    fn poll_body(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Value, CallError>>;

    /// Drops the body (its timeout stopped it, or it ended): before the
    /// call's scope closes, a body may hold what its finalizers need (a
    /// lock, an injected value).
    fn end_body(self: Pin<&mut Self>);
}

/// An invocation, as the steps ask hooks about it.
pub(crate) trait Asking: Ledgered + Send {
    /// The tool's `authorize` hook, asked about this call.
    fn authorize<'b>(&'b self, ctx: ErasedContext<'b>) -> Asked<'b>;

    /// The tool's `approve` hook, asked about this call.
    fn approve<'b>(&'b self, ctx: ErasedContext<'b>) -> Asked<'b>;

    /// The ledger approval a hook consumed for this call, if any.
    fn consumed(&self) -> Option<ApprovalId>;
}

/// How `T`'s body starts: `T::__run` at one lifetime.
type Start<'a, T, F> = fn(T, ErasedContext<'a>, Option<&'a Scope>) -> F;

pin_project_lite::pin_project! {
    /// One call of `T`, as the steps hold it ([`Call`]): its arguments,
    /// their invocation (only a call that asks a hook or a policy about
    /// them builds one), then its body's future `F`.
    pub(crate) struct Slot<'a, T, F> {
        args: Option<T>,
        invocation: Option<Invocation<'a, T>>,
        #[pin]
        body: Body<F>,
        parts: Parts<'a>,
        start: Start<'a, T, F>,
        out: Out<'a>,
    }
}

pin_project_lite::pin_project! {
    /// A slot's body: not started (or ended), or running in place. Not an
    /// `Option`: the instances of `Option`'s methods for every tool's body
    /// would share a codegen unit with every other `Option` of the crate,
    /// compiled again whole whenever any tool's body is edited.
    #[project = BodyNow]
    enum Body<F> {
        Idle,
        Running { #[pin] future: F },
    }
}

impl<'a, T: Tool, F> Slot<'a, T, F> {
    /// A call of arguments `args`, read.
    fn read(args: T, parts: Parts<'a>, start: Start<'a, T, F>, out: Out<'a>) -> Self {
        Slot {
            args: Some(args),
            invocation: None,
            body: Body::Idle,
            parts,
            start,
            out,
        }
    }

    /// A call whose arguments are already in their `invocation`.
    fn asking(
        invocation: Invocation<'a, T>,
        parts: Parts<'a>,
        start: Start<'a, T, F>,
        out: Out<'a>,
    ) -> Self {
        Slot {
            args: None,
            invocation: Some(invocation),
            body: Body::Idle,
            parts,
            start,
            out,
        }
    }
}

impl<'a, T, F> Call<'a> for Slot<'a, T, F>
where
    T: Tool,
    F: Future<Output = Result<T::Output, CallError>> + Send,
{
    fn asking(self: Pin<&mut Self>) -> Option<&(dyn Asking + 'a)> {
        let this = self.project();
        if let Some(args) = this.args.take() {
            *this.invocation = Some(this.parts.invocation(args));
        }
        match this.invocation {
            Some(invocation) => Some(invocation),
            None => None,
        }
    }

    fn start(self: Pin<&mut Self>, ctx: ErasedContext<'a>, scope: Option<&'a Scope>) {
        let mut this = self.project();
        let args = match this.args.take() {
            Some(args) => args,
            None => match this.invocation.take() {
                Some(invocation) => invocation.into_args(),
                None => return,
            },
        };
        this.body.set(Body::Running {
            future: (this.start)(args, ctx, scope),
        });
    }

    fn poll_body(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Value, CallError>> {
        let this = self.project();
        let BodyNow::Running { future: body } = this.body.project() else {
            let key = ToolStr::from_static(T::KEY);
            let error = super::body::out_of_order(key, "a body polled before it started");
            return Poll::Ready(Err(error));
        };
        let output = ready!(body.poll(cx))?;
        Poll::Ready(finish(T::KEY, output, this.out.take()))
    }

    fn end_body(self: Pin<&mut Self>) {
        self.project().body.set(Body::Idle);
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
        Invocation::new(args, self.facts())
    }

    /// What the invocation of this call holds besides its arguments.
    fn facts(self) -> Facts<'a> {
        let env = self.env;
        let served = env.served;
        Facts::new(
            &served.key,
            &served.name,
            served.effect,
            env.services.approvals.as_ref(),
            env.preflight,
            env.validation.secrets(),
        )
    }
}

/// The scope a call opens, kept by its future beside the tool's slot.
pub(crate) type ScopeSlot = Option<ScopeGuard>;
