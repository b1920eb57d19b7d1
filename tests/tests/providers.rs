//! Provider formats: every exported schema obeys its provider's rules, what
//! cannot be expressed is an export error, and a batch of calls comes back
//! in order with safe text for the model and full errors for the application.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolwright::providers::{self, Format, ToolCall};
use toolwright::{CallError, Catalog, Container, Executor, Invocation, tool};

// ------------------------------------------------------- a representative catalog

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Priority {
    Low,
    High,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Delivery {
    Pickup,
    Courier {
        /// Where to drop the parcel.
        address: Address,
    },
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
struct Address {
    /// Street and number.
    #[schemars(length(min = 1, max = 60))]
    street: String,
    /// Postal code.
    #[schemars(regex(pattern = r"^[0-9]{5}$"))]
    zip: String,
    /// Floor, if any.
    floor: Option<i16>,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
struct Line {
    sku: String,
    #[schemars(range(min = 1, max = 99))]
    quantity: u32,
}

#[derive(Serialize, Debug, schemars::JsonSchema)]
struct Placed {
    lines: usize,
}

#[derive(Clone)]
struct Actor {
    allowed: bool,
}

async fn allowed<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool {
    actor.allowed
}

async fn approved<A>(_: &Actor, _: &Invocation<'_, A>) -> bool {
    true
}

/// Place an order.
#[tool(key = "orders.place", effect = write, authorize = allowed, approve = approved)]
async fn place_order(
    /// What to order.
    #[schemars(length(min = 1, max = 20))]
    lines: Vec<Line>,
    /// How to deliver.
    delivery: Delivery,
    /// How urgent.
    priority: Option<Priority>,
    /// A note for the packer.
    #[schemars(length(max = 140))]
    note: Option<String>,
    /// Gift wrapping.
    #[default = false]
    gift: bool,
    /// A billing address, when it differs.
    billing: Option<Address>,
) -> Placed {
    let _ = (delivery, priority, note, gift, billing);
    Placed { lines: lines.len() }
}

/// Find products.
#[tool(key = "products.find", effect = read, authorize = allowed)]
async fn find_products(
    /// Words to look for.
    #[schemars(length(min = 2))]
    query: String,
    /// At most this many.
    #[schemars(range(min = 1, max = 50))]
    #[default = 10]
    limit: u8,
    /// Only in these categories.
    categories: Vec<String>,
) -> Vec<String> {
    let _ = (limit, categories);
    vec![query]
}

async fn nobody<A>(_: &Actor, _: &Invocation<'_, A>) -> bool {
    false
}

/// Read the audit log.
#[tool(key = "audit.read", effect = read, authorize = nobody)]
async fn read_audit() -> Vec<String> {
    vec!["the injected secret".into()]
}

/// Crash on purpose.
#[tool(key = "debug.crash", effect = read, authorize = allowed)]
async fn crash() -> u32 {
    panic!("secret internal detail: table users_v2 is corrupt")
}

// Tools with constructs some providers cannot express.

/// Tag products.
#[tool(key = "products.tag", effect = read, authorize = public)]
async fn tag_products(
    /// Tags per product id.
    tags: HashMap<String, Vec<String>>,
) -> usize {
    tags.len()
}

/// Mark a point.
#[tool(key = "products.mark", effect = read, authorize = public)]
async fn mark_point(point: (i32, i32)) -> i32 {
    point.0
}

/// Label products; each label once.
#[tool(key = "products.label", effect = read, authorize = public)]
async fn label_products(labels: std::collections::BTreeSet<String>) -> usize {
    labels.len()
}

/// A category tree.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
struct Category {
    name: String,
    children: Vec<Category>,
}

/// Import a category tree.
#[tool(key = "products.import_tree", effect = read, authorize = public)]
async fn import_tree(root: Category) -> usize {
    root.children.len()
}

fn representative() -> Catalog {
    Catalog::builder()
        .register::<PlaceOrderArgs>()
        .register::<FindProductsArgs>()
        .register::<CrashArgs>()
        .register::<ReadAuditArgs>()
        .build()
        .unwrap()
}

// ------------------------------------------------------------- rule checkers

const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
];
const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// OpenAI Structured Outputs, "Supported schemas".
fn check_openai_strict(schema: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        problems.push(format!("{path}: not an object schema"));
        return;
    };
    for (keyword, value) in map {
        if !STRICT_KEYWORDS.contains(&keyword.as_str()) {
            problems.push(format!("{path}: unsupported keyword `{keyword}`"));
        }
        if keyword == "format" && !STRICT_FORMATS.contains(&value.as_str().unwrap_or("")) {
            problems.push(format!("{path}: unsupported format {value}"));
        }
    }
    if map.contains_key("$ref") && map.len() > 1 {
        problems.push(format!("{path}: `$ref` with sibling keywords"));
    }
    let is_object = map.get("type") == Some(&json!("object")) || map.contains_key("properties");
    if is_object {
        if map.get("additionalProperties") != Some(&json!(false)) {
            problems.push(format!(
                "{path}: object without additionalProperties: false"
            ));
        }
        let properties: Vec<&String> = map
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for property in &properties {
            if !required.contains(&property.as_str()) {
                problems.push(format!("{path}: property `{property}` not required"));
            }
        }
    }
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(children)) = map.get(key) {
            for (name, child) in children {
                check_openai_strict(child, &format!("{path}/{name}"), problems);
            }
        }
    }
    if let Some(items) = map.get("items") {
        check_openai_strict(items, &format!("{path}/items"), problems);
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        for branch in branches {
            check_openai_strict(branch, &format!("{path}/anyOf"), problems);
        }
    }
}

