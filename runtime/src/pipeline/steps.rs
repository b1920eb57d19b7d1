//! Steps 2 to 7 of a call, in order: read the arguments, authorize,
//! approve, open the scope, run the body, close the scope with how it ended.

use std::pin::{Pin, pin};
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;

use super::{Env, Gate, Served, Watch, admission, arguments, body};
use crate::approval::Settlement;
use crate::audit::{self, AuditTrail};
use crate::effect::Effect;
use crate::error::{CallError, HookKind};
use crate::hook::{approved, authorized};
use crate::invocation::{Invocation, Ledgered};
use crate::principal::ask_ledger;
use crate::request::ApprovalId;
use crate::scope::{Outcome, ScopeGuard};
use crate::secret::{SecretValues, Secrets};
use crate::tool::Tool;
use crate::util::BoxFuture;
use crate::util::panic::CatchUnwind;

/// What a call starts from, and how step 2 reads it: a generic parameter
/// rather than an enum, so that a tool compiles only the reading it uses.
pub(super) trait Input<T>: Send {
    /// The validated arguments.
    fn read(self, env: &Env<'_>) -> Result<T, CallError>;

    /// The text of the values of the `secrets` among the arguments.
    fn secret_values(&self, secrets: &Secrets) -> SecretValues;
}

/// A model's or client's JSON arguments.
pub(super) struct Json(pub(super) Value);

impl<T: Tool> Input<T> for Json {
    fn read(self, env: &Env<'_>) -> Result<T, CallError> {
        let read = arguments::read(env, env.served.key, &self.0);
        if let Some(watch) = env.watch {
            sent::<T>(watch, read.is_ok(), self.0);
        }
        read
    }

    fn secret_values(&self, secrets: &Secrets) -> SecretValues {
        secrets.values(&self.0)
    }
}

/// Leaves the JSON arguments of a watched call of `T` for its event, as
/// they were sent: when they are not `valid`, to show as they are; when
/// they are and no invocation will serialize them, for the event to read
/// them again off the call's thread.
#[inline(never)]
fn sent<T: Tool>(watch: &dyn Watch, valid: bool, arguments: Value) {
    match valid {
        false => watch.findings().unreadable(arguments),
        true if hookless::<T>() => watch.findings().sent(arguments, arguments::reread::<T>),
        true => {}
    }
}

/// Typed arguments ([`Executor::call`](crate::Executor::call)).
pub(super) struct Typed<T>(pub(super) T);

impl<T: Tool> Input<T> for Typed<T> {
    fn read(self, env: &Env<'_>) -> Result<T, CallError> {
        let checked = arguments::check_typed(env, env.served.key, &self.0);
        if let Some(watch) = env.watch {
            match &checked {
                Err(_) => {
                    let arguments = crate::util::json::to_value(&self.0).unwrap_or(Value::Null);
                    watch.findings().unreadable(arguments);
                }
                // No invocation will digest them: the call's event needs them now.
                Ok(()) if hookless::<T>() => validated(watch, &self.0),
                Ok(()) => {}
            }
        }
        checked.map(|()| self.0)
    }

