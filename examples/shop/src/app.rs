//! What every module shares: the database, the per-call transaction, who is
//! calling, the approval ledger, and the hooks built on them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{Sqlite, Transaction};
use tokio::sync::Mutex;
use toolwright::{
    Catalog, Container, Digest, Executor, Invocation, Policy, ResolveError, Rule, Scope, Selector,
    Verdict, View,
};

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
    /// The database failed.
    #[error("database error")]
    Database(#[from] sqlx::Error),
}

/// Opens (creating if needed) the database at `url` and applies the
/// embedded migrations, seed data included.
pub async fn open_database(url: &str) -> Result<SqlitePool, sqlx::Error> {
    let mut options: SqliteConnectOptions =
        url.parse::<SqliteConnectOptions>()?.create_if_missing(true);
    // An in-memory database lives as long as its one connection.
    let in_memory = url.contains(":memory:");
    if !in_memory {
        // Readers do not wait for a writer: a `serve` and the `approve` of
        // another process share the file, as `SqliteLedger` recommends.
        options = options.journal_mode(SqliteJournalMode::Wal);
    }
    let pool = SqlitePoolOptions::new()
        .max_connections(if in_memory { 1 } else { 4 })
        .min_connections(if in_memory { 1 } else { 0 })
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(options)
        .await?;
    sqlx::migrate!("./migrations").run(&pool).await?;
    Ok(pool)
}

/// The REQUEST-scoped transaction: begun the first time a call needs it,
/// committed if the call succeeds, rolled back otherwise (error, panic,
/// timeout, cancellation). A commit that fails fails the call.
pub struct Tx(Mutex<Option<Transaction<'static, Sqlite>>>);

impl Tx {
    /// The transaction's connection, for one statement or several.
    pub async fn conn(&self) -> TxConn<'_> {
        TxConn(self.0.lock().await)
    }
}

/// The connection of the call's transaction, locked for its user.
pub struct TxConn<'a>(tokio::sync::MutexGuard<'a, Option<Transaction<'static, Sqlite>>>);

impl std::ops::Deref for TxConn<'_> {
    type Target = sqlx::SqliteConnection;

    fn deref(&self) -> &sqlx::SqliteConnection {
        self.0
            .as_ref()
            .expect("the transaction is open until the call ends")
    }
}

impl std::ops::DerefMut for TxConn<'_> {
    fn deref_mut(&mut self) -> &mut sqlx::SqliteConnection {
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
    pub async fn load(pool: &SqlitePool, name: &str) -> Result<Actor, ShopError> {
        let row: Option<(String, i64, bool)> =
            sqlx::query_as("SELECT name, tenant, manager FROM actors WHERE name = ?")
                .bind(name)
                .fetch_optional(pool)
                .await?;
        let (name, tenant, manager) = row.ok_or(ShopError::NotFound("actor"))?;
        Ok(Actor {
            name,
            tenant,
            manager,
        })
    }
}

/// The caller's context: the actor and the approval ledger. The application
/// builds it; a model never supplies it.
#[derive(Clone)]
pub struct Caller {
    /// Who is calling.
    pub actor: Actor,
    /// Where approvals are recorded.
    pub ledger: Arc<ApprovalLedger>,
}

/// Approvals of write calls, bound to the digest of the exact call and used
/// once.
#[derive(Debug, Clone)]
pub struct ApprovalLedger {
    pool: SqlitePool,
}

/// What the ledger knows of one digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRow {
    /// The call's digest.
    pub digest: String,
    /// The tool's key.
    pub tool_key: String,
    /// The canonical arguments.
    pub arguments: String,
    /// Who asked.
    pub requested_by: String,
    /// `pending`, `approved` or `consumed`.
    pub status: String,
}

impl ApprovalLedger {
    /// A ledger in `pool`.
    pub fn new(pool: SqlitePool) -> Self {
        ApprovalLedger { pool }
    }

    /// Whether the call may run now. An approved digest is consumed (so the
    /// call runs once); anything else is recorded as pending.
    async fn admit<A>(
        &self,
        actor: &Actor,
        call: &Invocation<'_, A>,
    ) -> Result<Verdict, ShopError> {
        let digest = call.digest().to_string();
        let consumed = sqlx::query(
            "UPDATE approvals SET status = 'consumed' WHERE digest = ? AND status = 'approved'",
        )
        .bind(&digest)
        .execute(&self.pool)
        .await?;
        if consumed.rows_affected() == 1 {
            return Ok(Verdict::Allow);
        }
        // New, pending, or used before: a person must approve it (again).
        sqlx::query(
            "INSERT INTO approvals (digest, tool_key, arguments, requested_by, status)
             VALUES (?, ?, ?, ?, 'pending')
             ON CONFLICT (digest) DO UPDATE SET status = 'pending', approved_by = NULL,
                 requested_by = excluded.requested_by",
        )
        .bind(&digest)
        .bind(call.key())
        .bind(call.canonical_arguments().to_string())
        .bind(&actor.name)
        .execute(&self.pool)
        .await?;
        Ok(Verdict::Pending)
    }