const GEMINI_FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// Gemini API `Schema` (OpenAPI 3.0 subset).
fn check_gemini(schema: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        problems.push(format!("{path}: not an object schema"));
        return;
    };
    for (field, value) in map {
        if !GEMINI_FIELDS.contains(&field.as_str()) {
            problems.push(format!("{path}: unknown field `{field}`"));
        }
        if field == "type" && !value.is_string() {
            problems.push(format!("{path}: `type` is not a single string"));
        }
        if field == "enum"
            && value
                .as_array()
                .is_none_or(|v| v.iter().any(|e| !e.is_string()))
        {
            problems.push(format!("{path}: enum values are not all strings"));
        }
    }
    if let Some(Value::Object(children)) = map.get("properties") {
        for (name, child) in children {
            check_gemini(child, &format!("{path}/{name}"), problems);
        }
    }
    if let Some(items) = map.get("items") {
        check_gemini(items, &format!("{path}/items"), problems);
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        for branch in branches {
            check_gemini(branch, &format!("{path}/anyOf"), problems);
        }
    }
}

fn parameters(definition: &Value, format: Format) -> &Value {
    match format {
        Format::OpenAiChat { .. } => &definition["function"]["parameters"],
        Format::OpenAiResponses { .. } => &definition["parameters"],
        Format::Anthropic => &definition["input_schema"],
        Format::Gemini => &definition["parameters"],
        Format::GeminiJsonSchema => &definition["parametersJsonSchema"],
        _ => unreachable!("every format is listed"),
    }
}

#[test]
fn every_exported_schema_follows_its_providers_rules() {
    let catalog = representative();
    for format in Format::ALL {
        let exported = providers::export(&catalog, format).unwrap();
        let definitions: Vec<&Value> = match format {
            Format::Gemini | Format::GeminiJsonSchema => exported[0]["functionDeclarations"]
                .as_array()
                .unwrap()
                .iter()
                .collect(),
            _ => exported.as_array().unwrap().iter().collect(),
        };
        assert_eq!(definitions.len(), 4, "{format}");
        for definition in definitions {
            let schema = parameters(definition, format);
            let mut problems = Vec::new();
            assert_eq!(
                schema["type"],
                json!("object"),
                "{format}: root is an object"
            );
            assert!(schema.get("$schema").is_none(), "{format}: no $schema");
            match format {
                Format::OpenAiChat { strict: true } | Format::OpenAiResponses { strict: true } => {
                    check_openai_strict(schema, "", &mut problems)
                }
                Format::Gemini => {
                    check_gemini(schema, "", &mut problems);
                    assert!(
                        !schema.to_string().contains("$ref"),
                        "{format}: refs inlined"
                    );
                }
                _ => {
                    // Standard JSON Schema: it must compile as one.
                    jsonschema::draft202012::new(schema).unwrap();
                }
            }
            assert!(problems.is_empty(), "{format}: {problems:#?}\n{schema:#}");
        }
    }
}

