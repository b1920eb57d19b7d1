//! What every module shares: the database, the per-call transaction, who is
//! calling, the approvals, and the hooks built on them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sqlx::{Any, AnyConnection, AnyPool, Transaction};
use tokio::sync::Mutex;
use toolwright::approval::{Approval, ApprovalId, LedgerError, PostgresLedger, SqliteLedger};
use toolwright::idempotency::{Idempotency, PostgresKeys, SqliteKeys};
use toolwright::observe::ExecutionLog;
use toolwright::{
    Catalog, Container, Executor, Invocation, Principal,
    approval::Approvals,
    registry::{Policy, PostgresSync, Rule, Selector, View},
    scope::{ResolveError, Scope},
};

use crate::database::{Database, Engine};
use crate::orders::{OrderService, SqlOrders};
use crate::pricing::{PriceService, SqlPrices};
use crate::products::{ProductService, SqlProducts};

/// An error of the shop's own.
#[derive(Debug, thiserror::Error)]
pub enum ShopError {
    /// No such row for this tenant.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// Not enough stock for the order.
    #[error("only {available} in stock")]
    OutOfStock {
        /// What is left.
        available: i64,
    },
    /// A manager tried to decide a request made in another tenant.
    #[error("approval request {id} was made in another tenant; only its own managers decide it")]
    OtherTenant {
        /// The request.
        id: ApprovalId,
    },
    /// The approvals refused the decision (four eyes, not a manager, not
    /// pending, unknown) or the ledger failed.
    #[error(transparent)]
    Approval(#[from] LedgerError),
    /// The database failed.
    #[error("database error")]
    Database(#[from] sqlx::Error),
    /// The operating system gave no random bytes for a token.
    #[error("no random bytes for a token")]
    Random(#[source] getrandom::Error),
}

/// The REQUEST-scoped transaction: begun the first time a call needs it,
/// committed if the call succeeds, rolled back otherwise (error, panic,
/// timeout, cancellation). A commit that fails fails the call.
pub struct Tx(Mutex<Option<Transaction<'static, Any>>>);

impl Tx {
    /// The transaction's connection, for one statement or several.
    pub async fn conn(&self) -> TxConn<'_> {
        TxConn(self.0.lock().await)
    }
}

/// The connection of the call's transaction, locked for its user.
pub struct TxConn<'a>(tokio::sync::MutexGuard<'a, Option<Transaction<'static, Any>>>);

impl std::ops::Deref for TxConn<'_> {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        self.0
            .as_ref()
            .expect("the transaction is open until the call ends")
    }
}

impl std::ops::DerefMut for TxConn<'_> {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        self.0
            .as_mut()
            .expect("the transaction is open until the call ends")
    }
}

/// A person using the shop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// Login name.
    pub name: String,
    /// The tenant whose data they may see.
    pub tenant: i64,
    /// Managers may change prices.
    pub manager: bool,
}

impl Actor {
    /// Looks an actor up by name.
    pub async fn load(pool: &AnyPool, name: &str) -> Result<Actor, ShopError> {
        let row: Option<(String, i64, i64)> =
            sqlx::query_as("SELECT name, tenant, manager FROM actors WHERE name = $1")
                .bind(name)
                .fetch_optional(pool)
                .await?;
        let (name, tenant, manager) = row.ok_or(ShopError::NotFound("actor"))?;
        Ok(Actor {
            name,
            tenant,
            manager: manager != 0,
        })
    }
}

/// The caller's context: the actor. The application builds it; a model never
/// supplies it.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Who is calling.
    pub actor: Actor,
}

/// The caller as the approvals know them: requests are recorded under the
/// actor's name, and managers decide them.
impl Principal for Caller {
    fn id(&self) -> &str {
        &self.actor.name
    }

    fn has_role(&self, role: &str) -> bool {
        role == MANAGER && self.actor.manager
    }
}

/// The role that decides approvals.
pub const MANAGER: &str = "manager";

// ---------------------------------------------------------------- the hooks

/// Any known actor.
pub async fn signed_in<A>(caller: &Caller, _: &Invocation<'_, A>) -> bool {
    !caller.actor.name.is_empty()
}

/// Arguments that name a tenant.
pub trait ForTenant {
    /// The tenant the call is about.
    fn tenant(&self) -> i64;
}

/// Implements [`ForTenant`] for argument structs with a `tenant_id` field.
macro_rules! tenant_scoped {
    ($($args:ty),+ $(,)?) => {
        $(impl $crate::app::ForTenant for $args {
            fn tenant(&self) -> i64 {
                self.tenant_id
            }
        })+
    };
}
pub(crate) use tenant_scoped;

