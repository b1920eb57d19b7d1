//! Steps 2 to 7 of a call, in order: read the arguments, authorize,
//! approve, open the scope, run the body, close the scope with how it
//! ended. Ordinary code, compiled once for every tool: a tool's own types
//! are met only through its seam (seam.rs).

use std::time::Duration;

use serde_json::Value;

use super::dynamic::Arguments;
use super::seam::{Call, Called, Out, Parts, Seam};
use super::{Env, Gate, Served, Watch, admission, arguments, body};
use crate::approval::Settlement;
use crate::error::{CallError, HookKind};
use crate::hook::{approved, authorized};
use crate::invocation::Ledgered;
use crate::principal::ask_ledger;
use crate::request::ApprovalId;
use crate::scope::{Outcome, ScopeGuard};
use crate::secret::SecretValues;
use crate::util::BoxFuture;
use crate::util::panic::CatchUnwind;

/// What a call starts from.
pub(crate) enum Input<'a> {
    /// A model's or client's JSON arguments.
    Json(Value),
    /// Typed arguments ([`Executor::call`](crate::Executor::call)), in their
    /// invocation, and the caller's slot for the output.
    Typed(Called<'a>, Out<'a>),
}

/// Steps 2 to 7 of a call: its output serialized, or for a typed call put
/// into the caller's slot (and `null` returned). In a preflight, steps 2 to
/// 4 only, and `null`. For a tool with `#[secret]` properties, the call's
/// secret values are scrubbed from its error ([`keeping_secrets`]); a tool
/// without pays one check of an empty list.
pub(crate) async fn run<'a>(env: Env<'a>, input: Input<'a>) -> Result<Value, CallError> {
    match secret_values(&env, &input) {
        None => steps(env, input).await,
        Some(values) => keeping_secrets(env.served.key, values, Box::pin(steps(env, input))).await,
    }
}

/// The secret values among `input`, when its tool has secret properties.
fn secret_values(env: &Env<'_>, input: &Input<'_>) -> Option<SecretValues> {
    let secrets = env.validation.secrets();
    if secrets.is_empty() {
        return None;
    }
    Some(match input {
        Input::Json(arguments) => secrets.values(arguments),
        Input::Typed(call, _) => secrets.values(call.canonical_arguments()),
    })
}

/// [`run`] without the scrubbing.
///
/// The call's key, name, effect and timeout are the tool's as served
/// (`env.served`): a tool mounted under a namespace answers with its
/// namespaced key (`traced` renames what generated code names by its
/// declared key).
async fn steps<'a>(env: Env<'a>, input: Input<'a>) -> Result<Value, CallError> {
    let key = env.served.key;
    let seam = env.seam;
    // Step 2: the arguments, checked against the schema the catalog advertises.
    let (call, out) = match input {
        Input::Json(arguments) => (read(&env, arguments)?, None),
        Input::Typed(call, out) => {
            check_typed(&env, &*call)?;
            (call, out)
        }
    };
    // Steps 3 and 4. A tool with no hook to ask meets a policy that
    // needs no arguments here, without taking them apart.
    if env.preflight {
        return ask_hooks(&env, &*call, None).await.map(|_| Value::Null);
    }
    let hookless = seam.hookless();
    let consumed = match env.gate {
        Gate::Open if hookless => None,
        Gate::Ruled(_) if hookless => match env.gate.check(key, &|| &Value::Null, None)? {
            false => None,
            true => ask_hooks(&env, &*call, Some(true)).await?,
        },
        _ => ask_hooks(&env, &*call, None).await?,
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
    let output = if seam.injects() {
        let guard = ScopeGuard::open(&env.services.container);
        // The body is dropped when it ends, before the finalizers run: a
        // body its timeout stopped may still hold what they need (a lock,
        // an injected value).
        let body = call.run(env.ctx, Some(guard.scope()), out);
        let (result, outcome) = body::run(key, timeout, waited, body).await;
        // Boxed, and handed the result: only audited calls carry the
        // record's state.
        let audit = audited(&env, seam);
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
        let body = call.run(env.ctx, None, out);
        let result = body::run(key, timeout, waited, body).await.0;
        match audited(&env, seam) {
            None => result,
            Some(audit) => Box::pin(recorded(audit, &env, result)).await,
        }
    };
    drop(turn);
    if let Some(id) = consumed {
        // Boxed: only calls that used a ledger's approval settle one.
        Box::pin(settle(&env, id, settlement(&output))).await;
    }
    output
}