#[test]
fn non_strict_openai_keeps_optional_fields_optional() {
    let catalog = representative();
    let tool = catalog.get("find_products").unwrap();
    let loose = providers::schema_for(tool, Format::OpenAiChat { strict: false }).unwrap();
    assert_eq!(loose["required"], json!(["query", "categories"]));
    let strict = providers::schema_for(tool, Format::OpenAiChat { strict: true }).unwrap();
    assert_eq!(
        sorted(&strict["required"]),
        ["categories", "limit", "query"]
    );
    assert_eq!(
        strict["properties"]["limit"]["type"],
        json!(["integer", "null"])
    );
    // Lengths become patterns: the same rule, in strict mode's words.
    assert_eq!(
        strict["properties"]["query"]["pattern"],
        json!("^[\\s\\S]{2,}$")
    );
}

#[test]
fn a_map_cannot_be_exported_in_strict_mode() {
    let catalog = Catalog::builder()
        .register::<TagProductsArgs>()
        .build()
        .unwrap();
    let tool = catalog.get("tag_products").unwrap();
    let error = providers::schema_for(tool, Format::OpenAiChat { strict: true }).unwrap_err();
    assert_eq!(error.tool, "tag_products");
    assert_eq!(error.path, "/tags");
    assert!(error.construct.contains("map"), "{error}");
    assert_eq!(
        error.to_string(),
        "tool `tag_products` cannot be exported for OpenAI strict: /tags is a map with free-form keys (strict mode closes every object)"
    );
    let error = providers::schema_for(tool, Format::Gemini).unwrap_err();
    assert_eq!(error.path, "/tags");
    // Formats that accept standard JSON Schema export it as it is.
    for format in [
        Format::Anthropic,
        Format::OpenAiChat { strict: false },
        Format::GeminiJsonSchema,
    ] {
        providers::schema_for(tool, format).unwrap();
    }
}

#[test]
fn tuples_and_sets_cannot_be_exported_for_strict_mode_or_gemini() {
    let catalog = Catalog::builder()
        .register::<MarkPointArgs>()
        .register::<LabelProductsArgs>()
        .build()
        .unwrap();
    for (tool, path, keyword) in [
        ("mark_point", "/point", "prefixItems"),
        ("label_products", "/labels", "uniqueItems"),
    ] {
        let tool = catalog.get(tool).unwrap();
        for format in [
            Format::OpenAiChat { strict: true },
            Format::OpenAiResponses { strict: true },
            Format::Gemini,
        ] {
            let error = providers::schema_for(tool, format).unwrap_err();
            assert_eq!(
                (error.path.as_str(), error.tool.as_str()),
                (path, tool.name())
            );
            assert!(error.construct.contains(keyword), "{format}: {error}");
        }
        // Formats that take standard JSON Schema export the keyword as it is.
        for format in [
            Format::Anthropic,
            Format::OpenAiChat { strict: false },
            Format::GeminiJsonSchema,
        ] {
            let schema = providers::schema_for(tool, format).unwrap();
            let field = &schema["properties"][&path[1..]];
            assert!(field.get(keyword).is_some(), "{format}: {schema}");
        }
    }
}

#[test]
fn a_recursive_type_cannot_be_inlined_for_gemini() {
    let catalog = Catalog::builder()
        .register::<ImportTreeArgs>()
        .build()
        .unwrap();
    let tool = catalog.get("import_tree").unwrap();
    let error = providers::schema_for(tool, Format::Gemini).unwrap_err();
    assert_eq!(error.tool, "import_tree");
    assert!(error.path.starts_with("/root"), "{error}");
    assert!(error.construct.contains("recursive"), "{error}");
    // OpenAI strict allows recursion through `$ref`.
    providers::schema_for(tool, Format::OpenAiChat { strict: true }).unwrap();
    // And the whole export fails, not just the one tool silently.
    assert!(providers::export(&catalog, Format::Gemini).is_err());
}

