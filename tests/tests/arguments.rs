//! What a tool's generated argument struct reads and writes: the
//! `Serialize` and `Deserialize` impls `#[tool]` writes out (instead of
//! deriving them) accept and refuse what the derive did, with its messages.

use serde_json::{Value, json};
use toolwright::{CallError, Catalog, Container, Executor, tool};

/// List the orders of a customer.
#[tool(key = "shop.orders", effect = read, authorize = public)]
async fn list_orders(
    #[rename = "customerId"] customer_id: u64,
    status: Option<String>,
    #[default = 20] limit: u32,
    tags: Vec<String>,
) -> (u64, Option<String>, u32, usize) {
    (customer_id, status, limit, tags.len())
}

/// Say hello; takes nothing.
#[tool(key = "shop.hello", effect = read, authorize = public)]
async fn hello() -> &'static str {
    "hello"
}

fn parse(text: &str) -> Result<ListOrdersArgs, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

#[test]
fn every_field_is_read_by_its_wire_name_with_defaults_and_options_filled_in() {
    let args = parse(r#"{"customerId": 7, "tags": ["a", "b"]}"#).unwrap();
    assert_eq!(args.customer_id, 7);
    assert_eq!(args.status, None);
    assert_eq!(args.limit, 20, "the `#[default]` value");
    assert_eq!(args.tags, ["a", "b"]);

    let args = parse(r#"{"tags": [], "limit": 3, "status": "open", "customerId": 1}"#).unwrap();
    assert_eq!((args.customer_id, args.limit), (1, 3));
    assert_eq!(args.status.as_deref(), Some("open"));
    // A null for an `Option` is `None`, as with the derive.
    let args = parse(r#"{"customerId": 1, "tags": [], "status": null}"#).unwrap();
    assert_eq!(args.status, None);
}

#[test]
fn bad_objects_are_refused_with_serdes_messages() {
    let refused = |text: &str| parse(text).expect_err("refused");
    assert!(
        refused(r#"{"tags": []}"#).starts_with("missing field `customerId`"),
        "{}",
        refused(r#"{"tags": []}"#)
    );
    assert!(
        refused(r#"{"customerId": 1, "tags": [], "customer_id": 2}"#).starts_with(
            "unknown field `customer_id`, expected one of `customerId`, `status`, `limit`, `tags`"
        ),
        "the Rust name of a renamed field is unknown"
    );
    assert!(
        refused(r#"{"customerId": 1, "customerId": 2, "tags": []}"#)
            .starts_with("duplicate field `customerId`")
    );
    assert!(
        refused(r#"{"customerId": "7", "tags": []}"#)
            .starts_with("invalid type: string \"7\", expected u64")
    );
    // Arguments are an object: an array in field order is not taken.
    assert!(
        refused(r#"[7, null, 20, []]"#)
            .starts_with("invalid type: sequence, expected struct ListOrdersArgs")
    );
    assert!(
        refused("42").starts_with("invalid type: integer `42`, expected struct ListOrdersArgs")
    );
}

#[test]
fn serializing_writes_every_field_by_its_wire_name() {
    let args = parse(r#"{"customerId": 7, "tags": ["x"]}"#).unwrap();
    assert_eq!(
        serde_json::to_value(&args).unwrap(),
        json!({"customerId": 7, "status": null, "limit": 20, "tags": ["x"]})
    );
    let hello: HelloArgs = serde_json::from_value(json!({})).unwrap();
    assert_eq!(serde_json::to_value(&hello).unwrap(), json!({}));
    assert_eq!(
        serde_json::from_value::<HelloArgs>(json!({"x": 1}))
            .expect_err("refused")
            .to_string(),
        "unknown field `x`, there are no fields"
    );
}

#[tokio::test]
async fn the_executor_reads_the_same_way() {
    let catalog = Catalog::builder()
        .register::<ListOrdersArgs>()
        .register::<HelloArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let answer = executor
        .invoke("list_orders", json!({"customerId": 3, "tags": ["a"]}), &())
        .await
        .unwrap();
    assert_eq!(answer, json!([3, null, 20, 1]));
    for bad in [
        json!({"customerId": 3}),
        json!({"customerId": 3, "tags": [], "extra": true}),
        json!([3, null, 20, []]),
        Value::Null,
    ] {
        let error = executor
            .invoke("list_orders", bad.clone(), &())
            .await
            .unwrap_err();
        assert!(
            matches!(
                &error,
                CallError::InvalidArguments { key, .. } if key == "shop.orders"
            ),
            "{bad}: {error}"
        );
    }
    assert_eq!(
        executor.invoke("hello", json!({}), &()).await.unwrap(),
        json!("hello")
    );
}

/// A nested input type: its schema goes under `$defs`.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Window {
    /// Days back.
    days: u16,
}

/// Search the catalog.
#[tool(key = "shop.search", effect = read, authorize = public)]
async fn search_catalog(
    /// # Query
    ///
    /// Words to match,
    ///   indented on the second line.
    query: String,
    /// Only in stock.
    #[rename = "inStock"]
    in_stock: Option<bool>,
    /// How many.
    #[default = 10]
    limit: u8,
    window: Option<Window>,
    labels: Vec<String>,
) -> usize {
    let _ = (window, labels, in_stock);
    query.len() + usize::from(limit)
}

fn ten() -> u8 {
    10
}

// What schemars' derive makes of the same inputs, with the same doc.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
/// The arguments of the [`search_catalog`] tool.
struct DerivedSearchCatalogArgs {
    /// # Query
    ///
    /// Words to match,
    ///   indented on the second line.
    query: String,
    /// Only in stock.
    #[serde(rename = "inStock")]
    in_stock: Option<bool>,
    /// How many.
    #[serde(default = "ten")]
    limit: u8,
    window: Option<Window>,
    labels: Vec<String>,
}

/// Book a table.
#[allow(clippy::too_many_arguments, reason = "one input per validation")]
#[tool(key = "shop.book", effect = read, authorize = public)]
async fn book_table(
    /// Guests.
    #[schemars(range(min = 1, max = 12))]
    guests: u8,
    /// Name on the booking.
    #[schemars(length(min = 2, max = 40), regex(pattern = r"^[A-Za-z ]+$"))]
    name: String,
    #[schemars(length(equal = 3))] codes: Vec<String>,
    #[schemars(email)] contact: Option<String>,
    #[schemars(url)] site: String,
    /// Percent off.
    #[schemars(range(max = MAX_DISCOUNT))]
    #[default = 10]
    discount: u32,
    #[schemars(range(min = -5))] offset: Option<i64>,
    // Bounds that do not fit the type are dropped, as by the derive.
    #[schemars(range(min = 1), length(max = 2))] window: Option<Window>,
) -> usize {
    let _ = (codes, contact, site, offset, window, discount);
    usize::from(guests) + name.len()
}

const MAX_DISCOUNT: u32 = 50;

fn ten_percent() -> u32 {
    10
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
/// The arguments of the [`book_table`] tool.
struct DerivedBookTableArgs {
    /// Guests.
    #[schemars(range(min = 1, max = 12))]
    guests: u8,
    /// Name on the booking.
    #[schemars(length(min = 2, max = 40), regex(pattern = r"^[A-Za-z ]+$"))]
    name: String,
    #[schemars(length(equal = 3))]
    codes: Vec<String>,
    #[schemars(email)]
    contact: Option<String>,
    #[schemars(url)]
    site: String,
    /// Percent off.
    #[schemars(range(max = MAX_DISCOUNT))]
    #[serde(default = "ten_percent")]
    discount: u32,
    #[schemars(range(min = -5))]
    offset: Option<i64>,
    #[schemars(range(min = 1), length(max = 2))]
    window: Option<Window>,
}

#[test]
fn the_written_schema_applies_schemars_validations_as_the_derive_does() {
    let mut written = schemars::schema_for!(BookTableArgs).to_value();
    let mut derived = schemars::schema_for!(DerivedBookTableArgs).to_value();
    written.as_object_mut().unwrap().remove("title");
    derived.as_object_mut().unwrap().remove("title");
    assert_eq!(written, derived);
    let properties = &written["properties"];
    assert_eq!(properties["guests"]["minimum"], 1);
    assert_eq!(properties["guests"]["maximum"], 12);
    assert_eq!(properties["name"]["maxLength"], 40);
    assert_eq!(properties["name"]["pattern"], "^[A-Za-z ]+$");
    assert_eq!(properties["codes"]["minItems"], 3);
    assert_eq!(properties["contact"]["format"], "email");
    assert_eq!(properties["site"]["format"], "uri");
    assert_eq!(properties["discount"]["maximum"], 50);
    assert_eq!(properties["offset"]["minimum"], -5);
    if keys_sorted() {
        assert_eq!(
            serde_json::to_string(&written).unwrap(),
            serde_json::to_string(&derived).unwrap()
        );
    }
}

#[tokio::test]
async fn the_executor_enforces_the_validations_of_a_written_schema() {
    let catalog = Catalog::builder()
        .register::<BookTableArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let valid =
        json!({"guests": 2, "name": "Ada", "codes": ["a", "b", "c"], "site": "https://x.test"});
    assert_eq!(
        executor
            .invoke("book_table", valid.clone(), &())
            .await
            .unwrap(),
        json!(5)
    );
    for (field, value) in [
        ("guests", json!(0)),
        ("name", json!("A")),
        ("name", json!("Ada 1")),
        ("codes", json!(["a"])),
        ("discount", json!(51)),
    ] {
        let mut arguments = valid.clone();
        arguments[field] = value;
        let refused = executor.invoke("book_table", arguments, &()).await;
        assert!(
            matches!(refused, Err(CallError::InvalidArguments { .. })),
            "{field}: {refused:?}"
        );
    }
}

#[test]
fn the_argument_struct_is_debug_as_a_caller_sends_it_in_field_order_fields_of_any_type_included() {
    let args = parse(r#"{"customerId": 7, "tags": ["a"]}"#).unwrap();
    assert_eq!(
        format!("{args:?}"),
        r#"ListOrdersArgs { customerId: 7, status: null, limit: 20, tags: ["a"] }"#
    );
    // `Window` is not `Debug`; it is `Serialize`, as every input is.
    let args: SearchCatalogArgs =
        serde_json::from_str(r#"{"query": "lamp", "labels": [], "window": {"days": 3}}"#).unwrap();
    assert_eq!(
        format!("{args:?}"),
        r#"SearchCatalogArgs { query: "lamp", inStock: null, limit: 10, window: {"days":3}, labels: [] }"#
    );
    assert!(format!("{args:#?}").contains("\n    query: \"lamp\",\n"));
}

#[test]
fn the_written_schema_is_the_one_schemars_derives() {
    let mut written = schemars::schema_for!(SearchCatalogArgs).to_value();
    let mut derived = schemars::schema_for!(DerivedSearchCatalogArgs).to_value();
    // The roots' titles are the two structs' names.
    assert_eq!(written["title"], "SearchCatalogArgs");
    written.as_object_mut().unwrap().remove("title");
    derived.as_object_mut().unwrap().remove("title");
    assert_eq!(written, derived);
    assert_eq!(written["properties"]["query"]["title"], "Query");
    assert_eq!(written["required"], json!(["query", "labels"]));
    // Key order too, for clients that show the schema as text.
    if keys_sorted() {
        assert_eq!(
            serde_json::to_string(&written).unwrap(),
            serde_json::to_string(&derived).unwrap()
        );
    }
}

/// Echo a word. The parameter is named like the fn.
#[tool(key = "names.echo", effect = read, authorize = public)]
async fn echo(echo: String) -> String {
    echo
}

/// The length of a word, which must not be empty. The parameter is named
/// like the fn.
#[tool(key = "names.length", effect = read, authorize = public)]
async fn length(length: String) -> Result<usize, std::io::Error> {
    if length.is_empty() {
        return Err(std::io::Error::other("an empty word"));
    }
    Ok(length.len())
}

#[tokio::test]
async fn a_parameter_named_like_its_fn_does_not_hide_the_fn() {
    let catalog = Catalog::builder()
        .register::<EchoArgs>()
        .register::<LengthArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let echoed = executor.invoke("echo", json!({"echo": "hi"}), &()).await;
    assert_eq!(echoed.unwrap(), json!("hi"));
    let length = executor
        .invoke("length", json!({"length": "four"}), &())
        .await;
    assert_eq!(length.unwrap(), json!(4));
    let typed = executor
        .call(
            EchoArgs {
                echo: "typed".into(),
            },
            &(),
        )
        .await;
    assert_eq!(typed.unwrap(), "typed");
    let empty = executor.invoke("length", json!({"length": ""}), &()).await;
    assert!(matches!(empty, Err(CallError::Tool { .. })), "{empty:?}");
}

/// A product code: three capital letters, a dash and digits, checked when
/// read. Its schema says only "a string".
#[derive(Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(try_from = "String", into = "String")]
struct Sku(String);

impl TryFrom<String> for Sku {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        let (letters, digits) = text.split_once('-').unwrap_or_default();
        let well_formed = letters.len() == 3
            && letters.bytes().all(|b| b.is_ascii_uppercase())
            && !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit());
        if well_formed {
            Ok(Sku(text))
        } else {
            Err(format!("`{text}` is not a SKU like ABC-123"))
        }
    }
}

impl From<Sku> for String {
    fn from(sku: Sku) -> String {
        sku.0
    }
}

/// An order line whose product code is checked when read.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Line {
    sku: Sku,
    quantity: u32,
}

/// Swap one product for another.
#[tool(key = "shop.swap", effect = read, authorize = public)]
async fn swap(
    /// The product to take back.
    old: Sku,
    /// The product to send.
    #[rename = "new/sku"]
    new: Sku,
    /// A line to add.
    extra: Option<Line>,
) -> String {
    format!("{} for {}, {}", old.0, new.0, extra.is_some())
}

#[tokio::test]
async fn a_value_its_type_refuses_after_the_schema_accepted_it_is_reported_at_its_field() {
    let catalog = Catalog::builder().register::<SwapArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let refused = |arguments: Value| {
        let executor = &executor;
        async move {
            match executor.invoke("swap", arguments, &()).await {
                Err(CallError::InvalidArguments { violations, .. }) => violations
                    .0
                    .iter()
                    .map(|v| format!("{}: {}", v.path, v.message))
                    .collect::<Vec<_>>(),
                other => panic!("expected invalid arguments, got {other:?}"),
            }
        }
    };
    assert_eq!(
        refused(json!({"old": "ABC-1", "new/sku": "abc"})).await,
        ["/new~1sku: `abc` is not a SKU like ABC-123"]
    );
    assert_eq!(
        refused(json!({"old": "A-1", "new/sku": "ABC-2"})).await,
        ["/old: `A-1` is not a SKU like ABC-123"]
    );
    // A value nested in a field is reported at that field.
    assert_eq!(
        refused(json!({"old": "ABC-1", "new/sku": "ABC-2", "extra": {"sku": "x", "quantity": 1}}))
            .await,
        ["/extra: `x` is not a SKU like ABC-123"]
    );
    // What the schema refuses is still reported by the schema, at its path.
    assert_eq!(
        refused(json!({"old": "ABC-1", "new/sku": 7})).await,
        ["/new~1sku: 7 is not of type \"string\""]
    );
    // A failure found when the arguments are read a second way (integral
    // floats as integers) is reported as the first reading found it.
    assert_eq!(
        refused(
            json!({"old": "ABC-1", "new/sku": "q", "extra": {"sku": "ABC-3", "quantity": 2.0}})
        )
        .await,
        ["/new~1sku: `q` is not a SKU like ABC-123"]
    );
    assert_eq!(
        executor
            .invoke("swap", json!({"old": "ABC-1", "new/sku": "XYZ-2"}), &())
            .await
            .unwrap(),
        json!("ABC-1 for XYZ-2, false")
    );
}

/// Whether this build's `serde_json` keeps object keys sorted: another
/// crate in the build (rig's, say) can turn on its `preserve_order`
/// feature, and then keys keep the order they were inserted in.
fn keys_sorted() -> bool {
    let probe = json!({"b": 0, "a": 0});
    probe.as_object().unwrap().keys().next().map(String::as_str) == Some("a")
}
