// One generic hook serves two tools.
use serde_json::json;
use toolwright::{CallError, Catalog, Container, Executor, Invocation, tool};

struct Actor {
    admin: bool,
}

async fn admins_only<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool {
    actor.admin
}

/// Count the users.
#[tool(key = "users.count", effect = read, authorize = admins_only)]
async fn count_users() -> u64 {
    3
}

/// Count the sessions.
#[tool(key = "sessions.count", effect = read, authorize = admins_only)]
async fn count_sessions() -> u64 {
    5
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder()
        .register::<CountUsersArgs>()
        .register::<CountSessionsArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let admin = Actor { admin: true };
    let guest = Actor { admin: false };
    assert_eq!(
        executor
            .invoke("count_users", json!({}), &admin)
            .await
            .unwrap(),
        json!(3)
    );
    assert_eq!(
        executor
            .invoke("count_sessions", json!({}), &admin)
            .await
            .unwrap(),
        json!(5)
    );
    let denied = executor
        .invoke("count_users", json!({}), &guest)
        .await
        .unwrap_err();
    assert!(matches!(denied, CallError::Denied { .. }));
}
