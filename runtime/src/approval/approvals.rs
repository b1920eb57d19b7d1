//! The application's handle on a ledger: the rules (time to live, four
//! eyes, the approver's role) and the operations people and calls use.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, SystemTime};

use super::ledger::{
    Approval, ApprovalLedger, LedgerError, NewApproval, Review, Settlement, Status,
};
use crate::request::{ApprovalId, ApprovalRequest, Digest};
use crate::util::BoxFuture;

/// How long a request waits for a decision, and an approval for its call,
/// unless [`ApprovalsBuilder::ttl`] says otherwise: one day.
pub const DEFAULT_APPROVAL_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How many requests one requester may have waiting for a decision at
/// once, unless [`ApprovalsBuilder::max_pending`] says otherwise: 100.
pub const DEFAULT_MAX_PENDING: usize = 100;

/// The approvals of an application: a ledger and the rules every request
/// and decision meets. Cheap to clone (an `Arc` inside).
///
/// Give it to the executor ([`ExecutorBuilder::approvals`](crate::executor::ExecutorBuilder::approvals))
/// so that tools naming [`Principal::approval_ledger`](crate::Principal::approval_ledger) as their `approve`
/// hook record requests and consume approvals there; keep a clone to list
/// and decide requests.
///
/// The rules:
/// - a request lapses after its time to live ([`DEFAULT_APPROVAL_TTL`]);
/// - four eyes: the requester cannot decide their own request, unless
///   [`ApprovalsBuilder::allow_self_approval`] says so;
/// - with [`ApprovalsBuilder::approver_role`], only actors holding that
///   role decide;
/// - an approval runs one call, of the actor who asked for it;
/// - a requester has at most [`DEFAULT_MAX_PENDING`] requests waiting
///   ([`ApprovalsBuilder::max_pending`]): one more call fails with
///   [`CallError::TooManyPending`](crate::CallError::TooManyPending), so
///   that one actor cannot bury the requests of everyone else.
///
/// ```
/// use serde_json::json;
/// use toolwright::approval::{LedgerError, MemoryLedger, Status};
/// use toolwright::{tool, CallError, Catalog, Container, Executor, Principal, approval::Approvals};
///
/// struct Caller(&'static str);
/// impl Principal for Caller {
///     fn id(&self) -> &str { self.0 }
/// }
///
/// /// Delete a file.
/// #[tool(key = "files.delete", effect = destructive, authorize = public,
///        approve = Caller::approval_ledger)]
/// async fn delete_file(path: String) -> bool { true }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let approvals = Approvals::new(MemoryLedger::new());
/// let catalog = Catalog::builder().register::<DeleteFileArgs>().build().unwrap();
/// let executor = Executor::builder(catalog, Container::default())
///     .approvals(approvals.clone())
///     .build()
///     .unwrap();
/// let (alice, bob) = (Caller("alice"), Caller("bob"));
/// let args = json!({"path": "/tmp/report.csv"});
///
/// // Alice asks: the call waits, and the request is in the ledger.
/// let first = executor.invoke("delete_file", args.clone(), &alice).await;
/// let Err(CallError::ApprovalRequired(request)) = first else { panic!("{first:?}") };
/// let id = request.id.unwrap();
/// assert_eq!(approvals.pending().await.unwrap()[0].id, id);
///
/// // Four eyes: not Alice herself, but Bob, approves.
/// let own = approvals.approve(id, &alice, "mine").await.unwrap_err();
/// assert!(matches!(own, LedgerError::OwnRequest { .. }));
/// approvals.approve(id, &bob, "checked the path").await.unwrap();
///
/// // Bob's identical call does not use Alice's approval; Alice's runs, once.
/// let not_his = executor.invoke("delete_file", args.clone(), &bob).await;
/// assert!(matches!(not_his, Err(CallError::ApprovalRequired(_))));
/// assert_eq!(executor.invoke("delete_file", args.clone(), &alice).await.unwrap(), true);
/// assert_eq!(approvals.get(id).await.unwrap().status, Status::Settled);
/// let again = executor.invoke("delete_file", args, &alice).await;
/// assert!(matches!(again, Err(CallError::ApprovalRequired(_))));
/// # }
/// ```
#[derive(Clone)]
pub struct Approvals {
    inner: Arc<Rules>,
}

