//! The shop: a toolwright application on SQLite, or on PostgreSQL when
//! `DATABASE_URL` (or `--database`) is a `postgres://` URL; then `shop serve
//! --http` runs as several processes (replicas) on one database.
//!
//! Tools live in domain modules (`products`, `pricing`, `orders`), each with
//! its services and a `tools.rs` of `#[tool]` fns; [`database`] opens either
//! engine; [`app`] holds what the modules share (per-call transaction,
//! callers, approvals, hooks),
//! [`tokens`] the bearer tokens of `shop serve --http`, and [`cli`] the
//! command line, one module per command. `cargo run -p shop` runs the
//! narrated demo (`demo.rs`), which prints its tables as the commands do
//! (`table.rs`).

pub mod app;
pub mod cli;
pub mod database;
mod demo;
pub mod orders;
pub mod pricing;
pub mod products;
mod table;
pub mod tokens;

pub use app::{Actor, Caller, Shop, ShopError};
pub use database::{Database, Engine, open_database};
