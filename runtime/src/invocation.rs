//! One call of one tool as hooks see it, and the digest that binds an
//! approval to exactly what will run.

use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;

use crate::approval::Approvals;
use crate::effect::Effect;
use crate::request::{ApprovalId, ApprovalRequest, Digest};
use crate::secret::Secrets;
use crate::tool_str::ToolStr;

/// The validated arguments of one call, with the tool's identity.
///
/// `authorize` and `approve` hooks receive `&Invocation<'_, Args>`; it derefs
/// to the arguments the body will receive, so a hook can decide on them:
///
/// ```
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Executor, Invocation};
///
/// struct Actor { max_amount: u64 }
///
/// /// Refund an order.
/// #[tool(key = "orders.refund", effect = write, authorize = within_limit, approve = small_refunds)]
/// async fn refund(order_id: u64, amount: u64) -> bool { true }
///
/// async fn within_limit(actor: &Actor, call: &Invocation<'_, RefundArgs>) -> bool {
///     call.amount <= actor.max_amount
/// }
///
/// async fn small_refunds(_: &Actor, call: &Invocation<'_, RefundArgs>) -> bool {
///     call.amount < 100
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<RefundArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// let clerk = Actor { max_amount: 500 };
///
/// let small = executor.invoke("refund", json!({"order_id": 1, "amount": 50}), &clerk).await;
/// assert_eq!(small.unwrap(), true);
/// let large = executor.invoke("refund", json!({"order_id": 1, "amount": 200}), &clerk).await;
/// assert!(matches!(large, Err(CallError::NotApproved { .. })));
/// let too_large = executor.invoke("refund", json!({"order_id": 1, "amount": 900}), &clerk).await;
/// assert!(matches!(too_large, Err(CallError::Denied { .. })));
/// # }
/// ```
pub struct Invocation<'a, A> {
    args: A,
    to_json: fn(&A) -> serde_json::Result<Value>,
    /// Everything else, which does not depend on the arguments' type.
    facts: Facts<'a>,
}

/// What a call is, besides its arguments: its tool, what the steps and the
/// ledger hook need, and what they leave. Apart from [`Invocation`]'s type
/// parameter, so that its code is compiled once, not once per tool.
pub(crate) struct Facts<'a> {
    key: &'a ToolStr,
    name: &'a ToolStr,
    effect: Effect,
    canonical: OnceLock<Box<Canonical>>,
    /// The executor's approvals, for the ledger hook.
    approvals: Option<&'a Approvals>,
    /// Asked by [`Executor::preflight`](crate::Executor::preflight): use nothing up.
    preflight: bool,
    /// What the ledger hook did: the approval it consumed, or the request
    /// it recorded.
    ticket: OnceLock<Ticket>,
    /// The tool's `#[secret]` properties, masked in an approval request.
    secrets: &'a Secrets,
}

impl<'a> Facts<'a> {
    /// The facts of a call of the tool `key` (caller-facing `name`).
    pub(crate) fn new(
        key: &'a ToolStr,
        name: &'a ToolStr,
        effect: Effect,
        approvals: Option<&'a Approvals>,
        preflight: bool,
        secrets: &'a Secrets,
    ) -> Self {
        Facts {
            key,
            name,
            effect,
            canonical: OnceLock::new(),
            approvals,
            preflight,
            ticket: OnceLock::new(),
            secrets,
        }
    }

    /// The canonical arguments and their digest, made by `to_json` the
    /// first time they are asked for.
    fn canonical(&self, to_json: &dyn Fn() -> serde_json::Result<Value>) -> &Canonical {
        self.canonical.get_or_init(|| {
            // Arguments that came through validation always serialize; a
            // custom `Serialize` that fails digests as `null`, which no
            // approval of real arguments can match.
            let arguments = to_json().unwrap_or(Value::Null);
            let digest = Digest::of(self.key, &arguments);
            Box::new(Canonical { arguments, digest })
        })
    }

