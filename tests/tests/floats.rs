//! An `f32` is the number it prints as, wherever toolwright turns a Rust
//! value into JSON: a tool's output, the canonical arguments of an approval
//! request and its digest, a typed call's checked arguments and a schema's
//! default. Widened to `f64` bit for bit, `0.1f32` would read
//! `0.10000000149011612`. And an `f32` is only ever a number JSON can
//! carry: a larger one would read as infinity, which JSON writes as `null`.

use serde::Serialize;
use serde_json::json;
use toolwright::{
    CallError, Catalog, Container, Executor, Invocation,
    approval::{ApprovalRequest, Digest},
    executor::Verdict,
    tool,
};

#[derive(Serialize, schemars::JsonSchema)]
struct Score {
    value: f32,
    history: Vec<f32>,
}

/// Score a text.
#[tool(key = "texts.score", effect = read, authorize = public)]
async fn score(
    /// The weight of the score.
    #[schemars(range(min = 0.1, max = 0.3))]
    weight: f32,
    /// The score's floor.
    #[default = 0.3]
    floor: f32,
) -> Score {
    Score {
        value: weight.max(floor),
        history: vec![0.1, 19.99],
    }
}

/// Asks a person to approve every call.
async fn ask(_: &(), _: &Invocation<'_, SetDiscountArgs>) -> Verdict {
    Verdict::Pending
}

/// Set the discount.
#[tool(key = "prices.discount", effect = write, authorize = public, approve = ask)]
async fn set_discount(rate: f32) -> f32 {
    rate
}

fn executor() -> Executor {
    let catalog = Catalog::builder()
        .register::<ScoreArgs>()
        .register::<SetDiscountArgs>()
        .build()
        .unwrap();
    Executor::new(catalog, Container::default()).unwrap()
}

#[tokio::test]
async fn an_f32_output_is_the_number_it_prints_as() {
    let output = executor()
        .invoke("score", json!({"weight": 0.1, "floor": 0.1}), &())
        .await
        .unwrap();
    assert_eq!(output, json!({"value": 0.1, "history": [0.1, 19.99]}));
    // As text, too: each number as it prints (the keys in whichever order
    // this build's `serde_json` keeps them).
    let text = output.to_string();
    assert!(text.contains(r#""history":[0.1,19.99]"#), "{text}");
    assert!(text.contains(r#""value":0.1"#), "{text}");
}

#[tokio::test]
async fn a_typed_f32_at_its_bound_is_accepted_as_the_same_json_is() {
    let executor = executor();
    // JSON `0.3` meets `maximum: 0.3`; so does the typed `0.3f32` it reads
    // as (whose binary value is a little over 0.3).
    let json = executor.invoke("score", json!({"weight": 0.3}), &()).await;
    assert!(json.is_ok(), "{json:?}");
    let typed = executor
        .call(
            ScoreArgs {
                weight: 0.3,
                floor: 0.1,
            },
            &(),
        )
        .await
        .unwrap();
    assert_eq!(typed.value, 0.3);
    // Over the bound is still refused, both ways.
    let over = ScoreArgs {
        weight: 0.31,
        floor: 0.3,
    };
    assert!(matches!(
        executor.call(over, &()).await,
        Err(CallError::InvalidArguments { .. })
    ));
    assert!(matches!(
        executor.invoke("score", json!({"weight": 0.31}), &()).await,
        Err(CallError::InvalidArguments { .. })
    ));
}

#[tokio::test]
async fn an_approval_request_shows_the_f32_the_caller_sent() {
    let pending = executor()
        .invoke("set_discount", json!({"rate": 0.15}), &())
        .await;
    let Err(CallError::ApprovalRequired(request)) = pending else {
        panic!("expected an approval request, got {pending:?}");
    };
    let ApprovalRequest {
        arguments, digest, ..
    } = *request;
    assert_eq!(arguments, json!({"rate": 0.15}));
    assert_eq!(
        digest,
        Digest::of("prices.discount", &json!({"rate": 0.15}))
    );
}

#[test]
fn an_f32_default_is_advertised_as_it_prints() {
    let catalog = Catalog::builder().register::<ScoreArgs>().build().unwrap();
    let schema = catalog.get("score").unwrap().input_schema();
    assert_eq!(schema["properties"]["floor"]["default"], json!(0.3));
    assert_eq!(schema["properties"]["weight"]["maximum"], json!(0.3));
}

#[tokio::test]
async fn an_f32_too_large_for_its_type_is_refused_not_approved_as_null() {
    let executor = executor();
    // Read as an `f32`, these are infinities, which an approval request
    // would show (and its digest cover) as `null`.
    for rate in [1e300, -1e39] {
        let call = executor
            .invoke("set_discount", json!({ "rate": rate }), &())
            .await;
        let Err(CallError::InvalidArguments { violations, .. }) = call else {
            panic!("{rate}: expected invalid arguments, got {call:?}");
        };
        assert_eq!(violations.0[0].path, "/rate");
    }
    // So does a read tool, for an `f32` that has a default.
    let call = executor
        .invoke("score", json!({"weight": 0.2, "floor": 1e39}), &())
        .await;
    assert!(
        matches!(call, Err(CallError::InvalidArguments { .. })),
        "{call:?}"
    );
    // A typed call cannot carry an infinity either: its JSON is `null`.
    let typed = executor
        .call(
            SetDiscountArgs {
                rate: f32::INFINITY,
            },
            &(),
        )
        .await;
    assert!(
        matches!(typed, Err(CallError::InvalidArguments { .. })),
        "{typed:?}"
    );
    // The largest `f32`, as it prints, is still an `f32`.
    let largest = executor
        .invoke("set_discount", json!({"rate": 3.4028235e38}), &())
        .await;
    let Err(CallError::ApprovalRequired(request)) = largest else {
        panic!("expected an approval request, got {largest:?}");
    };
    assert_eq!(request.arguments, json!({"rate": 3.4028235e38}));
    let tools = executor.tools();
    let schema = tools.get("set_discount").unwrap().input_schema();
    assert_eq!(schema["properties"]["rate"]["maximum"], json!(3.4028235e38));
}
