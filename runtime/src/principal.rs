//! Who asks and who decides: the application's context as an actor, and
//! the ready-made `approve` hook over the executor's approval ledger.

use std::future::Future;

use crate::approval::{Admission, Approval, Approvals, LedgerError};
use crate::context::ErasedContext;
use crate::hook::Verdict;
use crate::invocation::{Invocation, Ledgered, Ticket};
use crate::request::ApprovalId;

/// Someone who asks for, or decides on, an approval: the application's
/// context, giving the actor's id and roles.
///
/// Implement it on the context your tools receive; then any `write` or
/// `destructive` tool can name the ready-made hook
/// [`Principal::approval_ledger`] as its `approve` hook, and the same
/// context decides requests through [`Approvals::approve`].
///
/// ```
/// use toolwright::Principal;
///
/// struct Caller { name: String, manager: bool }
///
/// impl Principal for Caller {
///     fn id(&self) -> &str { &self.name }
///     fn has_role(&self, role: &str) -> bool { role == "manager" && self.manager }
/// }
///
/// let bob = Caller { name: "bob".into(), manager: true };
/// assert_eq!(bob.id(), "bob");
/// assert!(bob.has_role("manager"));
/// ```
pub trait Principal: Send + Sync + 'static {
    /// The actor's stable id: what a request records as its requester and
    /// a decision as its decider.
    fn id(&self) -> &str;

    /// Whether the actor holds `role` (none, unless implemented).
    fn has_role(&self, role: &str) -> bool {
        let _ = role;
        false
    }

    /// The ready-made `approve` hook: name it as
    /// `approve = YourContext::approval_ledger`, with this trait in scope
    /// there (`use toolwright::Principal;`): a trait's method is found
    /// through a type only where the trait is imported.
    ///
    /// Against the executor's [`Approvals`] (see
    /// [`ExecutorBuilder::approvals`](crate::executor::ExecutorBuilder::approvals)),
    /// for the calling actor ([`id`](Self::id)):
    /// - an approved, unexpired request of this actor for exactly this
    ///   call is consumed, and the call runs; when it ends, its outcome is
    ///   settled in the ledger;
    /// - a request a person rejected refuses the call
    ///   ([`CallError::NotApproved`](crate::CallError::NotApproved)) until
    ///   it expires;
    /// - otherwise the request is recorded (once per actor and call) and
    ///   the call answers [`CallError::ApprovalRequired`](crate::CallError::ApprovalRequired)
    ///   with its id.
    ///
    /// A ledger that cannot be reached, or an executor with none, fails the
    /// call closed ([`CallError::Hook`](crate::CallError::Hook) with a
    /// [`LedgerError`]). In a [preflight](crate::Executor::preflight) the
    /// hook only looks: nothing is consumed.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::approval::MemoryLedger;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, Principal, approval::Approvals};
    ///
    /// struct Caller(&'static str);
    /// impl Principal for Caller {
    ///     fn id(&self) -> &str { self.0 }
    /// }
    ///
    /// /// Publish a post.
    /// #[tool(key = "posts.publish", effect = write, authorize = public,
    ///        approve = Caller::approval_ledger)]
    /// async fn publish(post_id: u64) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<PublishArgs>().build().unwrap();
    ///
    /// // Without a ledger, the hook refuses rather than guess.
    /// let bare = Executor::new(catalog.clone(), Container::default()).unwrap();
    /// let refused = bare.invoke("publish", json!({"post_id": 1}), &Caller("ann")).await;
    /// assert!(matches!(refused, Err(CallError::Hook { .. })));
    ///
    /// let approvals = Approvals::new(MemoryLedger::new());
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .approvals(approvals.clone())
    ///     .build()
    ///     .unwrap();
    /// let asked = executor.invoke("publish", json!({"post_id": 1}), &Caller("ann")).await;
    /// let Err(CallError::ApprovalRequired(request)) = asked else { panic!("{asked:?}") };
    /// assert_eq!(request.requested_by.as_deref(), Some("ann"));
    ///
    /// approvals.reject(request.id.unwrap(), &Caller("ed"), "not this one").await.unwrap();
    /// let rejected = executor.invoke("publish", json!({"post_id": 1}), &Caller("ann")).await;
    /// assert!(matches!(rejected, Err(CallError::NotApproved { .. })));
    /// # }
    /// ```
    fn approval_ledger<'a, A: Sync>(
        &'a self,
        call: &'a Invocation<'a, A>,
    ) -> impl Future<Output = Result<Verdict, LedgerError>> + Send + 'a
    where
        Self: Sized,
    {
        ask_ledger(self.id(), call)
    }
}

/// Who calls, from the caller's context: the [`Principal::id`] of the
/// context type an executor was told about
/// ([`ExecutorBuilder::principal`](crate::executor::ExecutorBuilder::principal)).
pub(crate) type Identify = for<'a> fn(ErasedContext<'a>) -> Option<&'a str>;

/// [`Identify`] for contexts of type `C`: `None` for a context of another
/// type (whose call then waits with nobody to record its request).
pub(crate) fn identify<C: Principal>(ctx: ErasedContext<'_>) -> Option<&str> {
    // The key only names a tool in the mismatch error, which is dropped.
    ctx.downcast::<C>("").ok().map(Principal::id)
}

