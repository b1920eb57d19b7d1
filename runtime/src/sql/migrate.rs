//! The one migration runner: each store's schema versioned in
//! `toolwright_schema`, brought up to date under one lock.

use sqlx::Pool;

use super::{Dialect, Lock, Read, Statement};

/// A store's tables: its row in `toolwright_schema`, and what each
/// version of its schema adds.
#[derive(Debug)]
pub(crate) struct Schema {
    /// The store's name in `toolwright_schema` (`approvals`, `audit`).
    pub(crate) component: &'static str,
    /// One list of statements per version, in order, the first bringing a
    /// database without the store to version 1; each a template for
    /// [`Dialect::render`]. A version once released is never edited: a
    /// change is a version more. A statement that starts with `sqlite: `
    /// or `postgres: ` runs on that database only, for the changes the two
    /// cannot write alike (a `CHECK` widened: SQLite rebuilds the table).
    pub(crate) versions: &'static [&'static [&'static str]],
}

/// Why a store's schema could not be brought up to date.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MigrateError {
    /// The database failed or could not be reached.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    /// The schema is of a later toolwright: its rows may mean what this
    /// build cannot tell.
    #[error(
        "the {component} schema is at version {found}, newer than the {known} this build of toolwright knows"
    )]
    TooNew {
        component: &'static str,
        found: i64,
        known: usize,
    },
}

/// Every store's migrations take this lock, so stores starting at once on
/// one database, in any number of processes, take turns, and each finds
/// the schema as the one before left it. `IF NOT EXISTS` alone would race.
const MIGRATION: Lock = Lock {
    class: 0x7477_6170,
    key: 0,
};

/// The versions of every store; the same table in every release.
const VERSIONS: &str = "CREATE TABLE IF NOT EXISTS toolwright_schema (
    component TEXT PRIMARY KEY NOT NULL,
    version {bigint} NOT NULL
)";

/// Brings `schema` in the database of `pool` to its latest version, in one
/// transaction: the versions it lacks, then its row of `toolwright_schema`.
/// Run again, it finds nothing to do.
pub(crate) async fn migrate<DB: Dialect>(
    pool: &Pool<DB>,
    schema: &Schema,
) -> Result<(), MigrateError> {
    let mut tx = DB::begin_locked(pool, MIGRATION).await?;
    Statement::new(VERSIONS).execute::<DB>(&mut tx).await?;
    let found = Statement::new("SELECT version FROM toolwright_schema WHERE component = $1")
        .bind(schema.component)
        .fetch_optional::<DB>(&mut tx)
        .await?
        .map(|row| row.int("version"))
        .transpose()?;
    let (missing, latest) = schema.missing(found)?;
    for &statement in missing.iter().flat_map(|version| version.iter()) {
        let statement = match statement.split_once(": ") {
            Some((dialect @ ("sqlite" | "postgres"), only)) if dialect == DB::WORDS.name => only,
            Some(("sqlite" | "postgres", _)) => continue,
            _ => statement,
        };
        Statement::new(statement).execute::<DB>(&mut tx).await?;
    }
    if !missing.is_empty() {
        Statement::new(
            "INSERT INTO toolwright_schema (component, version) VALUES ($1, $2)
             ON CONFLICT (component) DO UPDATE SET version = excluded.version",
        )
        .bind(schema.component)
        .bind(latest)
        .execute::<DB>(&mut tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

impl Schema {
    /// The versions a schema at version `found` (`None`: no row yet)
    /// lacks, and the version they reach. A version newer than this build
    /// knows is refused.
    fn missing(
        &self,
        found: Option<i64>,
    ) -> Result<(&'static [&'static [&'static str]], i64), MigrateError> {
        let known = self.versions.len();
        let found = found.unwrap_or(0);
        match usize::try_from(found) {
            Ok(at) if at <= known => Ok((
                &self.versions[at..],
                i64::try_from(known).unwrap_or(i64::MAX),
            )),
            _ => Err(MigrateError::TooNew {
                component: self.component,
                found,
                known,
            }),
        }
    }
}