#[test]
fn the_text_export_is_the_same_document_and_fails_the_same_way() {
    let catalog = representative();
    for format in Format::ALL {
        let text = providers::export_json(&catalog, format).unwrap();
        let parsed: Value = serde_json::from_str(text.get()).unwrap();
        assert_eq!(
            parsed,
            providers::export(&catalog, format).unwrap(),
            "{format}"
        );
        // Keys in the order a `serde_json` map keeps them, so the text is
        // byte for byte what serializing `export` writes.
        assert_eq!(text.get(), parsed.to_string(), "{format}");
    }
    // Any subset, in the order given.
    let reversed: Vec<_> = catalog.iter().rev().collect();
    let text = providers::export_json(reversed.iter().copied(), Format::Anthropic).unwrap();
    let parsed: Value = serde_json::from_str(text.get()).unwrap();
    assert_eq!(
        parsed,
        providers::export(reversed.iter().copied(), Format::Anthropic).unwrap()
    );

    let unexportable = Catalog::builder()
        .register::<TagProductsArgs>()
        .register::<ImportTreeArgs>()
        .build()
        .unwrap();
    for format in Format::ALL {
        assert_eq!(
            providers::export_json(&unexportable, format).map(|t| t.get().to_owned()),
            providers::export(&unexportable, format).map(|v| v.to_string()),
            "{format}"
        );
    }
}

#[test]
fn a_long_list_is_written_the_same_and_fails_at_its_first_unexportable_tool() {
    // Long enough that the export is written by several threads, where the
    // machine has them: the text and the error are the same either way.
    let catalog = representative();
    let long: Vec<_> = (0..300).flat_map(|_| catalog.iter()).collect();
    assert!(long.len() > 1_000);
    for format in Format::ALL {
        let text = providers::export_json(long.iter().copied(), format).unwrap();
        let value = providers::export(long.iter().copied(), format).unwrap();
        assert_eq!(text.get(), value.to_string(), "{format}");
    }

    let unexportable = Catalog::builder()
        .register::<TagProductsArgs>()
        .register::<ImportTreeArgs>()
        .build()
        .unwrap();
    let map = unexportable.get("tag_products").unwrap();
    let tree = unexportable.get("import_tree").unwrap();
    // Each unexportable tool twice: early in the list and late in it, so
    // that the first in the list's order must win over any found sooner.
    let mut long = long;
    long.insert(100, map);
    long.insert(200, tree);
    long.insert(long.len() - 10, tree);
    long.insert(long.len() - 5, map);
    for format in Format::ALL {
        let text = providers::export_json(long.iter().copied(), format);
        let value = providers::export(long.iter().copied(), format);
        assert_eq!(
            text.map(|t| t.get().to_owned()),
            value.map(|v| v.to_string()),
            "{format}"
        );
    }
    let error = providers::export_json(long.iter().copied(), Format::OpenAiChat { strict: true })
        .unwrap_err();
    assert_eq!(error.tool, "tag_products");
}

// ----------------------------------------------------------------- batches

