//! The code `#[tool]` generates is held to the strictest lints a user may
//! set: every rustc lint that is allowed by default and could apply, and
//! clippy's `pedantic`, `nursery` and `restriction` groups (CI runs clippy
//! with `-D warnings` over the tests). The generated code is spanned at
//! the tool's fn, so it is linted as the user's own code, at the user's
//! levels; `#[tool]` allows these lints on what it generates, and only
//! there: the fns below need their own `#[allow]`.
//!
//! If this file stops compiling (under `cargo test`) or stops passing
//! clippy, a user with these lints denied would be refused for code they
//! cannot change.

use std::sync::Arc;

use serde_json::json;
use toolwright::{
    CallError, Catalog, Container, Executor, Invocation,
    scope::{FromScope, Requirement, ResolveError, Scope},
};

/// The caller.
#[derive(Debug, Clone, Copy)]
pub struct Actor {
    writer: bool,
}

/// A database handle.
#[derive(Debug)]
pub struct Db;

/// A read-only view of the database, built per call.
#[derive(Debug)]
pub struct ReadOnly(Arc<Db>);

impl FromScope for ReadOnly {
    async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
        Ok(ReadOnly(scope.resolve::<Db>().await?))
    }

    fn requirements(out: &mut Vec<Requirement>) {
        out.push(Requirement::of::<Db>());
    }
}

/// No such label.
#[derive(Debug)]
pub struct NotFound;

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no such label")
    }
}

impl std::error::Error for NotFound {}

/// Let writers write.
async fn writers<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool {
    actor.writer
}

mod tools {
    //! Tools of every shape, under the strictest lints.
    #![deny(
        missing_copy_implementations,
        missing_debug_implementations,
        missing_docs,
        single_use_lifetimes,
        trivial_casts,
        trivial_numeric_casts,
        unused_lifetimes,
        unused_qualifications,
        unused_results,
        elided_lifetimes_in_paths,
        let_underscore_drop,
        redundant_lifetimes,
        unit_bindings,
        clippy::all,
        clippy::pedantic,
        clippy::nursery,
        clippy::restriction
    )]
    #![allow(
        clippy::blanket_clippy_restriction_lints,
        reason = "denying the whole group is what is being tested"
    )]
    #![allow(
        clippy::arbitrary_source_item_ordering,
        reason = "checked per module, not per item: a tool's struct is generated next to its fn, \
                  and the lint wants every struct above every fn"
    )]

    use toolwright::{Context, tool};

    use super::{Actor, NotFound, ReadOnly};

    /// Add two numbers: inputs only, documented or not.
    #[allow(clippy::restriction, clippy::pedantic, clippy::nursery)]
    #[tool(key = "math.add", effect = read, authorize = public)]
    pub(crate) async fn add(a: i64, b: i64) -> i64 {
        a + b
    }

    /// Look a label up; every kind of parameter.
    #[allow(clippy::restriction, clippy::pedantic, clippy::nursery)]
    #[tool(key = "labels.get", effect = read, authorize = public, timeout = "1s", tags = ["labels"])]
    pub(crate) async fn get_label(
        /// The label's number.
        #[schemars(range(min = 1))]
        id: u64,
        /// Whether to shout.
        #[default = false]
        #[rename = "loud"]
        shout: bool,
        /// An optional suffix.
        suffix: Option<String>,
        #[inject] db: ReadOnly,
        caller: Context<Actor>,
    ) -> Result<String, NotFound> {
        let _db: &super::Db = &db.0;
        let label = if id == 1 { "one" } else { return Err(NotFound) };
        let label = if shout || caller.writer {
            label.to_uppercase()
        } else {
            label.to_owned()
        };
        Ok(label + suffix.as_deref().unwrap_or(""))
    }

    /// Rename a label: a write behind hooks, returning nothing.
    #[allow(clippy::restriction, clippy::pedantic, clippy::nursery)]
    #[tool(
        key = "labels.rename",
        effect = write,
        authorize = super::writers,
        approve = super::writers
    )]
    pub(crate) async fn rename_label(id: u64, name: String) {
        let _renamed = (id, name);
    }
}

#[tokio::test]
async fn tools_under_the_strictest_lints_run_as_any_other() {
    let catalog = Catalog::builder()
        .register::<tools::GetLabelArgs>()
        .register::<tools::AddArgs>()
        .register::<tools::RenameLabelArgs>()
        .build()
        .unwrap();
    let container = Container::builder().app(Arc::new(Db)).build();
    let executor = Executor::new(catalog, container).unwrap();
    let reader = Actor { writer: false };

    let label = executor
        .invoke(
            "get_label",
            json!({"id": 1, "loud": true, "suffix": "!"}),
            &reader,
        )
        .await;
    assert_eq!(label.unwrap(), json!("ONE!"));
    let missing = executor
        .invoke("get_label", json!({"id": 2}), &reader)
        .await;
    assert!(
        matches!(missing, Err(CallError::Tool { .. })),
        "{missing:?}"
    );
    let sum = executor
        .invoke("add", json!({"a": 2, "b": 3}), &reader)
        .await;
    assert_eq!(sum.unwrap(), json!(5));
    let denied = executor
        .invoke("rename_label", json!({"id": 1, "name": "uno"}), &reader)
        .await;
    assert!(
        matches!(denied, Err(CallError::Denied { .. })),
        "{denied:?}"
    );
}
