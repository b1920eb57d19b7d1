//! The catalog: every tool linked into the binary, sorted, checked and
//! described once at start-up.

mod builder;
mod entry;
mod error;
mod set;

pub use builder::CatalogBuilder;
pub(crate) use entry::Declared;
#[cfg(feature = "mcp")]
pub(crate) use entry::OutputShape;
pub use entry::ToolEntry;
pub use error::{CatalogError, Conflict};
pub use set::Catalog;
