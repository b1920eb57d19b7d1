//! A statement of a store: its template and the values it binds, run on a
//! connection of any [`Dialect`].

use std::borrow::Cow;

use super::Dialect;
use super::driver::{Bind, Run};

/// A value a statement binds. The stores keep integers and text only
/// (times as Unix milliseconds, JSON as its text), either may be `NULL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// A 64-bit integer, or `NULL`.
    Int(Option<i64>),
    /// Text, or `NULL`.
    Text(Option<String>),
}

impl From<i64> for Value {
    fn from(int: i64) -> Self {
        Value::Int(Some(int))
    }
}

impl From<Option<i64>> for Value {
    fn from(int: Option<i64>) -> Self {
        Value::Int(int)
    }
}

impl From<String> for Value {
    fn from(text: String) -> Self {
        Value::Text(Some(text))
    }
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Value::Text(Some(text.to_owned()))
    }
}

impl From<Option<String>> for Value {
    fn from(text: Option<String>) -> Self {
        Value::Text(text)
    }
}

/// A template (see [`Dialect::render`]) and the values of its `$1`, `$2`,
/// … in order: what `sqlx::query(…).bind(…)` is, for code generic over
/// the database.
///
/// Each run renders the template again: a string replace, against a
/// round trip to the database.
#[derive(Debug, Clone)]
pub(crate) struct Statement {
    template: &'static str,
    values: Vec<Value>,
}

impl Statement {
    /// `template`, with nothing bound yet.
    pub(crate) fn new(template: &'static str) -> Self {
        Statement {
            template,
            values: Vec::new(),
        }
    }

    /// Binds `value` to the next parameter.
    pub(crate) fn bind(mut self, value: impl Into<Value>) -> Self {
        self.values.push(value.into());
        self
    }

    /// Runs the statement on `on`, and drops what it returns.
    pub(crate) async fn execute<DB: Dialect>(
        self,
        on: &mut DB::Connection,
    ) -> Result<(), sqlx::Error> {
        let (text, arguments) = self.prepare::<DB>()?;
        sqlx::query_with(&text, arguments)
            .execute(on.on())
            .await
            .map(drop)
    }

    /// The one row the statement returns, if any.
    pub(crate) async fn fetch_optional<DB: Dialect>(
        self,
        on: &mut DB::Connection,
    ) -> Result<Option<DB::Row>, sqlx::Error> {
        let (text, arguments) = self.prepare::<DB>()?;
        sqlx::query_with(&text, arguments)
            .fetch_optional(on.on())
            .await
    }

    /// The one row the statement returns; none is an error.
    pub(crate) async fn fetch_one<DB: Dialect>(
        self,
        on: &mut DB::Connection,
    ) -> Result<DB::Row, sqlx::Error> {
        let (text, arguments) = self.prepare::<DB>()?;
        sqlx::query_with(&text, arguments).fetch_one(on.on()).await
    }

    /// Every row the statement returns.
    pub(crate) async fn fetch_all<DB: Dialect>(
        self,
        on: &mut DB::Connection,
    ) -> Result<Vec<DB::Row>, sqlx::Error> {
        let (text, arguments) = self.prepare::<DB>()?;
        sqlx::query_with(&text, arguments).fetch_all(on.on()).await
    }

    /// The statement in `DB`'s words, and its values as `DB`'s arguments.
    fn prepare<'q, DB: Dialect>(
        self,
    ) -> Result<(Cow<'static, str>, DB::Arguments<'q>), sqlx::Error> {
        let mut arguments = DB::Arguments::default();
        for value in self.values {
            arguments.value(value).map_err(sqlx::Error::Encode)?;
        }
        Ok((DB::render(self.template), arguments))
    }
}
