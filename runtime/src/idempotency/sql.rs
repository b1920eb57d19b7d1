//! Idempotency keys in an SQL database: one type, [`SqlKeys`], for SQLite
//! and PostgreSQL, its statements written once (the SQL layer says why).

use std::time::SystemTime;

use sqlx::{Database, Pool};

use super::{Claim, Claimed, KeyStore, Recorded};
use crate::error::BoxError;
use crate::request::Digest;
use crate::sql::{Dialect, Read, Schema, Statement, migrate};
use crate::util::BoxFuture;
use crate::util::time::to_unix_ms;

/// A [`KeyStore`] in an SQL database, through an sqlx 0.8 pool: keys and
/// their calls' outcomes outlive the process, and in PostgreSQL every
/// replica of an application shares them, so that a key sent to two
/// replicas runs one call.
///
/// Name it by its database: `SqliteKeys` (`SqlKeys<Sqlite>`, feature
/// `sqlite`) and `PostgresKeys` (`SqlKeys<Postgres>`, feature `postgres`),
/// each made by its `connect`, which creates or updates the table
/// `toolwright_idempotency`. A claim is one statement (an insert that
/// replaces only an expired key), so of any number of concurrent claims
/// of one key, on any number of replicas, one is first.
///
/// ```no_run
/// use sqlx::postgres::PgPoolOptions;
/// use toolwright::idempotency::{Idempotency, PostgresKeys};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let pool = PgPoolOptions::new().connect("postgres://toolwright@db.internal/app").await.unwrap();
/// let keys = Idempotency::new(PostgresKeys::connect(pool).await.unwrap());
/// # let _ = keys;
/// # }
/// ```
#[derive(Debug)]
pub struct SqlKeys<DB: Database> {
    pool: Pool<DB>,
}

impl<DB: Database> Clone for SqlKeys<DB> {
    fn clone(&self) -> Self {
        SqlKeys {
            pool: self.pool.clone(),
        }
    }
}

/// `toolwright_idempotency`, as each version made it.
const SCHEMA: Schema = Schema {
    component: "idempotency",
    versions: &[&[
        "CREATE TABLE toolwright_idempotency (
            actor TEXT NOT NULL,
            idempotency_key TEXT NOT NULL,
            tool_key TEXT NOT NULL,
            digest TEXT NOT NULL,
            token TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'unknown')),
            output {json},
            message TEXT,
            claimed_at {bigint} NOT NULL,
            expires_at {bigint} NOT NULL,
            PRIMARY KEY (actor, idempotency_key)
        )",
        "CREATE INDEX toolwright_idempotency_by_expiry ON toolwright_idempotency (expires_at)",
    ]],
};

/// Keys in the database of `pool`, its table brought up to date first.
async fn migrated<DB: Dialect>(pool: Pool<DB>) -> Result<SqlKeys<DB>, BoxError> {
    migrate(&pool, &SCHEMA).await?;
    Ok(SqlKeys { pool })
}

/// The claim `claim` meets in the database of `pool`: its own, or the one
/// holding its key.
async fn claimed<DB: Dialect>(pool: &Pool<DB>, claim: &Claim) -> Result<Claimed, BoxError> {
    let mut conn = pool.acquire().await?;
    // A key removed between the two statements (purged as expired) is
    // claimed again; twice is plenty.
    for _ in 0..2 {
        let mine = Statement::new(
                "INSERT INTO toolwright_idempotency
                    (actor, idempotency_key, tool_key, digest, token, status, claimed_at, expires_at)
                 VALUES ($1, $2, $3, $4, $5, 'running', $6, $7)
                 ON CONFLICT (actor, idempotency_key) DO UPDATE SET
                    tool_key = excluded.tool_key, digest = excluded.digest,
                    token = excluded.token, status = 'running', output = NULL,
                    message = NULL, claimed_at = excluded.claimed_at,
                    expires_at = excluded.expires_at
                 WHERE toolwright_idempotency.expires_at <= excluded.claimed_at
                 RETURNING token",
            )
            .bind(claim.actor.as_str())
            .bind(claim.key.as_str())
            .bind(claim.tool.as_str())
            .bind(claim.digest.to_string())
            .bind(claim.token.as_str())
            .bind(to_unix_ms(claim.at))
            .bind(to_unix_ms(claim.expires_at))
            .fetch_optional::<DB>(&mut conn)
            .await?;
        if mine.is_some() {
            return Ok(Claimed::Fresh);
        }
        let holding = Statement::new(
            "SELECT tool_key, digest, status, CAST(output AS TEXT) AS output, message
                 FROM toolwright_idempotency WHERE actor = $1 AND idempotency_key = $2",
        )
        .bind(claim.actor.as_str())
        .bind(claim.key.as_str())
        .fetch_optional::<DB>(&mut conn)
        .await?;
        if let Some(row) = holding {
            return holding_claim(claim, &row);
        }
    }
    Err("an idempotency key kept disappearing while it was claimed".into())
}