    /// The request a person approves, from the `canonical` arguments.
    fn approval_request(&self, canonical: &Canonical) -> ApprovalRequest {
        let arguments = if self.secrets.is_empty() {
            canonical.arguments.clone()
        } else {
            self.secrets.mask(&canonical.arguments)
        };
        let (id, requested_by) = match self.ticket.get() {
            Some(Ticket::Requested { id, requested_by }) => (Some(*id), Some(requested_by.clone())),
            _ => (None, None),
        };
        ApprovalRequest {
            key: self.key.to_string(),
            name: self.name.to_string(),
            arguments,
            digest: canonical.digest,
            id,
            requested_by,
        }
    }

    /// The ledger approval the call consumed, if a hook consumed one.
    pub(crate) fn consumed(&self) -> Option<ApprovalId> {
        match self.ticket.get() {
            Some(Ticket::Consumed(id)) => Some(*id),
            _ => None,
        }
    }
}

/// What the ledger hook left for the rest of the call.
#[derive(Debug)]
pub(crate) enum Ticket {
    /// An approval this call consumed: settled when the call ends.
    Consumed(ApprovalId),
    /// The request a person must decide, recorded for this requester.
    Requested {
        id: ApprovalId,
        requested_by: String,
    },
}

struct Canonical {
    arguments: Value,
    digest: Digest,
}

impl<'a, A: Serialize> Invocation<'a, A> {
    /// The call of a tool with `args`, whose other `facts` are known.
    pub(crate) fn new(args: A, facts: Facts<'a>) -> Self {
        Invocation {
            args,
            to_json: |args| crate::util::json::to_value(args),
            facts,
        }
    }
}

