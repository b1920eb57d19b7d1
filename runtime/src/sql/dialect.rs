//! What differs between the databases: a few words of SQL, and how a
//! writer takes its lock. Everything else is written once.

use std::borrow::Cow;
use std::future::Future;

use sqlx::{Database, IntoArguments, Pool, Transaction};

use super::driver::{Bind, Read, Run};

/// A database the stores run on. The stores' statements are templates
/// whose slots (`{id}`, `{bigint}`, `{json}`, `{as_json}`,
/// `{skip_locked}`) take this dialect's [`Words`].
///
/// Its supertrait asks of the database's arguments, connections and rows
/// what generic code needs to run a [`Statement`](super::Statement) and
/// read its rows (see `driver.rs`): Rust carries these bounds to every user
/// of `Dialect`, so `DB: Dialect` is all a store says.
pub(crate) trait Dialect:
    for<'q> Database<
        Arguments<'q>: IntoArguments<'q, Self> + Bind<'q>,
        Connection: Run<Self>,
        Row: Read,
    >
{
    /// The words the slots take.
    const WORDS: Words;

    /// A transaction that holds `lock` until it ends: another holding the
    /// same lock, in this process or another, waits for it.
    fn begin_locked(
        pool: &Pool<Self>,
        lock: Lock,
    ) -> impl Future<Output = Result<Transaction<'static, Self>, sqlx::Error>> + Send;

    /// `template` with its slots filled; the text itself when it has none.
    fn render(template: &'static str) -> Cow<'static, str> {
        if !template.contains('{') {
            return Cow::Borrowed(template);
        }
        let words = Self::WORDS;
        let slots = [
            ("{id}", words.id),
            ("{bigint}", words.bigint),
            ("{json}", words.json),
            ("{as_json}", words.as_json),
            ("{skip_locked}", words.skip_locked),
        ];
        let text = slots
            .iter()
            .fold(template.to_owned(), |text, (slot, word)| {
                text.replace(slot, word)
            });
        Cow::Owned(text)
    }
}

/// The words of a dialect's SQL that the other does not share.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Words {
    /// The database's name (`sqlite`, `postgres`), as a migration
    /// statement meant for it alone starts (`sqlite: …`).
    pub(crate) name: &'static str,
    /// `{id}`: a primary key the database numbers from 1 up, never
    /// handing out the same number twice.
    pub(crate) id: &'static str,
    /// `{bigint}`: a signed 64-bit integer column.
    pub(crate) bigint: &'static str,
    /// `{json}`: a column of JSON, kept as the text that was written.
    pub(crate) json: &'static str,
    /// `{as_json}`: follows a text parameter written to a `{json}` column.
    pub(crate) as_json: &'static str,
    /// `{skip_locked}`: ends a `SELECT` of the rows the statement then
    /// updates, so that concurrent writers each take other rows.
    pub(crate) skip_locked: &'static str,
}

/// A lock that writers take for one transaction; two with the same class
/// and key never run at once.
#[derive(Debug, Clone, Copy)]
// SQLite reads neither field: its one write lock holds every lock.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) struct Lock {
    /// What the lock guards (e.g. migrations), one number per use.
    pub(crate) class: i32,
    /// Which one of them; 0 where there is only one.
    pub(crate) key: i32,
}