    fn secret_values(&self, secrets: &Secrets) -> SecretValues {
        let arguments = crate::util::json::to_value(&self.0).unwrap_or(Value::Null);
        secrets.values(&arguments)
    }
}

/// How a call's output becomes its result: serialized, or as it is.
pub(super) type Finish<O, R> = fn(&'static str, O) -> Result<R, CallError>;

/// Steps 2 to 7 for a call of `T`, then `finish` on its output.
///
/// The call's key, name, effect and timeout are the tool's as served
/// (`env.served`): a tool mounted under a namespace answers with its
/// namespaced key (`traced` renames what generated code names by
/// `T::KEY`). `T`'s constants only choose what to compile.
pub(super) async fn run<T: Tool, R>(
    env: Env<'_>,
    input: impl Input<T>,
    finish: Finish<T::Output, R>,
) -> Result<R, CallError> {
    let key = env.served.key;
    // Step 2: the arguments, checked against the schema the catalog advertises.
    let args = input.read(&env)?;
    // Steps 3 and 4. A tool with no hook to ask meets a policy that
    // needs no arguments here, without taking them apart.
    let hookless = hookless::<T>();
    let (args, consumed) = match env.gate {
        Gate::Open if hookless => (args, None),
        Gate::Ruled(_) if hookless => match env.gate.check(key, &|| &Value::Null, None)? {
            false => (args, None),
            // Boxed: rare, and it would make every such call's future larger.
            true => Box::pin(ask_hooks(&env, args, Some(true))).await?,
        },
        _ => ask_hooks(&env, args, None).await?,
    };
    if let (Some(watch), Some(id)) = (env.watch, consumed) {
        _ = watch.findings().consumed.set(id);
    }
    let timeout = env.served.timeout.or(env.services.default_timeout);
    // Step 5a: the call's turn, held until its scope is closed. Boxed:
    // only calls that wait should carry the wait's space.
    let concurrency = env.served.concurrency;
    let turn = if admission::needs_turn(&env, concurrency) {
        Some(Box::pin(admission::take_turn(&env, key, concurrency, timeout)).await?)
    } else {
        None
    };
    let waited = turn.as_ref().map_or(Duration::ZERO, |turn| turn.waited);
    // Steps 5 to 7. An audited call is recorded after its body and before
    // its scope closes: a record that fails fails the call, and its
    // finalizers see an error (they roll back). (One refused before, its
    // recording records when it ends.)
    let output = if T::INJECTS {
        let guard = ScopeGuard::open(&env.services.container);
        let (result, outcome) = {
            // Dropped at the end of this block, before the finalizers run:
            // a body its timeout stopped may still hold what they need (a
            // lock, an injected value).
            let body = pin!(T::__run(args, env.ctx, Some(guard.scope())));
            body::run(key, timeout, waited, body).await
        };
        // Boxed, and handed the result: only audited calls carry the
        // record's state (kept, the result would make every call's future
        // larger).
        let audit = audited(&env, T::EFFECT);
        let (result, outcome, recorded_ok) = match audit {
            None => (result, outcome, false),
            Some(audit) => {
                let result = Box::pin(recorded(audit, &env, result)).await;
                match (&result, outcome) {
                    (Err(_), Outcome::Ok) => (result, Outcome::Error, false),
                    (_, outcome) => (result, outcome, outcome.is_ok()),
                }
            }
        };
        // Boxed: closing is most of this future's size, and only calls that
        // opened a scope (which allocate for it anyway) should carry it.
        let closed = Box::pin(guard.close(key, outcome, result)).await;
        match audit {
            // Recorded as a success, then the commit failed: say so too.
            Some(audit) if recorded_ok && closed.is_err() => {
                Box::pin(uncommitted(audit, &env, closed)).await
            }
            _ => closed,
        }
    } else {
        let result = body::run(key, timeout, waited, pin!(T::__run(args, env.ctx, None)))
            .await
            .0;
        match audited(&env, T::EFFECT) {
            None => result,
            Some(audit) => Box::pin(recorded(audit, &env, result)).await,
        }
    };
    drop(turn);
    if let Some(id) = consumed {
        // Boxed: only calls that used a ledger's approval settle one.
        Box::pin(settle(&env, id, settlement(&output))).await;
    }
    finish(key, output?)
}

/// The trail a call is recorded in, and the recording that follows it:
/// only for `write` and `destructive` tools (`declared` is the effect its
/// type declares, a constant once inlined), on an executor with a trail.
fn audited<'a>(env: &Env<'a>, declared: Effect) -> Option<Audit<'a>> {
    if !declared.requires_approval() || !env.served.effect.requires_approval() {
        return None;
    }
    match (&env.services.audit, env.watch) {
        (Some(trail), Some(watch)) => Some(Audit {
            trail: &*trail.0,
            watch,
        }),
        _ => None,
    }
}

/// Where an audited call is recorded.
#[derive(Clone, Copy)]
struct Audit<'a> {
    trail: &'a dyn AuditTrail,
    watch: &'a dyn Watch,
}

/// Records a call as it ended (`result`).
async fn ran(
    audit: Audit<'_>,
    env: &Env<'_>,
    result: Result<(), &CallError>,
) -> Result<(), CallError> {
    let served = env.served;
    // Recorded here: not again when the call ends.
    _ = audit.watch.findings().audited.set(());
    let secrets = env.validation.secrets();
    audit::record_call(audit.trail, audit.watch, served, secrets, result).await
}