struct Rules {
    ledger: Arc<dyn ApprovalLedger>,
    ttl: Duration,
    self_approval: bool,
    approver_role: Option<String>,
    max_pending: usize,
    /// Recordings take turns from the count to the insert, so that
    /// concurrent calls of one requester cannot pass the cap together.
    recording: tokio::sync::Mutex<()>,
    /// Executors' observers, told of every decision made here.
    taps: Mutex<Vec<Weak<DecisionTap>>>,
    /// The audit trails decisions are recorded in before they are made.
    audits: Mutex<Vec<Weak<dyn DecisionTrail>>>,
}

/// How an executor's observers hear of approval decisions.
pub(crate) type DecisionTap = dyn Fn(&Approval) + Send + Sync;

/// Where decisions are recorded before they are made: the audit trail,
/// which implements this from above (it names this module's types).
pub(crate) trait DecisionTrail: Send + Sync {
    /// Records the decision `review` on `approval`, before it is made; an
    /// error keeps it from being made.
    fn before<'a>(
        &'a self,
        approval: &'a Approval,
        review: &'a Review,
    ) -> BoxFuture<'a, Result<(), LedgerError>>;

    /// Records that the ledger refused the decision `by` made on `id`.
    fn refused<'a>(
        &'a self,
        id: ApprovalId,
        by: &'a str,
        error: &'a LedgerError,
    ) -> BoxFuture<'a, ()>;
}

/// Builds [`Approvals`] with rules other than the defaults.
///
/// ```
/// use std::time::Duration;
/// use toolwright::approval::MemoryLedger;
/// use toolwright::approval::Approvals;
///
/// let approvals = Approvals::builder(MemoryLedger::new())
///     .ttl(Duration::from_secs(15 * 60))
///     .approver_role("manager")
///     .build();
/// assert_eq!(approvals.ttl(), Duration::from_secs(900));
/// ```
pub struct ApprovalsBuilder {
    rules: Rules,
}

impl ApprovalsBuilder {
    /// How long a request waits for a decision, and an approval for its
    /// call.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.rules.ttl = ttl;
        self
    }

    /// Lets a requester decide their own requests: four eyes off. For a
    /// single-user tool, say; not for anything two people should see.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::approval::MemoryLedger;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, Principal, approval::Approvals};
    ///
    /// struct Me;
    /// impl Principal for Me { fn id(&self) -> &str { "me" } }
    ///
    /// /// Empty the trash.
    /// #[tool(key = "trash.empty", effect = destructive, authorize = public,
    ///        approve = Me::approval_ledger)]
    /// async fn empty_trash() -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let approvals = Approvals::builder(MemoryLedger::new()).allow_self_approval().build();
    /// let catalog = Catalog::builder().register::<EmptyTrashArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .approvals(approvals.clone())
    ///     .build()
    ///     .unwrap();
    /// let Err(CallError::ApprovalRequired(request)) =
    ///     executor.invoke("empty_trash", json!({}), &Me).await else { panic!() };
    /// approvals.approve(request.id.unwrap(), &Me, "yes, really").await.unwrap();
    /// assert!(executor.invoke("empty_trash", json!({}), &Me).await.is_ok());
    /// # }
    /// ```
    pub fn allow_self_approval(mut self) -> Self {
        self.rules.self_approval = true;
        self
    }

    /// At most `max` requests of one requester wait for a decision at once
    /// ([`DEFAULT_MAX_PENDING`] unless set): a call that would record one
    /// more fails with [`CallError::TooManyPending`](crate::CallError::TooManyPending),
    /// and nothing is recorded. Asking again for a call that already waits
    /// is not one more. The count is the ledger's
    /// ([`ApprovalLedger::pending_count`]); recordings through these
    /// approvals take turns, so the cap holds for one process. Processes
    /// sharing a database ledger each keep it, so at once they may pass it
    /// by a request each.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::approval::MemoryLedger;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, Principal, approval::Approvals};
    ///
    /// struct Caller(&'static str);
    /// impl Principal for Caller { fn id(&self) -> &str { self.0 } }
    ///
    /// /// Send an invoice.
    /// #[tool(key = "invoices.send", effect = write, authorize = public,
    ///        approve = Caller::approval_ledger)]
    /// async fn send_invoice(invoice: u64) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let approvals = Approvals::builder(MemoryLedger::new()).max_pending(2).build();
    /// let catalog = Catalog::builder().register::<SendInvoiceArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .approvals(approvals.clone())
    ///     .build()
    ///     .unwrap();
    /// let send = |invoice: u64| executor.invoke("send_invoice", json!({"invoice": invoice}), &Caller("ann"));
    /// assert!(matches!(send(1).await, Err(CallError::ApprovalRequired(_))));
    /// assert!(matches!(send(2).await, Err(CallError::ApprovalRequired(_))));
    ///
    /// // A third waits for nothing: ann has two requests waiting.
    /// let third = send(3).await.unwrap_err();
    /// assert!(matches!(third, CallError::TooManyPending { pending: 2, .. }));
    /// assert!(third.model_message().contains("2 requests waiting"));
    /// assert_eq!(approvals.pending().await.unwrap().len(), 2);
    /// // Asking again for one that waits is fine; so is anyone else asking.
    /// assert!(matches!(send(1).await, Err(CallError::ApprovalRequired(_))));
    /// let bob = executor.invoke("send_invoice", json!({"invoice": 3}), &Caller("bob")).await;
    /// assert!(matches!(bob, Err(CallError::ApprovalRequired(_))));
    /// # }
    /// ```
    pub fn max_pending(mut self, max: usize) -> Self {
        self.rules.max_pending = max;
        self
    }

    /// Only actors holding `role` ([`Principal::has_role`](crate::Principal::has_role)) decide.
    pub fn approver_role(mut self, role: impl Into<String>) -> Self {
        self.rules.approver_role = Some(role.into());
        self
    }

    /// The approvals.
    pub fn build(self) -> Approvals {
        Approvals {
            inner: Arc::new(self.rules),
        }
    }
}