impl<A> Invocation<'_, A> {
    /// The tool's capability key.
    ///
    /// One hook can serve many tools by deciding on the key:
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, Invocation};
    ///
    /// struct Actor { grants: Vec<String> }
    ///
    /// async fn granted<A>(actor: &Actor, call: &Invocation<'_, A>) -> bool {
    ///     actor.grants.iter().any(|key| key == call.key())
    /// }
    ///
    /// /// Look up an order.
    /// #[tool(key = "orders.get", effect = read, authorize = granted)]
    /// async fn get_order(id: u64) -> u64 { id }
    ///
    /// /// Look up a customer.
    /// #[tool(key = "customers.get", effect = read, authorize = granted)]
    /// async fn get_customer(id: u64) -> u64 { id }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder()
    ///     .register::<GetOrderArgs>()
    ///     .register::<GetCustomerArgs>()
    ///     .build()
    ///     .unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let support = Actor { grants: vec!["orders.get".into()] };
    ///
    /// assert!(executor.invoke("get_order", json!({"id": 1}), &support).await.is_ok());
    /// let customer = executor.invoke("get_customer", json!({"id": 1}), &support).await;
    /// assert!(matches!(&customer, Err(CallError::Denied { key }) if key == "customers.get"));
    /// # }
    /// ```
    pub fn key(&self) -> &str {
        self.facts.key
    }

    /// The tool's caller-facing name.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, Invocation};
    ///
    /// #[derive(Default)]
    /// struct Actor { asked_for: Mutex<Vec<String>> }
    ///
    /// // Record which tools an assistant asked for, by the name it used.
    /// async fn recorded<A>(actor: &Actor, call: &Invocation<'_, A>) -> bool {
    ///     actor.asked_for.lock().unwrap().push(call.name().to_owned());
    ///     true
    /// }
    ///
    /// /// Look up an order.
    /// #[tool(key = "orders.get", name = "get_order", effect = read, authorize = recorded)]
    /// async fn get(id: u64) -> u64 { id }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<GetArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let actor = Actor::default();
    /// executor.invoke("get_order", json!({"id": 1}), &actor).await.unwrap();
    /// assert_eq!(*actor.asked_for.lock().unwrap(), ["get_order"]);
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        self.facts.name
    }

    /// The tool's declared effect.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{tool, CallError, Catalog, Container, Effect, Executor, Invocation};
    ///
    /// struct Actor { read_only: bool }
    ///
    /// // Viewers may call the tools that change nothing.
    /// async fn policy<A>(actor: &Actor, call: &Invocation<'_, A>) -> bool {
    ///     !actor.read_only || call.effect() == Effect::Read
    /// }
    ///
    /// async fn confirmed(_: &Actor, _: &Invocation<'_, CancelOrderArgs>) -> bool { true }
    ///
    /// /// Look up an order.
    /// #[tool(key = "orders.get", effect = read, authorize = policy)]
    /// async fn get_order(id: u64) -> u64 { id }
    ///
    /// /// Cancel an order.
    /// #[tool(key = "orders.cancel", effect = destructive, authorize = policy,
    ///        approve = confirmed)]
    /// async fn cancel_order(id: u64) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder()
    ///     .register::<GetOrderArgs>()
    ///     .register::<CancelOrderArgs>()
    ///     .build()
    ///     .unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let viewer = Actor { read_only: true };
    ///
    /// assert!(executor.invoke("get_order", json!({"id": 1}), &viewer).await.is_ok());
    /// let cancel = executor.invoke("cancel_order", json!({"id": 1}), &viewer).await;
    /// assert!(matches!(cancel, Err(CallError::Denied { .. })));
    /// # }
    /// ```
    pub fn effect(&self) -> Effect {
        self.facts.effect
    }

    /// The validated arguments (also reached through `Deref`).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, Invocation};
    ///
    /// /// Transfer money between two accounts.
    /// #[tool(key = "payments.transfer", effect = destructive, authorize = public,
    ///        approve = within_policy)]
    /// async fn transfer(from: String, to: String, cents: u64) -> bool { true }
    ///
    /// // A policy that knows nothing of hooks, and is tested on its own.
    /// fn allowed(transfer: &TransferArgs) -> bool {
    ///     transfer.from != transfer.to && transfer.cents <= 10_000
    /// }
    ///
    /// async fn within_policy(_: &(), call: &Invocation<'_, TransferArgs>) -> bool {
    ///     allowed(call.args())
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<TransferArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    ///
    /// let ok = json!({"from": "checking", "to": "savings", "cents": 500});
    /// assert!(executor.invoke("transfer", ok, &()).await.is_ok());
    /// let circular = json!({"from": "checking", "to": "checking", "cents": 500});
    /// let refused = executor.invoke("transfer", circular, &()).await;
    /// assert!(matches!(refused, Err(CallError::NotApproved { .. })));
    /// # }
    /// ```
    pub fn args(&self) -> &A {
        &self.args
    }

    /// Whether this is a [preflight](crate::Executor::preflight): the
    /// hooks are asked whether the call would run, and nothing runs. A
    /// hook should use nothing up then (an approval, a quota); recording
    /// what a person must decide is fine, and the ledger hook does.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, Invocation, executor::Preflight};
    ///
    /// #[derive(Default)]
    /// struct Quota(AtomicU32);
    ///
    /// /// Send a text message.
    /// #[tool(key = "sms.send", effect = write, authorize = public, approve = within_quota)]
    /// async fn send_sms(to: String) -> bool { true }
    ///
    /// async fn within_quota(quota: &Quota, call: &Invocation<'_, SendSmsArgs>) -> bool {
    ///     if call.is_preflight() {
    ///         return quota.0.load(Ordering::SeqCst) < 1;
    ///     }
    ///     quota.0.fetch_add(1, Ordering::SeqCst) < 1
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<SendSmsArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let quota = Quota::default();
    /// let args = json!({"to": "+15550100"});
    /// let asked = executor.preflight("send_sms", args.clone(), &quota).await.unwrap();
    /// assert!(matches!(asked, Preflight::WouldRun));
    /// assert_eq!(quota.0.load(Ordering::SeqCst), 0);
    /// # }
    /// ```
    pub fn is_preflight(&self) -> bool {
        self.facts.preflight
    }

    /// The executor's approvals, if it has any.
    pub(crate) fn approvals(&self) -> Option<&Approvals> {
        self.facts.approvals
    }

    /// Leaves what the ledger hook did for the rest of the call.
    pub(crate) fn set_ticket(&self, ticket: Ticket) {
        // A hook asked twice (never, in the pipeline) keeps its first answer.
        let _ = self.facts.ticket.set(ticket);
    }

    /// The ledger approval the call consumed, if a hook consumed one.
    pub(crate) fn consumed(&self) -> Option<ApprovalId> {
        self.facts.consumed()
    }

    /// The arguments, for the body.
    pub(crate) fn into_args(self) -> A {
        self.args
    }
}