    /// A manager of the requester's tenant approves a pending call. Fails
    /// if nothing is pending under that digest for them to approve.
    pub async fn approve(&self, digest: &Digest, by: &Actor) -> Result<ApprovalRow, ShopError> {
        if !by.manager {
            return Err(ShopError::NotFound("pending approval for a manager"));
        }
        let updated = sqlx::query(
            "UPDATE approvals SET status = 'approved', approved_by = ?
             WHERE digest = ? AND status = 'pending'
               AND requested_by IN (SELECT name FROM actors WHERE tenant = ?)",
        )
        .bind(&by.name)
        .bind(digest.to_string())
        .bind(by.tenant)
        .execute(&self.pool)
        .await?;
        if updated.rows_affected() != 1 {
            return Err(ShopError::NotFound("pending approval"));
        }
        self.get(digest).await
    }

    /// The ledger's row for `digest`.
    pub async fn get(&self, digest: &Digest) -> Result<ApprovalRow, ShopError> {
        let row: Option<(String, String, String, String, String)> = sqlx::query_as(
            "SELECT digest, tool_key, arguments, requested_by, status FROM approvals WHERE digest = ?",
        )
        .bind(digest.to_string())
        .fetch_optional(&self.pool)
        .await?;
        let (digest, tool_key, arguments, requested_by, status) =
            row.ok_or(ShopError::NotFound("approval"))?;
        Ok(ApprovalRow {
            digest,
            tool_key,
            arguments,
            requested_by,
            status,
        })
    }
}

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

/// A person approved this exact call (same tool, same arguments), once.
pub async fn approved<A>(caller: &Caller, call: &Invocation<'_, A>) -> Result<Verdict, ShopError> {
    caller.ledger.admit(&caller.actor, call).await
}

// ------------------------------------------------------------------ start-up

/// The shop's modules, as `Catalog::discover_in` selects them.
pub const MODULES: [&str; 3] = ["shop::products", "shop::pricing", "shop::orders"];

/// The container: the pool as an APP value, the transaction and the
/// services over it per call. `begun` counts the transactions begun.
pub fn container(pool: SqlitePool, begun: Arc<AtomicUsize>) -> Container {
    let for_tx = pool.clone();
    Container::builder()
        .app::<SqlitePool>(Arc::new(pool))
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

/// The shop: its catalog, its executor, and its ledger, over one database.
#[derive(Clone)]
pub struct Shop {
    /// The pool.
    pub pool: SqlitePool,
    /// Runs every call; [`Shop::executor_for`] narrows it to an actor's view.
    pub executor: Executor,
    /// Where approvals are recorded.
    pub ledger: Arc<ApprovalLedger>,
    /// What managers see (everything) and what other actors see (no
    /// `managers`-tagged tool), built once.
    views: (View, View),
    begun: Arc<AtomicUsize>,
}

/// The shop's permission policy, on top of every tool's own hooks:
/// anything destructive waits for a person; reads go on to their hooks.
pub fn policy() -> Policy {
    Policy::new()
        .rule(Rule::ask_destructive())
        .rule(Rule::allow_read_only())
}

impl Shop {
    /// The shop over `pool`, with the tools of the shop's modules.
    pub fn new(pool: SqlitePool) -> Result<Shop, Box<dyn std::error::Error + Send + Sync>> {
        Self::with_catalog(pool, Catalog::discover_in(MODULES)?)
    }

    /// The shop over `pool` with another catalog (tests add their own tools).
    pub fn with_catalog(
        pool: SqlitePool,
        catalog: Catalog,
    ) -> Result<Shop, Box<dyn std::error::Error + Send + Sync>> {
        let begun = Arc::new(AtomicUsize::new(0));
        let executor = Executor::new(catalog, container(pool.clone(), begun.clone()))?;
        executor.registry().set_policy(policy());
        Ok(Shop {
            ledger: Arc::new(ApprovalLedger::new(pool.clone())),
            pool,
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

    /// The context for `name`'s calls.
    pub async fn caller(&self, name: &str) -> Result<Caller, ShopError> {
        Ok(Caller {
            actor: Actor::load(&self.pool, name).await?,
            ledger: self.ledger.clone(),
        })
    }
}
