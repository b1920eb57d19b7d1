// A hook may answer `Result<bool, E>`; its error propagates as `CallError::Hook`.
use serde_json::json;
use toolwright::{CallError, Catalog, Container, Executor, Invocation, tool};

struct Actor {
    policy_store_up: bool,
}

async fn can_delete(
    actor: &Actor,
    _: &Invocation<'_, DeleteFileArgs>,
) -> Result<bool, std::io::Error> {
    if actor.policy_store_up {
        Ok(true)
    } else {
        Err(std::io::Error::other("policy store down"))
    }
}

async fn approve_delete(
    _: &Actor,
    call: &Invocation<'_, DeleteFileArgs>,
) -> Result<bool, std::io::Error> {
    Ok(!call.path.starts_with('/'))
}

/// Delete a file.
#[tool(key = "files.delete", effect = destructive, authorize = can_delete, approve = approve_delete)]
async fn delete_file(path: String) -> String {
    path
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder()
        .register::<DeleteFileArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let up = Actor {
        policy_store_up: true,
    };
    let down = Actor {
        policy_store_up: false,
    };
    let deleted = executor
        .invoke("delete_file", json!({"path": "a.txt"}), &up)
        .await
        .unwrap();
    assert_eq!(deleted, json!("a.txt"));
    let refused = executor
        .invoke("delete_file", json!({"path": "/etc"}), &up)
        .await
        .unwrap_err();
    assert!(matches!(refused, CallError::NotApproved { .. }));
    let failed = executor
        .invoke("delete_file", json!({"path": "a.txt"}), &down)
        .await
        .unwrap_err();
    assert!(matches!(failed, CallError::Hook { .. }));
}
