//! SQLite's words, and its one writer at a time.

use std::future::Future;

use sqlx::{Sqlite, SqlitePool, Transaction};

use super::{Dialect, Lock, Words};

impl Dialect for Sqlite {
    const WORDS: Words = Words {
        name: "sqlite",
        // The rowid; `AUTOINCREMENT` keeps a deleted row's id from coming back.
        id: "INTEGER PRIMARY KEY AUTOINCREMENT",
        // SQLite's integers are 64 bits.
        bigint: "INTEGER",
        json: "TEXT",
        as_json: "",
        // A statement that writes holds the database's one write lock.
        skip_locked: "",
    };

    fn begin_locked(
        pool: &SqlitePool,
        _: Lock,
    ) -> impl Future<Output = Result<Transaction<'static, Sqlite>, sqlx::Error>> + Send {
        // The write lock at once, which holds every lock: a second writer
        // waits here (up to the pool's busy timeout), not midway.
        pool.begin_with("BEGIN IMMEDIATE")
    }
}
