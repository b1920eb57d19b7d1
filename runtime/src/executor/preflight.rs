//! Asking whether a call would run, without running it.

use std::any::Any;

use serde_json::Value;

use crate::error::CallError;
use crate::pipeline::{Env, Surroundings};
use crate::request::ApprovalRequest;
use crate::util::panic::CatchUnwind;

use super::Executor;

/// What [`Executor::preflight`] found: whether the call would run now.
#[derive(Debug)]
#[non_exhaustive]
pub enum Preflight {
    /// Every check passed: invoked now, the call would run.
    WouldRun,
    /// A person must approve this exact call first; when a ledger recorded
    /// the request, it carries the id to decide it by.
    NeedsApproval(Box<ApprovalRequest>),
    /// Refused: by the policy, the `authorize` hook, or the `approve`
    /// hook (a rejected request, say). The error says which.
    Denied(CallError),
}

impl Executor {
    /// Whether a call of `name` with `arguments` would run for `ctx`,
    /// without running anything: the arguments are validated, then the
    /// policy and the hooks are asked, as for [`invoke`](Self::invoke).
    /// An agent loop or a UI asks before it acts.
    ///
    /// Hooks see [`Invocation::is_preflight`](crate::Invocation::is_preflight);
    /// the ledger hook looks for an approval without consuming it, and
    /// records the request a person must decide (once per requester and
    /// call). A name the handle cannot call, arguments the schema rejects,
    /// a disabled tool or a failing hook are this method's error.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, Invocation, executor::{Preflight, Verdict}};
    ///
    /// struct Actor { admin: bool }
    ///
    /// /// Refund an order.
    /// #[tool(key = "orders.refund", effect = write, authorize = staff, approve = by_amount)]
    /// async fn refund(order_id: u64, cents: u64) -> bool { true }
    ///
    /// async fn staff(actor: &Actor, _: &Invocation<'_, RefundArgs>) -> bool { actor.admin }
    ///
    /// async fn by_amount(_: &Actor, call: &Invocation<'_, RefundArgs>) -> Verdict {
    ///     if call.cents <= 5_000 { Verdict::Allow } else { Verdict::Pending }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<RefundArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let admin = Actor { admin: true };
    ///
    /// let small = json!({"order_id": 1, "cents": 500});
    /// let asked = executor.preflight("refund", small, &admin).await.unwrap();
    /// assert!(matches!(asked, Preflight::WouldRun));
    ///
    /// let large = json!({"order_id": 1, "cents": 90_000});
    /// let asked = executor.preflight("refund", large, &admin).await.unwrap();
    /// let Preflight::NeedsApproval(request) = asked else { panic!("{asked:?}") };
    /// assert_eq!(request.arguments["cents"], 90_000);
    ///
    /// let guest = Actor { admin: false };
    /// let asked = executor.preflight("refund", json!({"order_id": 1, "cents": 5}), &guest);
    /// assert!(matches!(asked.await.unwrap(), Preflight::Denied(_)));
    /// # }
    /// ```
    pub async fn preflight<C: Any + Send + Sync>(
        &self,
        name: &str,
        arguments: Value,
        ctx: &C,
    ) -> Result<Preflight, CallError> {
        let found = self.find(name)?;
        let tool = found.tool();
        let surroundings = Surroundings {
            preflight: true,
            ..self.surroundings(&found, None, ctx)
        };
        let asked = CatchUnwind::new(tool.call(Env(&surroundings), arguments))
            .await
            .unwrap_or_else(|message| {
                Err(CallError::Panicked {
                    key: tool.served().key.clone(),
                    message,
                })
            })
            .map_err(|error| error.served_as(&tool.served().key));
        match asked {
            Ok(_) => Ok(Preflight::WouldRun),
            Err(CallError::ApprovalRequired(request)) => Ok(Preflight::NeedsApproval(request)),
            Err(
                error @ (CallError::Denied { .. }
                | CallError::PolicyDenied { .. }
                | CallError::NotApproved { .. }),
            ) => Ok(Preflight::Denied(error)),
            Err(error) => Err(error),
        }
    }
}
