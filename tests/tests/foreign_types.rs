//! Types from other crates as inputs. With schemars' `uuid1` and `chrono04`
//! features on beside toolwright (this crate's Cargo.toml, as the README
//! tells a user), a `uuid::Uuid` and chrono's dates are advertised with
//! their formats, and a value such a type refuses when it reads it is
//! reported at its parameter.

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Value, json};
use toolwright::{CallError, Catalog, Container, Executor, tool};
use uuid::Uuid;

/// Book the delivery of an order.
#[tool(key = "deliveries.book", effect = read, authorize = public)]
async fn book_delivery(
    /// The order to deliver.
    order_id: Uuid,
    /// The day to deliver on.
    day: NaiveDate,
    /// When the order was placed.
    placed_at: DateTime<Utc>,
) -> String {
    format!("{order_id} on {day}, placed {placed_at}")
}

fn executor() -> Executor {
    let catalog = Catalog::builder()
        .register::<BookDeliveryArgs>()
        .build()
        .unwrap();
    Executor::new(catalog, Container::default()).unwrap()
}

fn valid() -> Value {
    json!({
        "order_id": "67e55044-10b1-426f-9247-bb680e5fe0c8",
        "day": "2026-12-24",
        "placed_at": "2026-12-01T09:30:00Z",
    })
}

/// The `path: message` of every violation, or a panic if the call did not
/// fail on its arguments.
async fn refusal(executor: &Executor, arguments: Value) -> Vec<String> {
    match executor.invoke("book_delivery", arguments, &()).await {
        Err(CallError::InvalidArguments { violations, .. }) => violations
            .0
            .iter()
            .map(|v| format!("{}: {}", v.path, v.message))
            .collect(),
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

#[test]
fn uuids_and_dates_are_advertised_as_strings_with_their_formats() {
    let executor = executor();
    let tools = executor.tools();
    let schema = tools.get("book_delivery").unwrap().input_schema();
    let properties = &schema["properties"];
    for (field, format) in [
        ("order_id", "uuid"),
        ("day", "date"),
        ("placed_at", "date-time"),
    ] {
        assert_eq!(properties[field]["type"], "string", "{field}");
        assert_eq!(properties[field]["format"], format, "{field}");
    }
    assert_eq!(
        properties["order_id"]["description"],
        "The order to deliver."
    );
    assert_eq!(schema["required"], json!(["order_id", "day", "placed_at"]));
}

#[tokio::test]
async fn valid_uuids_and_dates_reach_the_body_as_their_types() {
    let answer = executor()
        .invoke("book_delivery", valid(), &())
        .await
        .unwrap();
    assert_eq!(
        answer,
        "67e55044-10b1-426f-9247-bb680e5fe0c8 on 2026-12-24, placed 2026-12-01 09:30:00 UTC"
    );
}

#[tokio::test]
async fn a_value_the_type_refuses_is_reported_at_its_parameter() {
    let executor = executor();
    let mut bad_uuid = valid();
    bad_uuid["order_id"] = json!("order-12");
    let violations = refusal(&executor, bad_uuid).await;
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert!(
        violations[0].starts_with("/order_id: UUID parsing failed: "),
        "{violations:?}"
    );

    let mut no_such_day = valid();
    no_such_day["day"] = json!("2026-02-30");
    assert_eq!(
        refusal(&executor, no_such_day).await,
        ["/day: input is out of range"]
    );

    let mut no_zone = valid();
    no_zone["placed_at"] = json!("2026-12-01T09:30:00");
    let violations = refusal(&executor, no_zone).await;
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert!(violations[0].starts_with("/placed_at: "), "{violations:?}");
}

#[tokio::test]
async fn what_the_schema_refuses_is_still_reported_by_the_schema() {
    let mut not_a_string = valid();
    not_a_string["order_id"] = json!(12);
    let violations = refusal(&executor(), not_a_string).await;
    assert_eq!(violations, ["/order_id: 12 is not of type \"string\""]);
}
