// `#[inject]` on a parameter whose type implements `FromScope`.
use std::sync::Arc;

use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool, scope::{FromScope, Requirement, ResolveError, Scope}};

struct Db {
    name: &'static str,
}

/// A read-only view of the database.
struct ReadOnly(Arc<Db>);

impl FromScope for ReadOnly {
    async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
        Ok(ReadOnly(scope.resolve::<Db>().await?))
    }

    fn requirements(out: &mut Vec<Requirement>) {
        out.push(Requirement::of::<Db>());
    }
}

/// Name the database.
#[tool(key = "db.name", effect = read, authorize = public)]
async fn db_name(#[inject] db: ReadOnly) -> String {
    db.0.name.to_owned()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder().register::<DbNameArgs>().build().unwrap();
    let without_db = Executor::new(catalog.clone(), Container::builder().build());
    assert!(
        without_db.is_err(),
        "a missing provider is reported when the executor is built"
    );
    let container = Container::builder()
        .app::<Db>(Arc::new(Db { name: "main" }))
        .build();
    let executor = Executor::new(catalog, container).unwrap();
    assert_eq!(
        executor.invoke("db_name", json!({}), &()).await.unwrap(),
        json!("main")
    );
}
