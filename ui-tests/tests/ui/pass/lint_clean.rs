// The expansion is warning-free under `deny(warnings, unused_qualifications, missing_docs, ...)`
// and rustc's other allowed-by-default lints that could apply to it, for every kind of
// parameter and hook. (Clippy's groups are checked by `tests/tests/lints.rs`.)
#![deny(
    warnings,
    unused_qualifications,
    missing_docs,
    unreachable_pub,
    rust_2018_idioms,
    missing_copy_implementations,
    missing_debug_implementations,
    single_use_lifetimes,
    trivial_casts,
    trivial_numeric_casts,
    unused_lifetimes,
    unused_results,
    let_underscore_drop,
    redundant_lifetimes,
    unit_bindings
)]
//! A crate of tools held to the strictest lints.

use std::sync::Arc;

use toolwright::{Context, Inject, Invocation, tool, scope::{FromScope, Requirement, ResolveError, Scope}};

/// The caller.
#[derive(Debug, Clone, Copy)]
pub struct Actor {
    /// Whether the caller may write.
    pub writer: bool,
}

/// Where products live.
pub trait Products: Send + Sync {
    /// The product's name.
    fn name(&self, id: u64) -> Option<String>;
}

/// A database handle.
#[derive(Debug, Clone, Copy)]
pub struct Db;

/// A read-only view of the database.
#[derive(Debug)]
pub struct ReadOnly(pub Arc<Db>);

impl FromScope for ReadOnly {
    async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
        Ok(ReadOnly(scope.resolve::<Db>().await?))
    }

    fn requirements(out: &mut Vec<Requirement>) {
        out.push(Requirement::of::<Db>());
    }
}

/// A product was not found.
#[derive(Debug, Clone, Copy)]
pub struct NotFound;

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not found")
    }
}

impl std::error::Error for NotFound {}

/// Let writers write.
pub async fn writers<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool {
    actor.writer
}

/// Read a product's name.
#[tool(key = "products.name", effect = read, authorize = public, timeout = "1s")]
pub async fn product_name(
    /// The product's identifier.
    #[schemars(range(min = 1))]
    id: u64,
    /// Whether to shout.
    #[default = false]
    #[rename = "loud"]
    shout: bool,
    /// An optional suffix.
    suffix: Option<String>,
    products: Inject<dyn Products>,
    #[inject] _db: ReadOnly,
    caller: Context<Actor>,
) -> Result<String, NotFound> {
    let name = products.name(id).ok_or(NotFound)?;
    let name = if shout { name.to_uppercase() } else { name };
    let _ = caller.writer;
    Ok(name + suffix.as_deref().unwrap_or(""))
}

/// Rename a product.
#[tool(key = "products.rename", effect = write, authorize = writers, approve = writers)]
pub async fn rename_product(id: u64, r#type: String) {
    let _renamed = (id, r#type);
}

/// Echo a word, as an old client expects: deprecated, still served, and
/// registering it warns about nothing.
#[deprecated(note = "clients should call `products.name`")]
#[tool(key = "echo.old", effect = read, authorize = public)]
pub async fn old_echo(word: String) -> String {
    word
}

/// The same, the attributes the other way round.
#[tool(key = "echo.older", effect = read, authorize = public)]
#[deprecated]
pub async fn older_echo(word: String) -> String {
    word
}

/// Log a line; a private tool.
#[tool(key = "log.write", effect = read, authorize = public)]
async fn log_line(line: String) -> usize {
    line.len()
}

fn main() {
    let _ = log_line;
}
