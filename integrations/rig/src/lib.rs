#![doc = include_str!("../docs/overview.md")]
#![deny(missing_docs)]

mod deferred;
mod hook;
mod log;
mod tools;

pub use deferred::{Deferred, DeferredCall, Outcome, ResumeError};
pub use tools::RigTools;
