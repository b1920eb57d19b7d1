//! The SQL layer under the database stores (the approval ledger, the
//! audit trail, and any later one): their statements are written once, as
//! templates, and run on SQLite or PostgreSQL through sqlx.
//!
//! **Why generics.** The statements, what they bind and how a row reads
//! back are the same for both databases, and sqlx's `Database` traits
//! already abstract the driver. So a store is one type generic over the
//! database (`SqlLedger<DB>`, as sqlx has `Pool<DB>`), and what does
//! differ, a few words of SQL and how a writer takes its lock, is the
//! [`Dialect`] of each database: data and one function, in one small
//! place. A macro would hide the one text from the compiler and from
//! readers; a trait object cannot carry sqlx's generic query API.
//!
//! Generic code on sqlx usually restates sqlx's bounds (`i64: Encode<'q,
//! DB>`, `&mut DB::Connection: Executor`, ...) in a `where` clause on
//! every impl, since Rust does not imply them. Here they are said once, in
//! `driver.rs`, and carried by `Dialect`'s supertrait; a store says only
//! `DB: Dialect`, and runs a [`Statement`] (`sqlx::query(..).bind(..)`
//! with the bounds already met).
//!
//! **Why a runner of our own.** sqlx 0.8's `migrate!`/`Migrator` keep
//! every migration of a database in one `_sqlx_migrations` table keyed by
//! version. An application runs its own `migrate!` on the database it
//! hands us (`examples/shop` does): our versions would collide with its
//! versions, and its `Migrator` would refuse the rows it does not know
//! (`VersionMissing`). [`migrate`] keeps a version per store in
//! `toolwright_schema`, the table every earlier release wrote, so a
//! database made by one is taken as it is.

mod dialect;
mod driver;
mod migrate;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;
mod statement;

pub(crate) use dialect::{Dialect, Lock, Words};
pub(crate) use driver::Read;
pub(crate) use migrate::{Schema, migrate};
pub(crate) use statement::{Statement, Value};
