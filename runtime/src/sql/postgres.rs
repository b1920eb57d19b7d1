//! PostgreSQL's words, and its advisory locks.

use sqlx::{PgPool, Postgres, Transaction};

use super::{Dialect, Lock, Words};

impl Dialect for Postgres {
    const WORDS: Words = Words {
        name: "postgres",
        id: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
        bigint: "BIGINT",
        // `json`, not `jsonb`: kept as the text that was written, and a
        // string holding `\u0000`, which `jsonb` refuses, still records.
        json: "JSON",
        // sqlx binds a `String` as `text`, which a `json` column refuses.
        as_json: "::json",
        // A row locked by one writer is passed over by the others rather
        // than waited for.
        skip_locked: "FOR UPDATE SKIP LOCKED",
    };

    async fn begin_locked(
        pool: &PgPool,
        lock: Lock,
    ) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
        let mut tx = pool.begin().await?;
        // A transaction's lock on two `int4`s, a key space apart from the
        // one-`bigint` locks applications usually take; it ends with the
        // transaction.
        sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
            .bind(lock.class)
            .bind(lock.key)
            .execute(&mut *tx)
            .await?;
        Ok(tx)
    }
}
