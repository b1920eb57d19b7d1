//! Steps 2 to 7 of a call, in order: read the arguments, authorize,
//! approve, open the scope, run the body, close the scope with how it
//! ended. Ordinary code, compiled once for every tool: a tool's own types
//! are met only through its seam (seam.rs), which calls these.

use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;

use super::seam::{Asking, Call, Declared, ScopeSlot};
use super::watch::Reread;
use super::{Env, Gate, Served, Watch, admission, arguments, body};
use crate::approval::Settlement;
use crate::error::{CallError, HookKind};
use crate::hook::{approved, authorized};
use crate::invocation::Ledgered;
use crate::principal::ask_ledger;
use crate::request::ApprovalId;
use crate::scope::{Outcome, ScopeGuard};
use crate::secret::SecretValues;
use crate::tool_str::ToolStr;
use crate::util::BoxFuture;
use crate::util::panic::CatchUnwind;

/// The secret values among a call's JSON `arguments`, when its tool has
/// secret properties.
#[inline]
pub(super) fn secret_values(env: &Env<'_>, arguments: &Value) -> Option<SecretValues> {
    let secrets = env.validation.secrets();
    (!secrets.is_empty()).then(|| secrets.values(arguments))
}

/// The secret values among a typed call's arguments (`call`), when its
/// tool has secret properties.
pub(super) fn secrets_of(env: &Env<'_>, call: &dyn Ledgered) -> Option<SecretValues> {
    let secrets = env.validation.secrets();
    (!secrets.is_empty()).then(|| secrets.values(call.canonical_arguments()))
}

/// `call`, or, for a tool with `#[secret]` properties (`secrets`), `call`
/// with those values scrubbed from its error, a panic's (a hook's, say)
/// included: caught here, before the message leaves for the call's span,
/// event or caller. A tool without pays one check of an empty list.
#[inline]
pub(super) fn keeping_secrets<'a>(
    env: Env<'a>,
    secrets: Option<SecretValues>,
    call: BoxFuture<'a, Result<Value, CallError>>,
) -> BoxFuture<'a, Result<Value, CallError>> {
    match secrets {
        None => call,
        Some(secrets) => Box::pin(scrubbed(&env.0.served.key, secrets, call)),
    }
}

/// See [`keeping_secrets`].
async fn scrubbed<'a>(
    key: &'a ToolStr,
    secrets: SecretValues,
    call: BoxFuture<'a, Result<Value, CallError>>,
) -> Result<Value, CallError> {
    CatchUnwind::new(call)
        .await
        .unwrap_or_else(|message| {
            Err(CallError::Panicked {
                key: key.clone(),
                message,
            })
        })
        .map_err(|error| error.scrubbed(&secrets))
}

/// Step 2 for JSON arguments: validated, then read by `deserialize` (which
/// keeps them). `reread` reads them again for the event of a call that
/// asks no hook.
pub(super) fn read(
    env: Env<'_>,
    declared: Declared,
    arguments: Value,
    reread: Reread,
    deserialize: &mut arguments::Deserialize<'_>,
) -> Result<(), CallError> {
    let read = arguments::check(&env, &env.served.key, &arguments, deserialize);
    if let Some(watch) = env.watch {
        match (read.is_ok(), declared.hookless()) {
            (false, _) => watch.findings().unreadable(arguments),
            (true, true) => watch.findings().sent(arguments, reread),
            (true, false) => {}
        }
    }
    read
}

/// The arguments step 2 read: `read` is `Some` once [`read`] succeeded.
#[inline]
pub(super) fn was_read<A>(env: Env<'_>, read: Option<A>) -> Result<A, CallError> {
    read.ok_or_else(|| arguments::unread(&env.served.key))
}

/// Step 2 for a tool built at run time: it has no type to read its
/// arguments into, so they are checked against its schema in full.
pub(super) fn validate(env: Env<'_>, arguments: &Value) -> Result<(), CallError> {
    let validated = arguments::validate(&env, &env.served.key, arguments);
    if let (Err(_), Some(watch)) = (&validated, env.watch) {
        watch.findings().unreadable(arguments.clone());
    }
    validated
}

/// Step 2 for typed arguments ([`Executor::call`](crate::Executor::call)).
pub(super) fn check_typed(
    env: Env<'_>,
    declared: Declared,
    call: &dyn Ledgered,
) -> Result<(), CallError> {
    let checked = arguments::check_typed(&env, &env.served.key, call);
    if let Some(watch) = env.watch {
        match &checked {
            Err(_) => watch
                .findings()
                .unreadable(call.canonical_arguments().clone()),
            // No hook will digest them: the call's event needs them now.
            Ok(()) if declared.hookless() => {
                let arguments = call.canonical_arguments().clone();
                watch.findings().validated(arguments, Some(call.digest()));
            }
            Ok(()) => {}
        }
    }
    checked
}

