//! The statements of the shared state: read the rows written since a
//! version, write tools' states and announce them.

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use sqlx::postgres::PgListener;
use sqlx::{PgPool, Postgres};

use super::schema::CHANNEL;
use crate::registry::ToolState;
use crate::sql::{Dialect, Lock, Read, Statement};

/// Writes to one registry's rows take this lock (keyed by the registry's
/// name), so versions are handed out in the order writes commit: a reader
/// that saw version `n` has seen every write below it, and catching up
/// from `n` loses none.
const WRITES: i32 = 0x7477_7273;

/// One registry's rows, as one replica reads and writes them.
#[derive(Debug, Clone)]
pub(super) struct Store {
    pool: PgPool,
    pub(super) registry: String,
    pub(super) replica: String,
}

/// One tool's row.
#[derive(Debug)]
pub(super) struct Row {
    pub(super) key: String,
    /// The state, or why its JSON is not one this build reads.
    pub(super) state: Result<ToolState, String>,
    pub(super) version: i64,
    pub(super) replica: String,
}

/// A notification's payload: which registry was written, to which
/// version, by whom.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Notice {
    pub(super) registry: String,
    pub(super) version: i64,
    pub(super) replica: String,
}

impl Store {
    pub(super) fn new(pool: PgPool, registry: String, replica: String) -> Self {
        Store {
            pool,
            registry,
            replica,
        }
    }

    pub(super) fn is_closed(&self) -> bool {
        self.pool.is_closed()
    }

    /// A listener on the channel, holding one connection of the pool.
    /// It does not reconnect by itself: the caller reloads everything
    /// after connecting, since notifications sent meanwhile are gone.
    pub(super) async fn listen(&self) -> Result<PgListener, sqlx::Error> {
        let mut listener = PgListener::connect_with(&self.pool).await?;
        listener.eager_reconnect(false);
        listener.listen(CHANNEL).await?;
        Ok(listener)
    }

    /// The version another replica announced writing this registry at;
    /// `None` for another registry, this replica's own writes, or a
    /// payload that is not a [`Notice`].
    pub(super) fn notice(&self, payload: &str) -> Option<i64> {
        let notice: Notice = serde_json::from_str(payload).ok()?;
        (notice.registry == self.registry && notice.replica != self.replica)
            .then_some(notice.version)
    }

    /// Every row of the registry written at a version above `since`, in
    /// version order.
    pub(super) async fn rows_since(&self, since: i64) -> Result<Vec<Row>, sqlx::Error> {
        let mut connection = self.pool.acquire().await?;
        let rows = Statement::new(
            "SELECT tool_key, CAST(state AS TEXT) AS state, version, replica
             FROM toolwright_registry_state
             WHERE registry = $1 AND version > $2
             ORDER BY version",
        )
        .bind(self.registry.as_str())
        .bind(since)
        .fetch_all::<Postgres>(&mut connection)
        .await?;
        rows.iter()
            .map(|row| {
                let state = row.text("state")?;
                let state = serde_json::from_str::<ToolState>(&state)
                    .map_err(|error| error.to_string())
                    .and_then(
                        |state| match state.overridden.as_ref().and_then(|o| o.problem()) {
                            Some(problem) => Err(problem.to_owned()),
                            None => Ok(state),
                        },
                    );
                Ok(Row {
                    key: row.text("tool_key")?,
                    state,
                    version: row.int("version")?,
                    replica: row.text("replica")?,
                })
            })
            .collect()
    }

    /// Writes `states` as this replica's, at one new version, and
    /// notifies every replica when it commits.
    pub(super) async fn write(&self, states: &[(String, ToolState)]) -> Result<i64, sqlx::Error> {
        let lock = Lock {
            class: WRITES,
            key: lock_key(&self.registry),
        };
        let mut tx = Postgres::begin_locked(&self.pool, lock).await?;
        let version = Statement::new("SELECT nextval('toolwright_registry_versions') AS version")
            .fetch_one::<Postgres>(&mut tx)
            .await?
            .int("version")?;
        for (key, state) in states {
            let json = serde_json::to_string(state).map_err(|e| sqlx::Error::Encode(e.into()))?;
            Statement::new(
                "INSERT INTO toolwright_registry_state (registry, tool_key, state, version, replica)
                 VALUES ($1, $2, $3{as_json}, $4, $5)
                 ON CONFLICT (registry, tool_key) DO UPDATE
                 SET state = excluded.state, version = excluded.version, replica = excluded.replica",
            )
            .bind(self.registry.as_str())
            .bind(key.as_str())
            .bind(json)
            .bind(version)
            .bind(self.replica.as_str())
            .execute::<Postgres>(&mut tx)
            .await?;
        }
        let notice = Notice {
            registry: self.registry.clone(),
            version,
            replica: self.replica.clone(),
        };
        let payload = serde_json::to_string(&notice).map_err(|e| sqlx::Error::Encode(e.into()))?;
        // Sent when the transaction commits, and only then.
        Statement::new("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(payload)
            .execute::<Postgres>(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(version)
    }
}

/// The registry's key of the write lock: the same in every build and on
/// every replica, as a hash of its name must be.
fn lock_key(registry: &str) -> i32 {
    let digest = Sha256::digest(registry.as_bytes());
    i32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}
