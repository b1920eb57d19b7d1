//! One registry's mutable state shared by its replicas through PostgreSQL.

mod schema;
mod store;
mod worker;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::PgPool;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use self::schema::SCHEMA;
use self::store::Store;
use self::worker::Worker;
use super::Registry;
use crate::error::BoxError;
use crate::sql::migrate;

/// Keeps a [`Registry`]'s mutable state (each tool enabled, or disabled
/// with its reason, and its [`Override`](super::Override)) the same on
/// every replica of an application, through a PostgreSQL database they
/// share; while the handle lives (feature `postgres`).
///
/// Each tool's state is a row of `toolwright_registry_state`, keyed by the
/// registry's name and the tool's key, with the version of its last write
/// and the replica that wrote it; the last write of a tool wins, and
/// replicas changing different tools at once lose nothing. A change made
/// here is written and announced with `NOTIFY`; a replica that hears of
/// one reads every row written since the last it read and applies them as
/// one [`ChangeKind::Synced`](super::ChangeKind::Synced) change, so its
/// MCP server tells its sessions the tool list changed. A missed
/// notification is caught up by the next; a replica that (re)connects
/// reads every row.
///
/// At start the table wins: a tool with a row takes that row's state
/// (operators' decisions outlive any replica), and a tool without one
/// that is not in its initial state here (disabled by code at start, say)
/// is written. While the database is down, changes made here are kept,
/// retried with a growing wait and written when it answers; that write is
/// then the later one, and wins over what others wrote meanwhile.
///
/// The sync holds one connection of `pool` to listen, and uses others to
/// read and write: give the pool two connections at least. The policy is
/// code, and not shared.
///
/// ```no_run
/// use sqlx::postgres::PgPoolOptions;
/// use toolwright::{tool, Catalog, registry::{PostgresSync, Registry, Selector}};
///
/// /// Look up the weather.
/// #[tool(key = "weather.get", effect = read, authorize = public)]
/// async fn weather(city: String) -> String { format!("sunny in {city}") }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let pool = PgPoolOptions::new()
///     .max_connections(4)
///     .connect("postgres://toolwright@db.internal/app")
///     .await
///     .unwrap();
/// let registry = Registry::new(Catalog::builder().register::<WeatherArgs>().build().unwrap());
/// let sync = PostgresSync::start(pool, "shop", &registry).await.unwrap();
///
/// // Off on every replica within moments, with its reason.
/// registry.disable(&Selector::name("weather"), "upstream 500s").unwrap();
/// # sync.stop().await;
/// # }
/// ```
#[derive(Debug)]
pub struct PostgresSync {
    replica: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

/// Why a [`PostgresSync`] could not start.
///
/// ```
/// use toolwright::registry::SyncError;
///
/// let error = SyncError::unavailable(std::io::Error::other("connection refused"));
/// assert_eq!(error.to_string(), "the shared registry state is unavailable");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    /// The database could not be reached, answered with an error, or holds
    /// a schema newer than this build knows.
    #[error("the shared registry state is unavailable")]
    Unavailable(#[source] BoxError),
}

impl SyncError {
    /// An error from the database underneath.
    ///
    /// ```
    /// use toolwright::registry::SyncError;
    ///
    /// let error = SyncError::unavailable(std::io::Error::other("connection refused"));
    /// assert_eq!(std::error::Error::source(&error).unwrap().to_string(), "connection refused");
    /// ```
    pub fn unavailable(source: impl Into<BoxError>) -> Self {
        SyncError::Unavailable(source.into())
    }
}

impl PostgresSync {
    /// Shares `registry`'s state as the registry called `registry_name`
    /// in the database of `pool` (every replica of one registry gives the
    /// same name), until the handle is stopped or dropped.
    ///
    /// Creates or brings up to date the table first (the row
    /// `registry_state` of `toolwright_schema` holds its version), listens,
    /// reads every row and applies them, and writes this registry's state
    /// of the tools without a row (see [`PostgresSync`]). Any database
    /// error on the way is [`SyncError::Unavailable`], and nothing runs.
    ///
    /// ```no_run
    /// use sqlx::postgres::PgPoolOptions;
    /// use toolwright::{Catalog, registry::{PostgresSync, Registry, SyncError}};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let pool = PgPoolOptions::new().connect_lazy("postgres://toolwright@db.internal/app").unwrap();
    /// let registry = Registry::new(Catalog::builder().build().unwrap());
    /// match PostgresSync::start(pool, "shop", &registry).await {
    ///     Ok(sync) => println!("shared as replica {}", sync.replica()),
    ///     Err(SyncError::Unavailable(error)) => eprintln!("serving unshared: {error}"),
    ///     Err(error) => eprintln!("{error}"),
    /// }
    /// # }
    /// ```
    pub async fn start(
        pool: PgPool,
        registry_name: impl Into<String>,
        registry: &Registry,
    ) -> Result<Self, SyncError> {
        migrate(&pool, &SCHEMA)
            .await
            .map_err(SyncError::unavailable)?;
        let replica = replica_id();
        let store = Store::new(pool, registry_name.into(), replica.clone());
        // Listening before reading: a write after the read is heard.
        let listener = store.listen().await.map_err(SyncError::unavailable)?;
        // Subscribed before reading: a change made here meanwhile is seen.
        let changes = registry.subscribe();
        let mut worker = Worker::new(registry.clone(), store);
        worker.reload().await.map_err(SyncError::unavailable)?;
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(worker.run(changes, listener, stopped));
        Ok(PostgresSync {
            replica,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// This replica's name in the rows it writes: unique per start.
    ///
    /// ```no_run
    /// # use toolwright::{Catalog, registry::{PostgresSync, Registry}};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let pool = sqlx::postgres::PgPoolOptions::new().connect_lazy("postgres://db.internal/app").unwrap();
    /// # let registry = Registry::new(Catalog::builder().build().unwrap());
    /// let sync = PostgresSync::start(pool, "shop", &registry).await.unwrap();
    /// println!("registry state shared as replica {}", sync.replica());
    /// # }
    /// ```
    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// Stops sharing, once the changes made here are written (if the
    /// database answers within the pool's acquire timeout). Dropping the
    /// handle stops it too, without waiting. Until then the sync keeps a
    /// clone of the registry.
    ///
    /// ```no_run
    /// # use toolwright::{Catalog, registry::{PostgresSync, Registry}};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let pool = sqlx::postgres::PgPoolOptions::new().connect_lazy("postgres://db.internal/app").unwrap();
    /// # let registry = Registry::new(Catalog::builder().build().unwrap());
    /// let sync = PostgresSync::start(pool, "shop", &registry).await.unwrap();
    /// // ... serve ...
    /// sync.stop().await;
    /// # }
    /// ```
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            _ = task.await;
        }
    }
}

impl Drop for PostgresSync {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            _ = stop.send(());
        }
    }
}

/// A name no other replica has: the process, the time it started
/// sharing, and a count of the syncs this process started.
fn replica_id() -> String {
    static STARTED: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let count = STARTED.fetch_add(1, Ordering::Relaxed);
    format!("{}-{nanos:x}-{count}", std::process::id())
}
