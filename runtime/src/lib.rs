#![doc = include_str!("../docs/crate.md")]
#![deny(missing_docs)]

// Layers, lowest first: a module imports only modules on lines above its
// own, never one on its line or below (tests/tests/module_layers.rs checks
// it). A lower layer that must reach a higher one does it through a trait
// of its own that the higher one implements, wired together by the
// executor: the pipeline's `Watch` (observe's recording), observe's
// `CallTrail` and approval's `DecisionTrail` (the audit trail).
//   tool_str
//   util
//   effect concurrency secret request content disabled overrides decision sql field_schema
//   error args schema
//   approval context scope idempotency
//   invocation
//   hook
//   principal tool
//   dynamic_call
//   pipeline
//   registration
//   catalog
//   dynamic
//   registry
//   observe
//   audit
//   executor
//   web openapi
//   admin mcp providers
//   import inspect
//   __private
#[doc(hidden)]
#[path = "private/mod.rs"]
pub mod __private;
#[cfg(feature = "admin")]
pub mod admin;
pub mod approval;
mod args;
pub mod audit;
mod catalog;
mod concurrency;
mod content;
mod context;
mod decision;
mod disabled;
mod dynamic;
mod dynamic_call;
mod effect;
mod error;
pub mod executor;
mod field_schema;
mod hook;
pub mod idempotency;
#[cfg(any(feature = "import-mcp", feature = "import-openapi"))]
pub mod import;
pub mod inspect;
mod invocation;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod observe;
#[cfg(feature = "openapi")]
pub mod openapi;
mod overrides;
mod pipeline;
mod principal;
#[cfg(feature = "providers")]
pub mod providers;
mod registration;
pub mod registry;
mod request;
mod schema;
pub mod scope;
mod secret;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
mod tool;
mod tool_str;
mod util;
#[cfg(any(feature = "admin", feature = "mcp"))]
mod web;

// What a first program names; the rest is in the module of its concept.
pub use executor::{
    BoxError, CallError, Content, Contents, Context, Effect, Executor, ExecutorError, Invocation,
    Principal, Tool,
};
pub use registry::{Catalog, CatalogError};
pub use scope::{Container, Inject};

#[doc = include_str!("../docs/tool.md")]
pub use toolwright_macros::tool;