/// Records a call whose body ran, as it ended, and returns its result:
/// `AuditFailed` instead when the record fails.
async fn recorded<O>(
    audit: Audit<'_>,
    env: &Env<'_>,
    result: Result<O, CallError>,
) -> Result<O, CallError> {
    ran(audit, env, result.as_ref().map(|_| ())).await?;
    result
}

/// Records that an audited call recorded as a success failed to close its
/// scope, and returns how it ended (`closed`): the call fails either way,
/// so a record that fails is only logged.
#[cold]
#[inline(never)]
async fn uncommitted<O>(
    audit: Audit<'_>,
    env: &Env<'_>,
    closed: Result<O, CallError>,
) -> Result<O, CallError> {
    _ = ran(audit, env, closed.as_ref().map(|_| ())).await;
    closed
}

/// `call`, a call of the tool `key` whose secret values are `secrets`,
/// with those values scrubbed from its error, a panic's (a hook's, say)
/// included: caught here, before the message leaves for the call's span,
/// event or caller.
async fn keeping_secrets<R>(
    key: &'static str,
    secrets: SecretValues,
    call: BoxFuture<'_, Result<R, CallError>>,
) -> Result<R, CallError> {
    CatchUnwind::new(call)
        .await
        .unwrap_or_else(|message| Err(CallError::Panicked { key, message }))
        .map_err(|error| error.scrubbed(&secrets))
}

/// [`run`], boxed; for a tool with `#[secret]` properties, with the call's
/// secret values scrubbed from its error ([`keeping_secrets`], one copy
/// per output type rather than per tool). A tool without pays one check
/// of an empty list.
pub(super) fn boxed<'a, T: Tool, R: Send + 'a>(
    env: Env<'a>,
    input: impl Input<T> + 'a,
    finish: Finish<T::Output, R>,
) -> BoxFuture<'a, Result<R, CallError>> {
    match secret_values(&env, &input) {
        None => Box::pin(run(env, input, finish)),
        Some(values) => {
            let call = Box::pin(run(env, input, finish));
            Box::pin(keeping_secrets(env.served.key, values, call))
        }
    }
}

/// The secret values among `input`, when its tool has secret properties.
fn secret_values<T>(env: &Env<'_>, input: &impl Input<T>) -> Option<SecretValues> {
    let secrets = env.validation.secrets();
    (!secrets.is_empty()).then(|| input.secret_values(secrets))
}

pin_project_lite::pin_project! {
    /// A typed call ([`typed`]): as it is, or, for a tool with `#[secret]`
    /// properties, boxed with its secret values scrubbed from its error.
    #[project = TypedProj]
    pub(crate) enum TypedCall<'a, F, R> {
        Plain { #[pin] call: F },
        Scrubbed { call: BoxFuture<'a, Result<R, CallError>> },
    }
}

impl<F: Future<Output = Result<R, CallError>>, R> Future for TypedCall<'_, F, R> {
    type Output = Result<R, CallError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            TypedProj::Plain { call } => call.poll(cx),
            TypedProj::Scrubbed { call } => call.as_mut().poll(cx),
        }
    }
}

/// A typed call of `T` with `args`: [`run`], or [`boxed`] for a tool
/// with `#[secret]` properties.
pub(super) fn typed<'a, T: Tool>(
    env: Env<'a>,
    args: T,
) -> TypedCall<'a, impl Future<Output = Result<T::Output, CallError>> + Send + 'a, T::Output> {
    let input = Typed(args);
    if env.validation.secrets().is_empty() {
        TypedCall::Plain {
            call: run(env, input, |_, output| Ok(output)),
        }
    } else {
        TypedCall::Scrubbed {
            call: boxed(env, input, |_, output| Ok(output)),
        }
    }
}

/// Steps 2 to 4 only: whether a call would run (`null`), with nothing run.
/// Boxed, as [`boxed`] is: a plain fn, so that each tool compiles one
/// state machine for it, not two.
pub(super) fn preflight<'a, T: Tool>(
    env: Env<'a>,
    input: impl Input<T> + 'a,
) -> BoxFuture<'a, Result<Value, CallError>> {
    let values = secret_values(&env, &input);
    let asked = Box::pin(async move {
        let args = input.read(&env)?;
        ask_hooks(&env, args, None).await.map(|_| Value::Null)
    });
    match values {
        None => asked,
        Some(values) => Box::pin(keeping_secrets(env.served.key, values, asked)),
    }
}

