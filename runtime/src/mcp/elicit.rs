//! Approval inside MCP hosts: a call that waits for approval asks the
//! person at the client through `elicitation/create`, records their
//! decision in the ledger, and runs (or refuses) through the pipeline again.

use std::time::Duration;

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::ElicitationMode;
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use crate::approval::{Approval, ApprovalId, Approvals, LedgerError};
use crate::error::CallError;
use crate::executor::Executor;
use crate::principal::Principal;
use crate::request::ApprovalRequest;
use crate::util::BoxFuture;
use crate::util::excerpt::Excerpt;

/// At most how many characters of a call's arguments the person is shown.
const SHOWN_ARGUMENTS: usize = 2_000;

/// How the server records a decision as the caller `C`.
type Decide<C> = for<'a> fn(
    &'a Approvals,
    ApprovalId,
    &'a C,
    bool,
    &'a str,
) -> BoxFuture<'a, Result<Approval, LedgerError>>;

/// Asking the person in the host, for callers of type `C`.
pub(super) struct Elicitation<C> {
    record: Decide<C>,
    timeout: Duration,
}

impl<C: Principal> Elicitation<C> {
    pub(super) fn new(timeout: Duration) -> Self {
        Elicitation {
            record: decide_as::<C>,
            timeout,
        }
    }
}

fn decide_as<'a, C: Principal>(
    approvals: &'a Approvals,
    id: ApprovalId,
    by: &'a C,
    approve: bool,
    reason: &'a str,
) -> BoxFuture<'a, Result<Approval, LedgerError>> {
    Box::pin(async move {
        if approve {
            approvals.approve(id, by, reason).await
        } else {
            approvals.reject(id, by, reason).await
        }
    })
}

impl<C: Send + Sync + 'static> Elicitation<C> {
    /// The call that answered `waiting`, decided by the person at the
    /// request's peer when the client can ask them and the ledger lets the
    /// caller decide their own request; otherwise `waiting` unchanged.
    /// `None` when the request was cancelled meanwhile.
    ///
    /// `arguments` are the call's own, for a tool with `#[secret]`
    /// properties, which its request shows masked; the call runs again
    /// with them (the request's are enough for any other tool), and with
    /// its idempotency key, if it was sent one.
    pub(super) fn decide<'a>(
        &'a self,
        executor: &'a Executor,
        waiting: Result<Value, CallError>,
        arguments: Option<Value>,
        ctx: &'a C,
        request: &'a RequestContext<RoleServer>,
        idempotency_key: Option<&'a str>,
    ) -> BoxFuture<'a, Option<Result<Value, CallError>>> {
        Box::pin(async move {
            let decide = self.ask_and_run(
                executor,
                waiting,
                arguments,
                ctx,
                &request.peer,
                idempotency_key,
            );
            tokio::select! {
                decided = decide => Some(decided),
                () = request.ct.cancelled() => None,
            }
        })
    }

    async fn ask_and_run(
        &self,
        executor: &Executor,
        waiting: Result<Value, CallError>,
        arguments: Option<Value>,
        ctx: &C,
        peer: &Peer<RoleServer>,
        idempotency_key: Option<&str>,
    ) -> Result<Value, CallError> {
        let request = match waiting {
            Err(CallError::ApprovalRequired(request)) => request,
            other => return other,
        };
        let (Some(id), Some(approvals)) = (request.id, executor.approvals()) else {
            return Err(CallError::ApprovalRequired(request));
        };
        let can_ask = peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form);
        if !can_ask || !approvals.allows_self_approval() {
            return Err(CallError::ApprovalRequired(request));
        }
        let Some((approve, note)) = ask(peer, &request, self.timeout).await else {
            return Err(CallError::ApprovalRequired(request));
        };
        let reason = match (approve, note) {
            (_, Some(note)) => note,
            (true, None) => "approved in the MCP client".to_owned(),
            (false, None) => "declined in the MCP client".to_owned(),
        };
        if let Err(error) = (self.record)(approvals, id, ctx, approve, &reason).await {
            tracing::warn!(approval = id.0, %error, "could not record the decision made in the MCP client");
            return Err(CallError::ApprovalRequired(request));
        }
        // Through the pipeline again: the approval is consumed and the call
        // runs, or the rejection refuses it.
        let found = executor.find_call(&request.name, ctx)?;
        let arguments = arguments.unwrap_or(request.arguments);
        executor
            .invoke_found(found, arguments, ctx, idempotency_key)
            .await
    }
}

/// What the person answered: approve or decline, with the note they
/// wrote; or nothing (dismissed, timed out, or the client failed).
async fn ask(
    peer: &Peer<RoleServer>,
    request: &ApprovalRequest,
    timeout: Duration,
) -> Option<(bool, Option<String>)> {
    let schema = ElicitationSchema::builder()
        .optional_string("note")
        .build()
        .ok()?;
    // `#[secret]` values are masked in the request already.
    let arguments = request.arguments.to_string();
    let message = format!(
        "Approve this call?\n\ntool: {} ({})\narguments: {}\ndigest: {}",
        request.name,
        request.key,
        Excerpt::prefix(&arguments, SHOWN_ARGUMENTS),
        request.digest,
    );
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    };
    match peer
        .create_elicitation_with_timeout(params, Some(timeout))
        .await
    {
        Ok(result) => {
            let note = result
                .content
                .as_ref()
                .and_then(|content| content.get("note"))
                .and_then(Value::as_str)
                .filter(|note| !note.trim().is_empty())
                .map(|note| Excerpt::prefix(note, SHOWN_ARGUMENTS).to_string());
            match result.action {
                ElicitationAction::Accept => Some((true, note)),
                ElicitationAction::Decline => Some((false, note)),
                _ => None,
            }
        }
        Err(error) => {
            tracing::warn!(%error, "asking the MCP client's person for approval failed");
            None
        }
    }
}