impl<A> Invocation<'_, A> {
    /// SHA-256 of the tool key and the canonical JSON of the validated
    /// arguments (defaults applied, object keys sorted).
    ///
    /// The same arguments in any key order give the same digest; any changed
    /// value, or another tool, gives a different one. Computed once per call,
    /// on first use.
    ///
    /// An `approve` hook checks it against the approvals a person gave:
    ///
    /// ```
    /// use std::collections::HashSet;
    /// use std::sync::Mutex;
    /// use serde_json::json;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, approval::Digest};
    /// use toolwright::{Invocation, executor::Verdict};
    ///
    /// #[derive(Default)]
    /// struct Actor { approved: Mutex<HashSet<Digest>> }
    ///
    /// /// Send a payment.
    /// #[tool(key = "payments.send", effect = destructive, authorize = public, approve = approved)]
    /// async fn send_payment(to: String, cents: u64) -> bool { true }
    ///
    /// async fn approved(actor: &Actor, call: &Invocation<'_, SendPaymentArgs>) -> Verdict {
    ///     if actor.approved.lock().unwrap().contains(&call.digest()) {
    ///         Verdict::Allow
    ///     } else {
    ///         Verdict::Pending
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<SendPaymentArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let actor = Actor::default();
    /// let payment = json!({"to": "ACME", "cents": 1200});
    ///
    /// let first = executor.invoke("send_payment", payment.clone(), &actor).await;
    /// let Err(CallError::ApprovalRequired(request)) = first else { panic!("{first:?}") };
    /// // A person reviews the request and approves it.
    /// actor.approved.lock().unwrap().insert(request.digest);
    /// assert!(executor.invoke("send_payment", payment, &actor).await.is_ok());
    ///
    /// // The approval covers these arguments only.
    /// let other = json!({"to": "ACME", "cents": 9900});
    /// let more = executor.invoke("send_payment", other, &actor).await;
    /// assert!(matches!(more, Err(CallError::ApprovalRequired(_))));
    /// # }
    /// ```
    pub fn digest(&self) -> Digest {
        self.canonical().digest
    }

    /// The canonical arguments the digest was computed from: the validated
    /// arguments as JSON, defaults applied, `#[secret]` values included
    /// (an [`approval_request`](Self::approval_request) masks them).
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use serde_json::{json, Value};
    /// use toolwright::{tool, Catalog, Container, Executor, Invocation, approval::Digest};
    ///
    /// #[derive(Default)]
    /// struct Audit(Mutex<Vec<(Value, Digest)>>);
    ///
    /// /// Send a payment.
    /// #[tool(key = "payments.send", effect = destructive, authorize = public, approve = logged)]
    /// async fn send_payment(
    ///     to: String,
    ///     cents: u64,
    ///     #[default = "EUR".to_owned()]
    ///     currency: String,
    /// ) -> bool {
    ///     true
    /// }
    ///
    /// async fn logged(audit: &Audit, call: &Invocation<'_, SendPaymentArgs>) -> bool {
    ///     let entry = (call.canonical_arguments().clone(), call.digest());
    ///     audit.0.lock().unwrap().push(entry);
    ///     true
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<SendPaymentArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let audit = Audit::default();
    /// let payment = json!({"to": "ACME", "cents": 1200});
    /// executor.invoke("send_payment", payment, &audit).await.unwrap();
    ///
    /// let (arguments, digest) = audit.0.lock().unwrap().pop().unwrap();
    /// // The default is part of what was approved.
    /// assert_eq!(arguments, json!({"to": "ACME", "cents": 1200, "currency": "EUR"}));
    /// assert_eq!(digest, Digest::of("payments.send", &arguments));
    /// # }
    /// ```
    pub fn canonical_arguments(&self) -> &Value {
        &self.canonical().arguments
    }

    /// What a person must approve for this exact call to run.
    ///
    /// Its arguments show every `#[secret]` value as
    /// [`REDACTED`](crate::observe::REDACTED); its digest is the real
    /// arguments', so an approval of it matches the call with the real
    /// values and no other.
    ///
    /// It is what [`CallError::ApprovalRequired`](crate::CallError::ApprovalRequired)
    /// carries when the `approve` hook answers `Pending`; a hook can also
    /// queue it for review itself:
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use serde_json::json;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, approval::ApprovalRequest};
    /// use toolwright::{Invocation, executor::Verdict};
    ///
    /// #[derive(Default)]
    /// struct ReviewQueue(Mutex<Vec<ApprovalRequest>>);
    ///
    /// /// Delete a customer account.
    /// #[tool(key = "accounts.delete", effect = destructive, authorize = public, approve = queue)]
    /// async fn delete_account(account_id: u64) -> bool { true }
    ///
    /// async fn queue(reviews: &ReviewQueue, call: &Invocation<'_, DeleteAccountArgs>) -> Verdict {
    ///     reviews.0.lock().unwrap().push(call.approval_request());
    ///     Verdict::Pending
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<DeleteAccountArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let reviews = ReviewQueue::default();
    /// let error = executor
    ///     .invoke("delete_account", json!({"account_id": 42}), &reviews)
    ///     .await
    ///     .unwrap_err();
    ///
    /// let queued = reviews.0.lock().unwrap().pop().unwrap();
    /// assert_eq!(queued.arguments, json!({"account_id": 42}));
    /// let CallError::ApprovalRequired(returned) = error else { panic!("{error}") };
    /// assert_eq!(*returned, queued);
    /// # }
    /// ```
    pub fn approval_request(&self) -> ApprovalRequest {
        self.facts.approval_request(self.canonical())
    }

    fn canonical(&self) -> &Canonical {
        self.facts.canonical(&|| (self.to_json)(&self.args))
    }
}

