//! The shop: a toolwright application on SQLite.
//!
//! Tools live in domain modules (`products`, `pricing`, `orders`), each with
//! its services and a `tools.rs` of `#[tool]` fns; [`app`] holds what they
//! share (database, per-call transaction, callers, approvals, hooks),
//! [`tokens`] the bearer tokens of `shop serve --http`, and [`cli`] the
//! command line. `cargo run -p shop` runs a narrated demo.

pub mod app;
pub mod cli;
pub mod orders;
pub mod pricing;
pub mod products;
pub mod tokens;

pub use app::{Actor, Caller, Shop, ShopError, open_database};
