//! What sqlx must offer for a database before generic code may run the
//! stores' statements on it, each said once: a trait implemented for
//! every type that has it, whose `where` clause holds sqlx's bounds.
//!
//! Rust does not carry a trait's `where` clauses to the code that names
//! the trait (rust-lang/rust#20671), so bounds such as `i64: Encode<'q,
//! DB>` would be written again on every generic store. It does carry
//! bounds on associated types: [`Dialect`](super::Dialect) asks these of
//! its `Arguments`, `Connection` and `Row`, and `DB: Dialect` is then all
//! a store, or the migration runner, says.

use sqlx::error::BoxDynError;
use sqlx::{Arguments, ColumnIndex, Database, Decode, Encode, Executor, Row, Type};

use super::Value;

/// Statement arguments that take the stores' [`Value`]s.
pub(crate) trait Bind<'q>: Arguments<'q> {
    /// Adds `value` as the next parameter.
    fn value(&mut self, value: Value) -> Result<(), BoxDynError>;
}

impl<'q, A> Bind<'q> for A
where
    A: Arguments<'q>,
    Option<i64>: Encode<'q, A::Database> + Type<A::Database>,
    Option<String>: Encode<'q, A::Database> + Type<A::Database>,
{
    fn value(&mut self, value: Value) -> Result<(), BoxDynError> {
        match value {
            Value::Int(int) => self.add(int),
            Value::Text(text) => self.add(text),
        }
    }
}

/// A connection that runs statements.
pub(crate) trait Run<DB: Database>: Send {
    /// This connection, as what sqlx runs a statement on.
    fn on(&mut self) -> impl Executor<'_, Database = DB>;
}

impl<DB: Database, C: Send> Run<DB> for C
where
    for<'c> &'c mut C: Executor<'c, Database = DB>,
{
    fn on(&mut self) -> impl Executor<'_, Database = DB> {
        self
    }
}

/// A row whose columns read back by name as integers and text, the two
/// types the stores keep; `NULL` only where the type is an `Option`.
pub(crate) trait Read: Row {
    /// The integer in `column`.
    fn int(&self, column: &'static str) -> Result<i64, sqlx::Error>;
    /// The integer in `column`, or `None` for `NULL`.
    fn maybe_int(&self, column: &'static str) -> Result<Option<i64>, sqlx::Error>;
    /// The text in `column`.
    fn text(&self, column: &'static str) -> Result<String, sqlx::Error>;
    /// The text in `column`, or `None` for `NULL`.
    fn maybe_text(&self, column: &'static str) -> Result<Option<String>, sqlx::Error>;
}

impl<R> Read for R
where
    R: Row,
    &'static str: ColumnIndex<R>,
    i64: for<'r> Decode<'r, R::Database> + Type<R::Database>,
    String: for<'r> Decode<'r, R::Database> + Type<R::Database>,
{
    fn int(&self, column: &'static str) -> Result<i64, sqlx::Error> {
        self.try_get(column)
    }

    fn maybe_int(&self, column: &'static str) -> Result<Option<i64>, sqlx::Error> {
        self.try_get(column)
    }

    fn text(&self, column: &'static str) -> Result<String, sqlx::Error> {
        self.try_get(column)
    }

    fn maybe_text(&self, column: &'static str) -> Result<Option<String>, sqlx::Error> {
        self.try_get(column)
    }
}