/// The call is about the caller's own tenant: decided on the arguments,
/// before anything touches the database.
pub async fn own_tenant<A: ForTenant>(caller: &Caller, call: &Invocation<'_, A>) -> bool {
    call.tenant() == caller.actor.tenant
}

/// A manager of the tenant the call is about.
pub async fn tenant_manager<A: ForTenant>(caller: &Caller, call: &Invocation<'_, A>) -> bool {
    call.tenant() == caller.actor.tenant && caller.actor.manager
}

// ------------------------------------------------------------------ start-up

/// The shop's modules, as `Catalog::discover_in` selects them.
pub const MODULES: [&str; 3] = ["shop::products", "shop::pricing", "shop::orders"];

/// The container: the pool as an APP value, the transaction and the
/// services over it per call. `begun` counts the transactions begun.
pub fn container(pool: AnyPool, begun: Arc<AtomicUsize>) -> Container {
    let for_tx = pool.clone();
    Container::builder()
        .app::<AnyPool>(Arc::new(pool))
        .request::<Tx>(move |scope: Scope| {
            let pool = for_tx.clone();
            let begun = begun.clone();
            async move {
                let tx = Arc::new(Tx(Mutex::new(Some(pool.begin().await?))));
                begun.fetch_add(1, Ordering::SeqCst);
                let closing = tx.clone();
                // A commit that fails fails the call: its caller, and the
                // model, are never told that a write took effect when it did not.
                scope.on_close(move |outcome| async move {
                    let Some(tx) = closing.0.lock().await.take() else {
                        return Ok(());
                    };
                    if outcome.is_ok() {
                        tx.commit().await
                    } else {
                        tx.rollback().await
                    }
                });
                Ok::<_, sqlx::Error>(tx)
            }
        })
        .request::<dyn ProductService>(|scope: Scope| async move {
            let tx = scope.resolve::<Tx>().await?;
            Ok::<_, ResolveError>(Arc::new(SqlProducts::new(tx)) as Arc<dyn ProductService>)
        })
        .request::<dyn PriceService>(|scope: Scope| async move {
            let tx = scope.resolve::<Tx>().await?;
            Ok::<_, ResolveError>(Arc::new(SqlPrices::new(tx)) as Arc<dyn PriceService>)
        })
        .request::<dyn OrderService>(|scope: Scope| async move {
            let tx = scope.resolve::<Tx>().await?;
            Ok::<_, ResolveError>(Arc::new(SqlOrders::new(tx)) as Arc<dyn OrderService>)
        })
        .build()
}

/// The shop: its catalog, its executor, and its approvals, over one database.
#[derive(Clone)]
pub struct Shop {
    /// The pool of the shop's own tables (see [`crate::database`]).
    pub pool: AnyPool,
    /// Runs every call; [`Shop::executor_for`] narrows it to an actor's view.
    pub executor: Executor,
    /// Where write calls wait for a manager: four eyes, in the shop's
    /// database. Decide through [`Shop::approve`] and [`Shop::reject`],
    /// which also keep a manager to their own tenant.
    pub approvals: Approvals,
    /// The executor's last [`LOG_CAPACITY`] calls, registry changes and
    /// approval decisions, as the admin page shows them.
    pub log: ExecutionLog,
    /// What managers see (everything) and what other actors see (no
    /// `managers`-tagged tool), built once.
    views: (View, View),
    begun: Arc<AtomicUsize>,
    /// On PostgreSQL, shares the registry's state (tools disabled and
    /// enabled) with every replica; stops with the last clone of the shop.
    sync: Option<Arc<PostgresSync>>,
}

/// How many events the shop's [`ExecutionLog`] keeps before dropping the
/// oldest.
pub const LOG_CAPACITY: usize = 10_000;

/// The name every replica's registry shares its state under.
pub const REGISTRY: &str = "shop";

/// The shop's permission policy, on top of every tool's own hooks:
/// anything destructive waits for a person; reads go on to their hooks.
pub fn policy() -> Policy {
    Policy::new()
        .rule(Rule::ask_destructive())
        .rule(Rule::allow_read_only())
}

impl Shop {
    /// The shop over `database`, with the tools of the shop's modules.
    pub async fn new(database: Database) -> Result<Shop, Box<dyn std::error::Error + Send + Sync>> {
        Self::with_catalog(database, Catalog::discover_in(MODULES)?).await
    }

