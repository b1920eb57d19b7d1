//! Namespaces, merging, splitting and the registry's state as data: what a
//! caller sees and calls, and bad input that leaves the registry as it was.

use serde_json::json;
use toolwright::{
    CallError, Catalog, Container, Executor, Invocation,
    approval::Digest,
    executor::Verdict,
    registry::{ChangeKind, Registry, RegistryError, RegistryState, Selector},
    tool,
};

/// Look up an order.
#[tool(key = "orders.get", effect = read, authorize = public)]
async fn get_order(id: u64) -> u64 {
    id
}

/// Cancel an order.
#[tool(key = "orders.cancel", effect = destructive, authorize = public, approve = pending)]
async fn cancel_order(id: u64) -> bool {
    id > 0
}

/// A tool whose name is already near the 64-character limit.
#[tool(
    key = "reports.quarterly",
    name = "generate_the_quarterly_revenue_report_for_every_region_in_detail",
    effect = read,
    authorize = public
)]
async fn quarterly() -> u64 {
    4
}

fn pending(_: &(), _: &Invocation<'_, CancelOrderArgs>) -> Verdict {
    Verdict::Pending
}

fn orders() -> Catalog {
    Catalog::builder()
        .register::<GetOrderArgs>()
        .register::<CancelOrderArgs>()
        .build()
        .unwrap()
}

fn keys_and_names(registry: &Registry) -> Vec<(String, String)> {
    registry
        .tools()
        .iter()
        .map(|t| (t.key().to_owned(), t.name().to_owned()))
        .collect()
}

#[tokio::test]
async fn a_mounted_tool_is_called_and_approved_under_its_namespaced_key() {
    let registry = Registry::new(Catalog::builder().build().unwrap());
    registry.mount("eu", orders()).unwrap();
    registry.mount("us.east", orders()).unwrap();
    assert_eq!(
        keys_and_names(&registry),
        [
            ("eu.orders.cancel".to_owned(), "eu_cancel_order".to_owned()),
            ("eu.orders.get".to_owned(), "eu_get_order".to_owned()),
            (
                "us.east.orders.cancel".to_owned(),
                "us_east_cancel_order".to_owned()
            ),
            (
                "us.east.orders.get".to_owned(),
                "us_east_get_order".to_owned()
            ),
        ]
    );
    let executor = Executor::new(registry, Container::default()).unwrap();
    let found = executor
        .invoke("us_east_get_order", json!({"id": 3}), &())
        .await;
    assert_eq!(found.unwrap(), 3);
    assert!(matches!(
        executor.invoke("get_order", json!({"id": 3}), &()).await,
        Err(CallError::UnknownTool { .. })
    ));

    // The approval binds the key it is served under: one region's approval
    // is not another's.
    let pending = executor
        .invoke("eu_cancel_order", json!({"id": 3}), &())
        .await
        .unwrap_err();
    let CallError::ApprovalRequired(request) = pending else {
        panic!("{pending:?}");
    };
    assert_eq!(request.key, "eu.orders.cancel");
    assert_eq!(request.name, "eu_cancel_order");
    assert_eq!(
        request.digest,
        Digest::of("eu.orders.cancel", &json!({"id": 3}))
    );
    // Errors name the tool as served, too.
    let invalid = executor
        .invoke("us_east_get_order", json!({"id": "three"}), &())
        .await;
    assert!(
        matches!(
            &invalid,
            Err(CallError::InvalidArguments { key, .. }) if key == "us.east.orders.get"
        ),
        "{invalid:?}"
    );
    let typed = executor.call(GetOrderArgs { id: 5 }, &()).await;
    assert_eq!(
        typed.unwrap(),
        5,
        "a typed call runs the type's first mount"
    );
}

#[test]
fn a_long_name_is_shortened_with_a_hash_within_every_providers_rule() {
    let registry = Registry::new(Catalog::builder().build().unwrap());
    let reports = Catalog::builder()
        .register::<QuarterlyArgs>()
        .build()
        .unwrap();
    registry.mount("finance", reports.clone()).unwrap();
    registry.mount("finance.archive", reports).unwrap();
    let tools = registry.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    for name in &names {
        assert_eq!(name.len(), 64, "{name}");
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
    }
    assert!(names[0].starts_with("finance_archive_generate_the_quarterly"));
    assert!(names[1].starts_with("finance_generate_the_quarterly"));
    assert_ne!(names[0], names[1]);
}