#[tokio::test]
async fn a_mixed_batch_returns_every_result_in_order() {
    let catalog = representative();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let calls = vec![
        ToolCall::new("c1", "read_audit", json!({})),
        ToolCall::new(
            "c2",
            "find_products",
            json!({"query": "x", "categories": "all"}),
        ),
        ToolCall::new("c3", "crash", json!({})),
        ToolCall::new(
            "c4",
            "find_products",
            json!({"query": "mugs", "categories": ["kitchen"]}),
        ),
    ];
    let outcomes = executor.run_calls(calls, &Actor { allowed: true }).await;

    let ids: Vec<&str> = outcomes.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
    assert!(matches!(
        &outcomes[0].result,
        Err(CallError::Denied { key }) if key == "audit.read"
    ));
    assert!(matches!(
        outcomes[1].result,
        Err(CallError::InvalidArguments { .. })
    ));
    assert!(matches!(
        outcomes[2].result,
        Err(CallError::Panicked { .. })
    ));
    assert_eq!(outcomes[3].result.as_ref().unwrap(), &json!(["mugs"]));

    // What the model reads: safe, and useful where it can act on it.
    assert_eq!(
        outcomes[0].model_text(),
        "You are not allowed to call this tool."
    );
    let invalid = outcomes[1].model_text();
    assert!(
        invalid.contains("/query") && invalid.contains("/categories"),
        "{invalid}"
    );
    assert_eq!(outcomes[2].model_text(), "The tool failed.");
    assert_eq!(outcomes[3].model_text(), r#"["mugs"]"#);
    // The application still has the panic message.
    match &outcomes[2].result {
        Err(CallError::Panicked { message, .. }) => assert!(message.contains("users_v2")),
        other => panic!("{other:?}"),
    }
    for format in Format::ALL {
        let messages = providers::result_messages(&outcomes, format);
        let text = serde_json::to_string(&messages).unwrap();
        assert!(
            !text.contains("users_v2"),
            "{format} leaks the panic: {text}"
        );
        assert!(
            !text.contains("secret"),
            "{format} leaks a denied result: {text}"
        );
        assert_eq!(messages.len(), 4);
    }
}

#[tokio::test]
async fn one_slow_call_does_not_hold_back_the_others_beyond_the_limit() {
    let catalog = representative();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let calls: Vec<ToolCall> = (0..20)
        .map(|i| {
            ToolCall::new(
                format!("c{i}"),
                "find_products",
                json!({"query": format!("q{i}"), "categories": []}),
            )
        })
        .collect();
    let outcomes = executor
        .run_calls_with_limit(calls, &Actor { allowed: true }, 3)
        .await;
    for (i, outcome) in outcomes.iter().enumerate() {
        assert_eq!(outcome.id, format!("c{i}"));
        assert_eq!(outcome.result.as_ref().unwrap(), &json!([format!("q{i}")]));
    }
}

#[tokio::test]
async fn malformed_arguments_fail_only_their_own_call() {
    let catalog = representative();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let response = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "find_products", "arguments": "{\"query\": \"te"}},
        {"id": "b", "type": "function", "function": {"name": "find_products", "arguments": "[1, 2]"}},
        {"id": "c", "type": "function", "function": {"name": "find_products", "arguments": "{\"query\": \"tea\", \"categories\": []}"}},
        {"id": "d", "type": "function", "function": {"name": "no_such_tool", "arguments": "{}"}}
    ]}}]});
    let calls = providers::parse_calls(&response, Format::OpenAiChat { strict: false }).unwrap();
    let outcomes = executor.run_calls(calls, &Actor { allowed: true }).await;
    assert!(matches!(
        outcomes[0].result,
        Err(CallError::InvalidArguments { .. })
    ));
    assert!(outcomes[0].model_text().contains("not a JSON object"));
    assert!(matches!(
        outcomes[1].result,
        Err(CallError::InvalidArguments { .. })
    ));
    assert!(outcomes[1].model_text().contains("an array"));
    assert!(outcomes[2].result.is_ok());
    assert!(matches!(
        outcomes[3].result,
        Err(CallError::UnknownTool { .. })
    ));
}

#[tokio::test]
async fn strict_mode_nulls_mean_absent() {
    let catalog = representative();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    // What a strict-mode model sends: every field, `null` for the ones it omits.
    let response = json!({"output": [{
        "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "find_products",
        "arguments": "{\"query\": \"tea\", \"limit\": null, \"categories\": []}"
    }]});
    let calls =
        providers::parse_calls(&response, Format::OpenAiResponses { strict: true }).unwrap();
    let outcomes = executor.run_calls(calls, &Actor { allowed: true }).await;
    assert_eq!(outcomes[0].result.as_ref().unwrap(), &json!(["tea"]));

    // The same arguments from a provider that never sends null-for-absent
    // are held to the canonical schema.
    let outcomes = executor
        .run_calls(
            vec![ToolCall::new(
                "x",
                "find_products",
                json!({"query": "tea", "limit": null, "categories": []}),
            )],
            &Actor { allowed: true },
        )
        .await;
    assert!(matches!(
        outcomes[0].result,
        Err(CallError::InvalidArguments { .. })
    ));
}

#[test]
fn formats_parse_from_their_names() {
    for format in Format::ALL {
        assert_eq!(format.to_string().parse::<Format>().unwrap(), format);
    }
    assert!("openai-ish".parse::<Format>().is_err());
}

#[test]
fn select_picks_named_tools_in_order() {
    let tools = toolwright::registry::Registry::new(representative()).tools();
    let picked = providers::select(&tools, ["find_products", "crash"]).unwrap();
    let exported = providers::export(picked, Format::Anthropic).unwrap();
    let names: Vec<&str> = exported
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["find_products", "crash"]);
}

/// The strings of a JSON array, sorted: strict mode lists every property
/// as required, in the order `serde_json` keeps the properties.
fn sorted(list: &Value) -> Vec<&str> {
    let mut items: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    items.sort_unstable();
    items
}