/// What the ledger says about one call about to run.
#[derive(Debug)]
pub(crate) enum Admission {
    /// Approved: run. `Some` when an approval was consumed (and must be
    /// settled when the call ends); `None` in a preflight, which only
    /// looked.
    Run(Option<ApprovalId>),
    /// A person must decide first: the request, recorded.
    Wait(Box<Approval>),
    /// A person rejected exactly this call.
    Rejected,
}

impl Approvals {
    /// Approvals in `ledger` with the default rules.
    ///
    /// ```
    /// use toolwright::approval::MemoryLedger;
    /// use toolwright::approval::Approvals;
    ///
    /// let approvals = Approvals::new(MemoryLedger::new());
    /// assert_eq!(approvals.ttl(), toolwright::approval::DEFAULT_APPROVAL_TTL);
    /// ```
    pub fn new(ledger: impl ApprovalLedger) -> Self {
        Approvals::builder(ledger).build()
    }

    /// Approvals in `ledger`, with rules to set.
    pub fn builder(ledger: impl ApprovalLedger) -> ApprovalsBuilder {
        Approvals::builder_shared(Arc::new(ledger))
    }

    /// Approvals in a ledger shared with other code.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolwright::approval::{ApprovalLedger, MemoryLedger};
    /// use toolwright::approval::Approvals;
    ///
    /// let ledger: Arc<dyn ApprovalLedger> = Arc::new(MemoryLedger::new());
    /// let approvals = Approvals::builder_shared(ledger.clone()).build();
    /// ```
    pub fn builder_shared(ledger: Arc<dyn ApprovalLedger>) -> ApprovalsBuilder {
        ApprovalsBuilder {
            rules: Rules {
                ledger,
                ttl: DEFAULT_APPROVAL_TTL,
                self_approval: false,
                approver_role: None,
                max_pending: DEFAULT_MAX_PENDING,
                recording: tokio::sync::Mutex::new(()),
                taps: Mutex::new(Vec::new()),
                audits: Mutex::new(Vec::new()),
            },
        }
    }

    /// How long requests wait.
    pub fn ttl(&self) -> Duration {
        self.inner.ttl
    }

    /// Whether requesters may decide their own requests
    /// ([`ApprovalsBuilder::allow_self_approval`]).
    ///
    /// ```
    /// use toolwright::approval::MemoryLedger;
    /// use toolwright::approval::Approvals;
    ///
    /// assert!(!Approvals::new(MemoryLedger::new()).allows_self_approval());
    /// ```
    pub fn allows_self_approval(&self) -> bool {
        self.inner.self_approval
    }