/// The ledger hook's work, for the actor `requested_by`.
pub(crate) async fn ask_ledger(
    requested_by: &str,
    call: &dyn Ledgered,
) -> Result<Verdict, LedgerError> {
    let approvals = call.approvals().ok_or(LedgerError::NoLedger)?;
    let digest = call.digest();
    let admission = approvals
        .admit(
            &digest,
            requested_by,
            || call.approval_request(),
            call.is_preflight(),
        )
        .await?;
    Ok(match admission {
        Admission::Run(consumed) => {
            if let Some(id) = consumed {
                call.set_ticket(Ticket::Consumed(id));
            }
            Verdict::Allow
        }
        Admission::Wait(approval) => {
            call.set_ticket(Ticket::Requested {
                id: approval.id,
                requested_by: approval.requested_by,
            });
            Verdict::Pending
        }
        Admission::Rejected => Verdict::Deny,
    })
}

impl Approvals {
    /// `by` approves the pending request `id`: the requester's identical
    /// call may now run, once, before the request expires.
    ///
    /// A typed error, and nothing decided, when the request is unknown,
    /// expired or no longer pending, when `by` asked for it (four eyes,
    /// unless [`allow_self_approval`](crate::approval::ApprovalsBuilder::allow_self_approval)),
    /// or when `by` lacks the [approver role](crate::approval::ApprovalsBuilder::approver_role).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::approval::{ApprovalId, LedgerError, MemoryLedger};
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, Principal, approval::Approvals};
    ///
    /// struct Staff { name: &'static str, manager: bool }
    /// impl Principal for Staff {
    ///     fn id(&self) -> &str { self.name }
    ///     fn has_role(&self, role: &str) -> bool { role == "manager" && self.manager }
    /// }
    ///
    /// /// Give a customer a discount.
    /// #[tool(key = "pricing.discount", effect = write, authorize = public,
    ///        approve = Staff::approval_ledger)]
    /// async fn discount(customer: u64, percent: u8) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let approvals = Approvals::builder(MemoryLedger::new()).approver_role("manager").build();
    /// let catalog = Catalog::builder().register::<DiscountArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .approvals(approvals.clone())
    ///     .build()
    ///     .unwrap();
    /// let clerk = Staff { name: "cleo", manager: false };
    /// let other_clerk = Staff { name: "carl", manager: false };
    /// let manager = Staff { name: "mia", manager: true };
    ///
    /// let args = json!({"customer": 7, "percent": 10});
    /// let Err(CallError::ApprovalRequired(request)) =
    ///     executor.invoke("discount", args.clone(), &clerk).await else { panic!() };
    /// let id = request.id.unwrap();
    ///
    /// let not_manager = approvals.approve(id, &other_clerk, "").await.unwrap_err();
    /// assert!(matches!(not_manager, LedgerError::NotAnApprover { .. }));
    /// let unknown = approvals.approve(ApprovalId(99), &manager, "").await.unwrap_err();
    /// assert!(matches!(unknown, LedgerError::Unknown(_)));
    ///
    /// let approved = approvals.approve(id, &manager, "loyal customer").await.unwrap();
    /// assert_eq!(approved.decided_by.as_deref(), Some("mia"));
    /// let twice = approvals.approve(id, &manager, "").await.unwrap_err();
    /// assert!(matches!(twice, LedgerError::NotPending { .. }));
    /// assert!(executor.invoke("discount", args, &clerk).await.is_ok());
    /// # }
    /// ```
    pub async fn approve(
        &self,
        id: ApprovalId,
        by: &impl Principal,
        reason: &str,
    ) -> Result<Approval, LedgerError> {
        self.decide(id, by.id(), &|role| by.has_role(role), reason, true)
            .await
    }

    /// `by` rejects the pending request `id`: the identical call is
    /// refused until the request would have expired. The same rules as
    /// [`approve`](Self::approve).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::approval::{MemoryLedger, Status};
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, Principal, approval::Approvals};
    ///
    /// struct Caller(&'static str);
    /// impl Principal for Caller { fn id(&self) -> &str { self.0 } }
    ///
    /// /// Wire money.
    /// #[tool(key = "bank.wire", effect = destructive, authorize = public,
    ///        approve = Caller::approval_ledger)]
    /// async fn wire(to: String, cents: u64) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let approvals = Approvals::new(MemoryLedger::new());
    /// let catalog = Catalog::builder().register::<WireArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .approvals(approvals.clone())
    ///     .build()
    ///     .unwrap();
    /// let args = json!({"to": "unknown account", "cents": 1_000_000});
    /// let Err(CallError::ApprovalRequired(request)) =
    ///     executor.invoke("wire", args.clone(), &Caller("al")).await else { panic!() };
    ///
    /// let rejected = approvals.reject(request.id.unwrap(), &Caller("bea"), "looks like fraud");
    /// assert_eq!(rejected.await.unwrap().status, Status::Rejected);
    /// let refused = executor.invoke("wire", args, &Caller("al")).await;
    /// assert!(matches!(refused, Err(CallError::NotApproved { .. })));
    /// # }
    /// ```
    pub async fn reject(
        &self,
        id: ApprovalId,
        by: &impl Principal,
        reason: &str,
    ) -> Result<Approval, LedgerError> {
        self.decide(id, by.id(), &|role| by.has_role(role), reason, false)
            .await
    }
}
