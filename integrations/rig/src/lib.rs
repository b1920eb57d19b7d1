//! A toolwright [`Executor`](toolwright::Executor)'s tools for
//! [rig](https://docs.rs/rig-agent) agents, with writes deferred until a
//! person approves them.
//!
//! placeholder
#![deny(missing_docs)]

mod deferred;
mod hook;
mod log;
mod tools;

pub use deferred::{Deferred, DeferredCall, Outcome, ResumeError};
pub use tools::RigTools;