/// Step 2 for JSON arguments: validated and read into an invocation of the
/// tool. A tool built at run time has no type to read them into: they are
/// checked against its schema in full.
fn read<'a>(env: &Env<'a>, arguments: Value) -> Result<Called<'a>, CallError> {
    let key = env.served.key;
    let parts = Parts::of(*env);
    match env.seam {
        Seam::Declared(thunks) => {
            let read = arguments::read(env, key, &arguments, &mut |value| {
                (thunks.read)(value, parts)
            });
            if let Some(watch) = env.watch {
                sent(watch, read.is_ok(), env.seam, arguments);
            }
            read
        }
        Seam::Dynamic(tool) => {
            if let Err(error) = arguments::validate(env, key, &arguments) {
                if let Some(watch) = env.watch {
                    watch.findings().unreadable(arguments);
                }
                return Err(error);
            }
            let args = Arguments::new(arguments, tool.clone());
            Ok(Box::new(parts.invocation(args)))
        }
    }
}

/// Leaves the JSON arguments of a watched call for its event, as they
/// were sent: when they are not `valid`, to show as they are; when they
/// are and no invocation will serialize them, for the event to read them
/// again off the call's thread.
#[inline(never)]
fn sent(watch: &dyn Watch, valid: bool, seam: Seam<'_>, arguments: Value) {
    match (valid, seam) {
        (false, _) => watch.findings().unreadable(arguments),
        (true, Seam::Declared(thunks)) if seam.hookless() => {
            watch.findings().sent(arguments, thunks.reread)
        }
        (true, _) => {}
    }
}

/// Step 2 for typed arguments ([`Executor::call`](crate::Executor::call)).
fn check_typed(env: &Env<'_>, call: &dyn Call<'_>) -> Result<(), CallError> {
    let checked = arguments::check_typed(env, env.served.key, call);
    if let Some(watch) = env.watch {
        match &checked {
            Err(_) => watch
                .findings()
                .unreadable(call.canonical_arguments().clone()),
            // No hook will digest them: the call's event needs them now.
            Ok(()) if env.seam.hookless() => {
                let arguments = call.canonical_arguments().clone();
                watch.findings().validated(arguments, Some(call.digest()));
            }
            Ok(()) => {}
        }
    }
    checked
}

/// The recording that follows an audited call: only for `write` and
/// `destructive` tools (as declared and as served), on an executor with
/// an audit trail (its recording then records the call there).
fn audited<'a>(env: &Env<'a>, seam: Seam<'_>) -> Option<&'a dyn Watch> {
    if !seam.declared_effect().requires_approval() || !env.served.effect.requires_approval() {
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

/// `call`, a call of the tool `key` whose secret values are `secrets`,
/// with those values scrubbed from its error, a panic's (a hook's, say)
/// included: caught here, before the message leaves for the call's span,
/// event or caller.
async fn keeping_secrets(
    key: &'static str,
    secrets: SecretValues,
    call: BoxFuture<'_, Result<Value, CallError>>,
) -> Result<Value, CallError> {
    CatchUnwind::new(call)
        .await
        .unwrap_or_else(|message| Err(CallError::Panicked { key, message }))
        .map_err(|error| error.scrubbed(&secrets))
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
/// the tool's hooks, asked about the validated arguments; the ledger
/// approval the call consumed, if any.
async fn ask_hooks(
    env: &Env<'_>,
    call: &dyn Call<'_>,
    asked: Option<bool>,
) -> Result<Option<ApprovalId>, CallError> {
    let Served { key, effect, .. } = *env.served;
    let policy_asks = policy_asks(env, call, asked)?;
    if !env.seam.public() {
        authorized(call.authorize(env.ctx).await, key)?;
    }
    let approved = if effect.requires_approval() {
        approved(call.approve(env.ctx).await, key)?
    } else if policy_asks {
        ask_ledger_for(env, call).await?
    } else {
        true
    };
    if !approved {
        return Err(pending(call));
    }
    Ok(call.consumed())
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