/// What the claim in `row` tells `claim`.
fn holding_claim<R: Read>(claim: &Claim, row: &R) -> Result<Claimed, BoxError> {
    let digest: Digest = row.text("digest")?.parse()?;
    if !claim.same_call(&row.text("tool_key")?, &digest) {
        return Ok(Claimed::Conflict);
    }
    let recorded = match row.text("status")?.as_str() {
        "running" => return Ok(Claimed::Running),
        "succeeded" => {
            let output = row.maybe_text("output")?.unwrap_or_default();
            Recorded::Succeeded(serde_json::from_str(&output)?)
        }
        "failed" => Recorded::Failed(row.maybe_text("message")?.unwrap_or_default()),
        "unknown" => Recorded::Unknown,
        other => return Err(format!("an idempotency key has the unknown status {other:?}").into()),
    };
    Ok(Claimed::Recorded(recorded))
}

impl<DB: Dialect> KeyStore for SqlKeys<DB> {
    fn claim<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, Result<Claimed, BoxError>> {
        Box::pin(claimed(&self.pool, claim))
    }

    fn finish<'a>(
        &'a self,
        claim: &'a Claim,
        outcome: &'a Recorded,
    ) -> BoxFuture<'a, Result<(), BoxError>> {
        let (status, output, message) = match outcome {
            Recorded::Succeeded(value) => ("succeeded", Some(value.to_string()), None),
            Recorded::Failed(message) => ("failed", None, Some(message.clone())),
            Recorded::Unknown => ("unknown", None, None),
        };
        let statement = Statement::new(
            "UPDATE toolwright_idempotency
             SET status = $4, output = $5{as_json}, message = $6
             WHERE actor = $1 AND idempotency_key = $2 AND token = $3 AND status = 'running'",
        )
        .bind(claim.actor.as_str())
        .bind(claim.key.as_str())
        .bind(claim.token.as_str())
        .bind(status)
        .bind(output)
        .bind(message);
        Box::pin(run(&self.pool, statement))
    }

    fn release<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, Result<(), BoxError>> {
        let statement = Statement::new(
            "DELETE FROM toolwright_idempotency
             WHERE actor = $1 AND idempotency_key = $2 AND token = $3 AND status = 'running'",
        )
        .bind(claim.actor.as_str())
        .bind(claim.key.as_str())
        .bind(claim.token.as_str());
        Box::pin(run(&self.pool, statement))
    }

    fn purge(&self, now: SystemTime) -> BoxFuture<'_, Result<u64, BoxError>> {
        Box::pin(async move {
            let mut conn = self.pool.acquire().await?;
            let purged = Statement::new(
                "DELETE FROM toolwright_idempotency WHERE expires_at <= $1
                 RETURNING idempotency_key",
            )
            .bind(to_unix_ms(now))
            .fetch_all::<DB>(&mut conn)
            .await?;
            Ok(purged.len() as u64)
        })
    }
}

/// Runs `statement` on a connection of `pool`.
async fn run<DB: Dialect>(pool: &Pool<DB>, statement: Statement) -> Result<(), BoxError> {
    let mut conn = pool.acquire().await?;
    statement.execute::<DB>(&mut conn).await?;
    Ok(())
}

/// [`SqlKeys`] on PostgreSQL: idempotency keys every replica of an
/// application shares.
#[cfg(feature = "postgres")]
pub type PostgresKeys = SqlKeys<sqlx::Postgres>;

#[cfg(feature = "postgres")]
impl SqlKeys<sqlx::Postgres> {
    /// Keys in the database of `pool`, with their table created or brought
    /// up to date first (the row `idempotency` of `toolwright_schema` holds
    /// its version). Replicas starting at once take turns; connecting again
    /// changes nothing.
    pub async fn connect(pool: sqlx::PgPool) -> Result<Self, BoxError> {
        migrated(pool).await
    }
}

/// [`SqlKeys`] on SQLite: idempotency keys kept across restarts of one
/// process.
#[cfg(feature = "sqlite")]
pub type SqliteKeys = SqlKeys<sqlx::Sqlite>;

#[cfg(feature = "sqlite")]
impl SqlKeys<sqlx::Sqlite> {
    /// Keys in the database of `pool`, with their table created or brought
    /// up to date first. Connecting again changes nothing.
    ///
    /// ```
    /// use sqlx::SqlitePool;
    /// use toolwright::idempotency::{Idempotency, SqliteKeys};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let pool = SqlitePool::connect("sqlite::memory:").await.unwrap();
    /// let keys = Idempotency::new(SqliteKeys::connect(pool).await.unwrap());
    /// # let _ = keys;
    /// # }
    /// ```
    pub async fn connect(pool: sqlx::SqlitePool) -> Result<Self, BoxError> {
        migrated(pool).await
    }
}