/// Steps 3 to 7 of a call whose arguments are read, held in `call`: the
/// output of its body serialized, or for a typed call put into the
/// caller's slot (and `null` returned). In a preflight, steps 3 and 4
/// only, and `null`. The call's scope, when it opens one, is kept in
/// `scope`, which outlives `call`.
///
/// The call's key, name, effect and timeout are the tool's as served
/// (`env.served`): a tool mounted under a namespace answers with its
/// namespaced key (`traced` renames what generated code names by its
/// declared key).
pub(super) async fn run<'a>(
    env: Env<'a>,
    declared: Declared,
    scope: &'a mut ScopeSlot,
    mut call: Pin<&mut (dyn Call<'a> + 'a)>,
) -> Result<Value, CallError> {
    let key = &env.0.served.key;
    // Steps 3 and 4. A tool with no hook to ask meets a policy that
    // needs no arguments here, without taking them apart (or building
    // their invocation).
    let asks = match env.gate {
        _ if env.preflight || env.keyed.is_some() => Some(None),
        Gate::Open if declared.hookless() => None,
        Gate::Ruled(_) if declared.hookless() => {
            match env.gate.check(key, &|| &Value::Null, None)? {
                false => None,
                true => Some(Some(true)),
            }
        }
        _ => Some(None),
    };
    let consumed = match asks {
        None => None,
        Some(asked) => {
            let Some(asking) = call.as_mut().asking() else {
                return Err(body::out_of_order(
                    key.clone(),
                    "hooks asked after the body started",
                ));
            };
            match ask_hooks(&env, declared, asking, asked).await? {
                Asked::Run(consumed) => consumed,
                Asked::Repeated(recorded) => return *recorded,
            }
        }
    };
    if env.preflight {
        return Ok(Value::Null);
    }
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
    if let Some(keyed) = env.keyed {
        keyed.start();
    }
    // Steps 5 to 7. An audited call is recorded after its body and before
    // its scope closes: a record that fails fails the call, and its
    // finalizers see an error (they roll back). (One refused before, its
    // recording records when it ends.)
    let output = if declared.injects {
        let guard: &'a ScopeGuard = scope.insert(ScopeGuard::open(&env.services.container));
        call.as_mut().start(env.ctx, Some(guard.scope()));
        let (result, outcome) = body::run(key, timeout, waited, call.as_mut()).await;
        // Before the finalizers run: a body its timeout stopped may still
        // hold what they need (a lock, an injected value).
        call.as_mut().end_body();
        // Boxed, and handed the result: only audited calls carry the
        // record's state.
        let audit = audited(&env, declared);
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
        // No scope to close: the body is dropped with the call.
        call.as_mut().start(env.ctx, None);
        let result = body::run(key, timeout, waited, call.as_mut()).await.0;
        match audited(&env, declared) {
            None => result,
            Some(audit) => Box::pin(recorded(audit, &env, result)).await,
        }
    };
    drop(turn);
    if let Some(id) = consumed {
        // Boxed: only calls that used a ledger's approval settle one.
        Box::pin(settle(&env, id, settlement(&output))).await;
    }
    if env.keyed.is_some() {
        // Boxed: only calls sent with an idempotency key record one.
        Box::pin(finish_keyed(&env, &output)).await;
    }
    output
}

/// The recording that follows an audited call: only for `write` and
/// `destructive` tools (as declared and as served), on an executor with
/// an audit trail (its recording then records the call there).
#[inline]
fn audited<'a>(env: &Env<'a>, declared: Declared) -> Option<&'a dyn Watch> {
    if !declared.effect.requires_approval() || !env.served.effect.requires_approval() {
        return None;
    }
    env.watch.filter(|watch| watch.audits())
}

/// Records a call as it ended (`result`).
async fn ran(
    audit: &dyn Watch,
    env: &Env<'_>,
    result: Result<(), &CallError>,
) -> Result<(), CallError> {
    // Recorded here: not again when the call ends.
    _ = audit.findings().audited.set(());
    audit.audit(env.validation.secrets(), result).await
}