    /// How many requests one requester may have waiting
    /// ([`ApprovalsBuilder::max_pending`]).
    ///
    /// ```
    /// use toolwright::approval::{MemoryLedger, DEFAULT_MAX_PENDING};
    /// use toolwright::approval::Approvals;
    ///
    /// assert_eq!(Approvals::new(MemoryLedger::new()).max_pending(), DEFAULT_MAX_PENDING);
    /// ```
    pub fn max_pending(&self) -> usize {
        self.inner.max_pending
    }

    /// The ledger underneath.
    pub fn ledger(&self) -> &dyn ApprovalLedger {
        &*self.inner.ledger
    }

    /// Requests waiting for a decision (expired ones left out), oldest
    /// first.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::approval::MemoryLedger;
    /// use toolwright::{tool, Catalog, Container, Executor, Principal, approval::Approvals};
    ///
    /// struct Caller(&'static str);
    /// impl Principal for Caller { fn id(&self) -> &str { self.0 } }
    ///
    /// /// Archive a project.
    /// #[tool(key = "projects.archive", effect = write, authorize = public,
    ///        approve = Caller::approval_ledger)]
    /// async fn archive(project: u64) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let approvals = Approvals::new(MemoryLedger::new());
    /// let catalog = Catalog::builder().register::<ArchiveArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .approvals(approvals.clone())
    ///     .build()
    ///     .unwrap();
    /// for project in [7, 8] {
    ///     let _ = executor.invoke("archive", json!({"project": project}), &Caller("ann")).await;
    /// }
    /// // A review screen: what waits, who asked, for what.
    /// let waiting: Vec<_> = approvals.pending().await.unwrap().into_iter()
    ///     .map(|a| (a.requested_by, a.request.arguments["project"].as_u64().unwrap()))
    ///     .collect();
    /// assert_eq!(waiting, [("ann".to_owned(), 7), ("ann".to_owned(), 8)]);
    /// # }
    /// ```
    pub async fn pending(&self) -> Result<Vec<Approval>, LedgerError> {
        self.ledger().list(Status::Pending, SystemTime::now()).await
    }

    /// Up to `limit` of the requests waiting for a decision whose id comes
    /// after `after` (from the oldest for `None`), oldest first: a page of
    /// [`pending`](Self::pending). The next page starts after the last id
    /// of this one.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::approval::MemoryLedger;
    /// use toolwright::{tool, Catalog, Container, Executor, Principal, approval::Approvals};
    ///
    /// struct Caller(&'static str);
    /// impl Principal for Caller { fn id(&self) -> &str { self.0 } }
    ///
    /// /// Close a ticket.
    /// #[tool(key = "tickets.close", effect = write, authorize = public,
    ///        approve = Caller::approval_ledger)]
    /// async fn close(ticket: u64) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let approvals = Approvals::new(MemoryLedger::new());
    /// let catalog = Catalog::builder().register::<CloseArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .approvals(approvals.clone())
    ///     .build()
    ///     .unwrap();
    /// for ticket in 1..=5 {
    ///     let _ = executor.invoke("close", json!({"ticket": ticket}), &Caller("ann")).await;
    /// }
    /// let mut seen = Vec::new();
    /// let mut after = None;
    /// loop {
    ///     let page = approvals.pending_page(after, 2).await.unwrap();
    ///     let Some(last) = page.last() else { break };
    ///     after = Some(last.id);
    ///     seen.extend(page.iter().map(|a| a.request.arguments["ticket"].as_u64().unwrap()));
    /// }
    /// assert_eq!(seen, [1, 2, 3, 4, 5]);
    /// # }
    /// ```
    pub async fn pending_page(
        &self,
        after: Option<ApprovalId>,
        limit: usize,
    ) -> Result<Vec<Approval>, LedgerError> {
        self.ledger()
            .list_after(Status::Pending, SystemTime::now(), after, limit)
            .await
    }

