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
//   effect concurrency secret request content disabled overrides decision sql
//   error args schema
//   approval context scope
//   invocation inject
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
//   web
//   admin import mcp providers
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
mod executor;
mod hook;
#[cfg(feature = "import-mcp")]
pub mod import;
mod inject;
mod invocation;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod observe;
mod overrides;
mod pipeline;
mod principal;
#[cfg(feature = "providers")]
pub mod providers;
mod registration;
mod registry;
mod request;
mod schema;
mod scope;
mod secret;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
mod tool;
mod tool_str;
mod util;
#[cfg(any(feature = "admin", feature = "mcp"))]
mod web;

pub use approval::Approvals;
pub use catalog::{Catalog, CatalogBuilder, CatalogError, Conflict, ToolEntry};
pub use concurrency::Concurrency;
pub use content::{Content, Contents, Embedded};
pub use context::Context;
pub use decision::Decision;
pub use disabled::Disabled;
pub use dynamic::{DynamicTool, DynamicToolBuilder, DynamicToolError, DynamicToolProblem};
pub use dynamic_call::{Arguments, DynamicCall};
pub use effect::Effect;
pub use error::{BoxError, CallError, HookKind, Violation, Violations};
pub use executor::{
    DEFAULT_MAX_RESULT, Executor, ExecutorBuilder, ExecutorError, ExecutorProblem, Preflight,
};
pub use hook::{IntoVerdict, Verdict};
pub use inject::{FromScope, Inject};
pub use invocation::Invocation;
pub use overrides::Override;
pub use principal::Principal;
pub use registration::Registration;
pub use registry::{
    Change, ChangeKind, Changes, Missed, NamespaceState, Policy, Reason, Registry, RegistryError,
    RegistryState, Restored, Rule, Selector, ToolState, Tools, View,
};
pub use request::{ApprovalRequest, Digest, ParseDigestError};
pub use scope::{
    Container, ContainerBuilder, FinalizerOutput, Outcome, RequestFactory, Requirement,
    ResolveError, Scope,
};
pub use tool::{Location, Tool};
pub use tool_str::ToolStr;
pub use util::BoxFuture;

#[doc = include_str!("../docs/tool.md")]
pub use toolwright_macros::tool;