/// Records a call whose body ran, as it ended, and returns its result:
/// `AuditFailed` instead when the record fails.
async fn recorded<O>(
    audit: &dyn Watch,
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
    audit: &dyn Watch,
    env: &Env<'_>,
    closed: Result<O, CallError>,
) -> Result<O, CallError> {
    _ = ran(audit, env, closed.as_ref().map(|_| ())).await;
    closed
}

/// Records how a call sent an idempotency key ended, under its key.
async fn finish_keyed(env: &Env<'_>, output: &Result<Value, CallError>) {
    if let Some(keyed) = env.keyed {
        keyed.finish(output).await;
    }
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

/// What steps 3 and 4 decided about a call allowed to go on.
enum Asked {
    /// Run it, with the ledger approval it consumed, if any.
    Run(Option<ApprovalId>),
    /// A repeat of a call with the same idempotency key: its answer, the
    /// first call's (boxed: it is rare).
    Repeated(Box<Result<Value, CallError>>),
}

/// Steps 3 and 4: the policy (unless `asked` says what it answered), then
/// the tool's hooks, asked about the validated arguments; between the two
/// hooks, the idempotency key of a write sent one, so that a repeat meets
/// `authorize` again but asks for no second approval.
async fn ask_hooks(
    env: &Env<'_>,
    declared: Declared,
    call: &dyn Asking,
    asked: Option<bool>,
) -> Result<Asked, CallError> {
    let Served { key, effect, .. } = env.served;
    let policy_asks = policy_asks(env, call, asked)?;
    if !declared.public {
        authorized(call.authorize(env.ctx).await, key)?;
    }
    if env.keyed.is_some() && effect.requires_approval() {
        // Boxed: only calls sent with an idempotency key claim one.
        return Box::pin(ask_approve_claimed(env, call)).await;
    }
    let approved = if effect.requires_approval() {
        approved(call.approve(env.ctx).await, key)?
    } else if policy_asks {
        // Boxed: it would make every call's future larger.
        Box::pin(ask_ledger_for(env, call)).await?
    } else {
        true
    };
    if !approved {
        return Err(pending(call));
    }
    Ok(Asked::Run(call.consumed()))
}

/// Step 4 of a write sent an idempotency key: the key claimed first, so
/// that a repeat asks for no second approval, then `approve` asked (a
/// refusal gives the key back: a repeat, once approved, may run).
async fn ask_approve_claimed(env: &Env<'_>, call: &dyn Asking) -> Result<Asked, CallError> {
    if let Err(repeated) = claim(env, call).await {
        return Ok(Asked::Repeated(Box::new(repeated)));
    }
    let refused = match approved(call.approve(env.ctx).await, &env.served.key) {
        Ok(true) => return Ok(Asked::Run(call.consumed())),
        Ok(false) => pending(call),
        Err(refused) => refused,
    };
    if let Some(keyed) = env.keyed {
        keyed.release().await;
    }
    Err(refused)
}

/// Claims the idempotency key of a write sent one (on an executor with
/// an [`Idempotency`](crate::idempotency::Idempotency), outside a
/// preflight), kept in `env.keyed`; or the answer of a repeat.
async fn claim(env: &Env<'_>, call: &dyn Ledgered) -> Result<(), Result<Value, CallError>> {
    let (Some(keyed), Some(idempotency)) = (env.keyed, &env.services.idempotency) else {
        return Ok(());
    };
    if env.preflight {
        return Ok(());
    }
    let key = &env.served.key;
    let actor = env.services.principal.and_then(|id| id(env.ctx));
    let claimed = idempotency.claim(actor.unwrap_or(""), keyed.key, key, call.digest());
    match claimed.await {
        Ok(held) => {
            keyed.hold(held);
            Ok(())
        }
        Err(repeated) => Err(repeated.map_err(|refusal| CallError::NotRepeated {
            key: key.clone(),
            idempotency_key: keyed.key.into(),
            refusal,
        })),
    }
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
            .check(&env.served.key, &|| call.canonical_arguments(), env.watch),
    }
}

/// Step 4 for a tool without an `approve` hook that the policy asks about:
/// the executor's ledger decides, for the caller it can identify; without
/// either, the call waits for a person (`false`).
async fn ask_ledger_for(env: &Env<'_>, call: &dyn Ledgered) -> Result<bool, CallError> {
    let key = &env.served.key;
    let approvals = env.services.approvals.as_ref();
    match (approvals, env.services.principal.and_then(|id| id(env.ctx))) {
        (Some(_), Some(requester)) => {
            let verdict = ask_ledger(requester, call)
                .await
                .map_err(|error| CallError::Hook {
                    key: key.clone(),
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