#[test]
fn collisions_and_bad_namespaces_are_errors_that_change_nothing() {
    let registry = Registry::new(orders());
    let before = registry.generation();
    let error = registry.merge(&Registry::new(orders())).unwrap_err();
    let RegistryError::Conflict(conflicts) = &error else {
        panic!("{error:?}");
    };
    assert_eq!(
        conflicts.conflicts().len(),
        4,
        "both keys and both names, each naming both tools"
    );
    assert!(
        error
            .to_string()
            .contains("duplicate tool key `orders.cancel`: `cancel_order` declared at ")
    );

    for namespace in ["EU", "eu..west", "", "9eu", "eu-west"] {
        let error = registry.mount(namespace, orders()).unwrap_err();
        assert!(
            matches!(error, RegistryError::InvalidNamespace { .. }),
            "{namespace}"
        );
    }
    registry.mount("eu", orders()).unwrap();
    assert!(registry.mount("eu", orders()).is_err(), "mounted twice");
    assert!(registry.flatten("eu").is_err(), "flattening would collide");
    assert!(registry.flatten("us").is_err(), "nothing under it");
    assert_eq!(
        registry.generation(),
        before + 1,
        "only the good mount changed anything"
    );
    assert_eq!(registry.tools().len(), 4);
}

#[test]
fn merge_split_and_flatten_keep_each_tools_state() {
    let registry = Registry::new(Catalog::builder().build().unwrap());
    let eu = Registry::new(orders());
    eu.disable(&Selector::name("cancel_order"), "strike")
        .unwrap();
    let mut changes = registry.subscribe();
    let mounted = registry.mount("eu", eu).unwrap();
    assert_eq!(mounted.kind, ChangeKind::Registered);
    assert_eq!(registry.is_enabled("eu_cancel_order"), Some(false));

    let split = registry.split(Selector::namespace("eu"));
    split.flatten("eu").unwrap();
    assert_eq!(
        keys_and_names(&split),
        [("orders.get".to_owned(), "get_order".to_owned())],
        "listed: the disabled tool is not"
    );
    assert_eq!(
        split.tools().disabled("cancel_order").unwrap().reason,
        "strike"
    );
    assert_eq!(
        registry.is_enabled("eu_get_order"),
        Some(true),
        "the original is untouched"
    );

    registry.unregister(&Selector::namespace("eu")).unwrap();
    assert!(registry.tools().with_disabled().next().is_none());
    let heard: Vec<_> =
        std::iter::from_fn(|| futures_next(&mut changes).map(|change| (change.kind, change.keys)))
            .collect();
    assert_eq!(
        heard,
        [
            (
                ChangeKind::Registered,
                vec!["eu.orders.cancel".to_owned(), "eu.orders.get".to_owned()]
            ),
            (
                ChangeKind::Unregistered,
                vec!["eu.orders.cancel".to_owned(), "eu.orders.get".to_owned()]
            ),
        ]
    );
}

/// The next change already announced, without waiting.
fn futures_next(
    changes: &mut toolwright::registry::Changes,
) -> Option<toolwright::registry::Change> {
    let mut next = std::pin::pin!(changes.next());
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match next.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(Some(Ok(change))) => Some(change),
        _ => None,
    }
}

#[test]
fn state_round_trips_as_json_and_reports_unknown_tools() {
    let registry = Registry::new(Catalog::builder().build().unwrap());
    registry.mount("eu", orders()).unwrap();
    registry
        .disable(&Selector::name("eu_cancel_order"), "strike")
        .unwrap();
    let saved = serde_json::to_string(&registry.state()).unwrap();

    let restarted = Registry::new(Catalog::builder().build().unwrap());
    restarted
        .mount(
            "eu",
            Catalog::builder()
                .register::<GetOrderArgs>()
                .build()
                .unwrap(),
        )
        .unwrap();
    let state: RegistryState = serde_json::from_str(&saved).unwrap();
    let restored = restarted.restore(&state).unwrap();
    assert_eq!(
        restored.unknown,
        ["eu.orders.cancel"],
        "not served here: reported"
    );
    assert!(
        restored.change.keys.is_empty(),
        "the known tool already had its state"
    );

    let garbled = serde_json::from_str::<RegistryState>(r#"{"generation": "one", "tools": {}}"#);
    assert!(garbled.unwrap_err().to_string().contains("invalid type"));
}