    /// The shop over `database` with another catalog (tests add their own
    /// tools). Creates toolwright's tables (the approval ledger, the
    /// idempotency keys, on PostgreSQL the shared registry state) if they
    /// are missing.
    pub async fn with_catalog(
        database: Database,
        catalog: Catalog,
    ) -> Result<Shop, Box<dyn std::error::Error + Send + Sync>> {
        let Database { pool, engine } = database;
        let (ledger, keys) = match &engine {
            Engine::Sqlite(typed) => (
                Approvals::builder(SqliteLedger::connect(typed.clone()).await?),
                Idempotency::new(SqliteKeys::connect(typed.clone()).await?),
            ),
            Engine::Postgres(typed) => (
                Approvals::builder(PostgresLedger::connect(typed.clone()).await?),
                Idempotency::new(PostgresKeys::connect(typed.clone()).await?),
            ),
        };
        let approvals = ledger.approver_role(MANAGER).build();
        let begun = Arc::new(AtomicUsize::new(0));
        let log = ExecutionLog::new(LOG_CAPACITY)?;
        let executor = Executor::builder(catalog, container(pool.clone(), begun.clone()))
            .approvals(approvals.clone())
            // A write retried with its key (MCP `_meta.idempotencyKey`, the
            // REST `Idempotency-Key` header) runs once, on any replica.
            .idempotency(keys)
            .observe(log.clone())
            // A tool without an `approve` hook that the policy asks about
            // goes through the same ledger, for the calling actor.
            .principal::<Caller>()
            .build()?;
        executor.registry().set_policy(policy());
        let sync = match engine {
            Engine::Sqlite(_) => None,
            Engine::Postgres(typed) => Some(Arc::new(
                PostgresSync::start(typed, REGISTRY, executor.registry()).await?,
            )),
        };
        Ok(Shop {
            approvals,
            log,
            pool,
            sync,
            executor,
            views: (
                View::new(Selector::All),
                View::new(!Selector::tag("managers")),
            ),
            begun,
        })
    }

    /// The view `actor` is served: managers every tool, other actors all but
    /// the `managers`-tagged ones, which they are neither shown nor able to
    /// call.
    pub fn view_for(&self, actor: &Actor) -> View {
        if actor.manager {
            self.views.0.clone()
        } else {
            self.views.1.clone()
        }
    }

    /// The executor as `actor` may use it: lists, exports and calls only
    /// what their view holds.
    pub fn executor_for(&self, actor: &Actor) -> Executor {
        self.executor.view(self.view_for(actor))
    }

    /// How many call transactions have begun: a call that touches the
    /// database begins one; a call refused before its body begins none.
    pub fn transactions_begun(&self) -> usize {
        self.begun.load(Ordering::SeqCst)
    }

    /// On PostgreSQL, this replica's id in the registry state every replica
    /// shares (a tool disabled on one is disabled on all); on SQLite, `None`.
    pub fn replica(&self) -> Option<&str> {
        self.sync.as_deref().map(PostgresSync::replica)
    }

    /// The context for `name`'s calls.
    pub async fn caller(&self, name: &str) -> Result<Caller, ShopError> {
        Ok(Caller {
            actor: Actor::load(&self.pool, name).await?,
        })
    }

    /// `by` approves the pending request `id`: the requester's identical
    /// call may then run, once. Only a manager of the requester's tenant
    /// who is not the requester decides.
    pub async fn approve(
        &self,
        id: ApprovalId,
        by: &Caller,
        reason: &str,
    ) -> Result<Approval, ShopError> {
        self.check_tenant(id, by).await?;
        Ok(self.approvals.approve(id, by, reason).await?)
    }

    /// `by` rejects the pending request `id`: the identical call is refused
    /// until the request expires. The same rules as [`Shop::approve`].
    pub async fn reject(
        &self,
        id: ApprovalId,
        by: &Caller,
        reason: &str,
    ) -> Result<Approval, ShopError> {
        self.check_tenant(id, by).await?;
        Ok(self.approvals.reject(id, by, reason).await?)
    }

    /// The shop's own rule on top of the approvals': a request is decided
    /// in the tenant it was made in.
    async fn check_tenant(&self, id: ApprovalId, by: &Caller) -> Result<(), ShopError> {
        let request = self.approvals.get(id).await?;
        let requester = Actor::load(&self.pool, &request.requested_by).await?;
        if requester.tenant != by.actor.tenant {
            return Err(ShopError::OtherTenant { id });
        }
        Ok(())
    }
}