/// Whether a call of `T` asks no hook, so builds no invocation (unless a
/// policy asks for approval): its event's arguments are left by step 2.
fn hookless<T: Tool>() -> bool {
    T::PUBLIC && !T::EFFECT.requires_approval()
}

/// Leaves the validated arguments of a call that builds no invocation for
/// its event, which digests them off the call's thread.
#[cold]
#[inline(never)]
fn validated<T: Tool>(watch: &dyn Watch, args: &T) {
    // Arguments that came through validation always serialize.
    let arguments = crate::util::json::to_value(args).unwrap_or(Value::Null);
    watch.findings().validated(arguments, None);
}

/// How a call that consumed an approval ended, for the ledger.
fn settlement<O>(output: &Result<O, CallError>) -> Settlement {
    match output {
        Ok(_) => Settlement::Succeeded,
        // Stopped mid-way: what it changed is anyone's guess.
        Err(CallError::Timeout { .. } | CallError::Panicked { .. }) => Settlement::Unknown,
        Err(_) => Settlement::Failed,
    }
}

/// Records in the ledger how the call that consumed approval `id` ended.
async fn settle(env: &Env<'_>, id: ApprovalId, settlement: Settlement) {
    if let Some(approvals) = &env.services.approvals {
        approvals.settle_call(id, settlement).await;
    }
}

/// Steps 3 and 4: the policy (unless `asked` says what it answered), then
/// the tool's hooks, asked about the validated arguments, which come back
/// for the body with the ledger approval the call consumed, if any. Only
/// the hooks' calls are generic: the rest ([`policy_asks`], [`pending`])
/// is compiled once for every tool.
async fn ask_hooks<T: Tool>(
    env: &Env<'_>,
    args: T,
    asked: Option<bool>,
) -> Result<(T, Option<ApprovalId>), CallError> {
    let Served {
        key, name, effect, ..
    } = *env.served;
    let approvals = env.services.approvals.as_ref();
    let secrets = env.validation.secrets();
    let invocation = Invocation::new(args, key, name, effect, approvals, env.preflight, secrets);
    let policy_asks = policy_asks(env, &invocation, asked)?;
    if !T::PUBLIC {
        authorized(T::__authorize(env.ctx, &invocation).await, key)?;
    }
    let approved = if effect.requires_approval() {
        approved(T::__approve(env.ctx, &invocation).await, key)?
    } else if policy_asks {
        // Boxed: it would make every call's future larger.
        Box::pin(ask_ledger_for(env, &invocation)).await?
    } else {
        true
    };
    if !approved {
        return Err(pending(&invocation));
    }
    Ok(invocation.into_parts())
}

/// Leaves the validated arguments for the call's event, then asks the
/// policy about them (unless `asked` says what it answered): whether it
/// wants an approval.
fn policy_asks(env: &Env<'_>, call: &dyn Ledgered, asked: Option<bool>) -> Result<bool, CallError> {
    if let Some(watch) = env.watch {
        let arguments = call.canonical_arguments().clone();
        watch.findings().validated(arguments, Some(call.digest()));
    }
    match asked {
        Some(asks) => Ok(asks),
        None => env
            .gate
            .check(env.served.key, &|| call.canonical_arguments(), env.watch),
    }
}

/// Step 4 for a tool without an `approve` hook that the policy asks about:
/// the executor's ledger decides, for the caller it can identify; without
/// either, the call waits for a person (`false`).
async fn ask_ledger_for(env: &Env<'_>, call: &dyn Ledgered) -> Result<bool, CallError> {
    let key = env.served.key;
    let approvals = env.services.approvals.as_ref();
    match (approvals, env.services.principal.and_then(|id| id(env.ctx))) {
        (Some(_), Some(requester)) => {
            let verdict = ask_ledger(requester, call)
                .await
                .map_err(|error| CallError::Hook {
                    key,
                    hook: HookKind::Approve,
                    source: error.into(),
                });
            approved(verdict, key)
        }
        _ => Ok(false),
    }
}

/// The error of a call that waits for a person's approval.
fn pending(call: &dyn Ledgered) -> CallError {
    CallError::ApprovalRequired(Box::new(call.approval_request()))
}