/// What the ledger hook and the steps around the hooks ask of a call,
/// whatever its tool's arguments: their code is then compiled once, not
/// once per tool.
pub(crate) trait Ledgered: Sync {
    fn approvals(&self) -> Option<&Approvals>;
    fn canonical_arguments(&self) -> &Value;
    fn digest(&self) -> Digest;
    fn approval_request(&self) -> ApprovalRequest;
    fn is_preflight(&self) -> bool;
    fn set_ticket(&self, ticket: Ticket);
}

impl<A: Sync> Ledgered for Invocation<'_, A> {
    fn approvals(&self) -> Option<&Approvals> {
        Invocation::approvals(self)
    }

    fn canonical_arguments(&self) -> &Value {
        Invocation::canonical_arguments(self)
    }

    fn digest(&self) -> Digest {
        Invocation::digest(self)
    }

    fn approval_request(&self) -> ApprovalRequest {
        Invocation::approval_request(self)
    }

    fn is_preflight(&self) -> bool {
        Invocation::is_preflight(self)
    }

    fn set_ticket(&self, ticket: Ticket) {
        Invocation::set_ticket(self, ticket)
    }
}

impl<A> Deref for Invocation<'_, A> {
    type Target = A;

    fn deref(&self) -> &A {
        &self.args
    }
}

impl<A: fmt::Debug> fmt::Debug for Invocation<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Invocation")
            .field("key", &self.facts.key)
            .field("name", &self.facts.name)
            .field("effect", &self.facts.effect)
            .field("args", &self.args)
            .finish()
    }
}