    /// Approvals a call consumed but never settled: the process stopped
    /// mid-call, say. Their outcome is unknown; they never run again by
    /// themselves. A person checks what happened and records it with
    /// [`settle`](Self::settle).
    ///
    /// ```
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use toolwright::approval::{MemoryLedger, Settlement, Status};
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, Principal, approval::Approvals};
    ///
    /// struct Caller(&'static str);
    /// impl Principal for Caller { fn id(&self) -> &str { self.0 } }
    ///
    /// /// Migrate a database (slowly).
    /// #[tool(key = "db.migrate", effect = destructive, authorize = public,
    ///        approve = Caller::approval_ledger)]
    /// async fn migrate(version: u32) -> bool {
    ///     tokio::time::sleep(Duration::from_secs(3600)).await;
    ///     true
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let approvals = Approvals::new(MemoryLedger::new());
    /// let catalog = Catalog::builder().register::<MigrateArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .approvals(approvals.clone())
    ///     .build()
    ///     .unwrap();
    /// let args = json!({"version": 42});
    /// let Err(CallError::ApprovalRequired(request)) =
    ///     executor.invoke("migrate", args.clone(), &Caller("ops")).await else { panic!() };
    /// let id = request.id.unwrap();
    /// approvals.approve(id, &Caller("dba"), "").await.unwrap();
    ///
    /// // The call starts, and its process is gone before it ends.
    /// let call = executor.invoke("migrate", args, &Caller("ops"));
    /// assert!(tokio::time::timeout(Duration::from_millis(20), call).await.is_err());
    ///
    /// // Nobody knows how it ended: a person finds out, then records it.
    /// assert_eq!(approvals.unsettled().await.unwrap()[0].id, id);
    /// let settled = approvals.settle(id, Settlement::Failed).await.unwrap();
    /// assert_eq!(settled.status, Status::Settled);
    /// assert!(approvals.unsettled().await.unwrap().is_empty());
    /// # }
    /// ```
    pub async fn unsettled(&self) -> Result<Vec<Approval>, LedgerError> {
        self.ledger()
            .list(Status::Consumed, SystemTime::now())
            .await
    }

    /// Every request with `status`, oldest first: the history of what was
    /// asked, decided and run, for an audit (pending and approved ones that
    /// expired are left out).
    ///
    /// ```
    /// use toolwright::approval::{MemoryLedger, Status};
    /// use toolwright::approval::Approvals;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let approvals = Approvals::new(MemoryLedger::new());
    /// assert!(approvals.list(Status::Settled).await.unwrap().is_empty());
    /// # }
    /// ```
    pub async fn list(&self, status: Status) -> Result<Vec<Approval>, LedgerError> {
        self.ledger().list(status, SystemTime::now()).await
    }

    /// The request `id`.
    pub async fn get(&self, id: ApprovalId) -> Result<Approval, LedgerError> {
        self.ledger().get(id).await
    }

    /// The decision of `by` (who holds a role when `holds` says so) on
    /// the pending request `id`, under the rules.
    pub(crate) async fn decide(
        &self,
        id: ApprovalId,
        by: &str,
        holds: &(dyn Fn(&str) -> bool + Sync),
        reason: &str,
        approve: bool,
    ) -> Result<Approval, LedgerError> {
        // The requester never changes, so checking it before the atomic
        // decision is as good as checking it inside.
        let approval = self.ledger().get(id).await?;
        if !self.inner.self_approval && approval.requested_by == by {
            return Err(LedgerError::OwnRequest {
                id,
                by: by.to_owned(),
            });
        }
        if let Some(role) = &self.inner.approver_role
            && !holds(role)
        {
            return Err(LedgerError::NotAnApprover {
                by: by.to_owned(),
                role: role.clone(),
            });
        }
        let decision = Review {
            approve,
            by: by.to_owned(),
            reason: (!reason.is_empty()).then(|| reason.to_owned()),
            at: SystemTime::now(),
        };
        // Recorded first: a decision the trail could not record is not made.
        let audits = self.audits();
        for audit in &audits {
            audit.before(&approval, &decision).await?;
        }
        let decided = match self.ledger().decide(id, decision).await {
            Ok(decided) => decided,
            Err(error) => {
                for audit in &audits {
                    audit.refused(id, by, &error).await;
                }
                return Err(error);
            }
        };
        self.taps().retain(|tap| match tap.upgrade() {
            Some(tap) => {
                tap(&decided);
                true
            }
            None => false,
        });
        Ok(decided)
    }

    /// Tells `tap` of every decision from now on, while it lives elsewhere
    /// (the executor holds it).
    pub(crate) fn tap(&self, tap: &Arc<DecisionTap>) {
        self.taps().push(Arc::downgrade(tap));
    }

    /// Records this ledger's decisions in `audit` while it lives.
    pub(crate) fn audit(&self, audit: &Arc<dyn DecisionTrail>) {
        let mut audits = self
            .inner
            .audits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        audits.retain(|audit| audit.strong_count() > 0);
        audits.push(Arc::downgrade(audit));
    }

    /// The audit trails that record decisions now.
    fn audits(&self) -> Vec<Arc<dyn DecisionTrail>> {
        let audits = self
            .inner
            .audits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        audits.iter().filter_map(Weak::upgrade).collect()
    }

    fn taps(&self) -> MutexGuard<'_, Vec<Weak<DecisionTap>>> {
        self.inner
            .taps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Records how the call that consumed `id` ended: what a person does
    /// for an approval [`unsettled`](Self::unsettled) lists, once they know.
    /// Calls through the executor settle their own.
    pub async fn settle(
        &self,
        id: ApprovalId,
        settlement: Settlement,
    ) -> Result<Approval, LedgerError> {
        self.ledger()
            .settle(id, settlement, SystemTime::now())
            .await
    }

    /// Whether `requested_by`'s call `request` (built only if needed) may
    /// run: consumes an approval (or, in a `preflight`, only looks for
    /// one), and otherwise says what a person must do.
    pub(crate) async fn admit(
        &self,
        digest: &Digest,
        requested_by: &str,
        request: impl FnOnce() -> ApprovalRequest,
        preflight: bool,
    ) -> Result<Admission, LedgerError> {
        let now = SystemTime::now();
        let latest = if preflight {
            self.ledger().latest(digest, requested_by).await?
        } else {
            if let Some(approval) = self.ledger().consume(digest, requested_by, now).await? {
                return Ok(Admission::Run(Some(approval.id)));
            }
            self.ledger().latest(digest, requested_by).await?
        };
        match latest {
            // Only a preflight reads an approval as "would run". A call
            // whose consume found none must not run on it: the approval may
            // be another call's, mid-consume (PostgreSQL's consumer skips a
            // row another holds locked, and the row still reads `approved`
            // until that call's statement commits).
            Some(approval)
                if preflight
                    && approval.status == Status::Approved
                    && !approval.is_expired(now) =>
            {
                Ok(Admission::Run(None))
            }
            Some(approval) if approval.status == Status::Rejected && approval.expires_at > now => {
                Ok(Admission::Rejected)
            }
            latest => {
                let waiting = latest.is_some_and(|approval| {
                    approval.status == Status::Pending && !approval.is_expired(now)
                });
                let _turn = self.inner.recording.lock().await;
                // Asking again for a call that waits records nothing new.
                if !waiting {
                    let pending = self.ledger().pending_count(requested_by, now).await?;
                    if pending >= self.inner.max_pending {
                        return Err(LedgerError::TooManyPending {
                            requested_by: requested_by.to_owned(),
                            pending,
                        });
                    }
                }
                let new = NewApproval {
                    request: request(),
                    requested_by: requested_by.to_owned(),
                    requested_at: now,
                    expires_at: now + self.inner.ttl,
                };
                let recorded = self.ledger().record(new).await?;
                Ok(Admission::Wait(Box::new(recorded)))
            }
        }
    }

    /// Records how a call that consumed `id` ended. The call's own result
    /// stands whatever happens here: a settlement that cannot be written
    /// leaves the approval unsettled (outcome unknown), for a person.
    pub(crate) async fn settle_call(&self, id: ApprovalId, settlement: Settlement) {
        if let Err(error) = self.settle(id, settlement).await {
            tracing::warn!(
                approval = id.0,
                settlement = settlement.as_str(),
                error = %error,
                "could not record how an approved call ended; it stays unsettled"
            );
        }
    }
}

impl fmt::Debug for Approvals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Approvals")
            .field("ttl", &self.inner.ttl)
            .field("self_approval", &self.inner.self_approval)
            .field("approver_role", &self.inner.approver_role)
            .field("max_pending", &self.inner.max_pending)
            .finish_non_exhaustive()
    }
}
