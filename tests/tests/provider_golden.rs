//! Golden tests against the providers' documented examples (the fixtures in
//! `tests/fixtures/providers/` say where each came from): our tool lists
//! have the documented shape and accept what the documented schemas accept,
//! the documented responses parse into the right calls, and our result
//! messages are the documented ones.
//!
//! The exact exports are also kept as golden files in
//! `tests/fixtures/providers/exported/`; after an intended change, rewrite
//! them with `TOOLWRIGHT_BLESS=1 cargo test --test provider_golden`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolwright::providers::{self, CallOutcome, Format, ToolCall};
use toolwright::{Catalog, registry::ToolEntry, tool};

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// Get the current weather in a given location
#[tool(key = "weather.current", effect = read, authorize = public)]
async fn get_current_weather(
    /// The city and state, e.g. San Francisco, CA
    location: String,
    /// The unit of temperature, either 'celsius' or 'fahrenheit'
    unit: Option<Unit>,
) -> String {
    format!("{location} {unit:?}")
}

/// Get current temperature for a given location.
#[tool(key = "weather.temperature", effect = read, authorize = public)]
async fn get_weather(
    /// City and country e.g. Bogotá, Colombia
    location: String,
) -> u8 {
    location.len() as u8
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
#[serde(rename_all = "lowercase")]
enum ColorTemp {
    Daylight,
    Cool,
    Warm,
}

/// Sets the brightness and color temperature of a light.
#[tool(key = "lights.set", effect = read, authorize = public)]
async fn set_light_values(
    /// Light level from 0 to 100. Zero is off and 100 is full brightness
    #[schemars(range(max = 100))]
    brightness: u8,
    /// Color temperature of the light fixture, which can be `daylight`, `cool` or `warm`.
    color_temp: ColorTemp,
) -> Value {
    json!({"brightness": brightness, "colorTemperature": color_temp})
}

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/providers")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn catalog() -> Catalog {
    Catalog::builder()
        .register::<GetCurrentWeatherArgs>()
        .register::<GetWeatherArgs>()
        .register::<SetLightValuesArgs>()
        .build()
        .unwrap()
}

/// Compares with, or (with `TOOLWRIGHT_BLESS=1`) rewrites, a golden file.
fn golden(name: &str, actual: &Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/providers/exported")
        .join(name);
    let rendered = serde_json::to_string_pretty(actual).unwrap() + "\n";
    if std::env::var_os("TOOLWRIGHT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, rendered).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} is missing; run with TOOLWRIGHT_BLESS=1", path.display()));
    // As JSON: another crate in the build can make `serde_json` keep keys
    // in insertion order (its `preserve_order` feature) rather than sorted.
    let expected: Value = serde_json::from_str(&expected).unwrap();
    assert_eq!(
        *actual, expected,
        "{name} changed; if intended, run with TOOLWRIGHT_BLESS=1"
    );
}

/// Keys of a JSON object, sorted.
fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

/// Our schema accepts what the documented schema accepts, and rejects what
/// it rejects, on a set of sample argument objects.
fn same_verdicts(ours: &Value, documented: &Value, samples: &[Value], format: Format) {
    // Gemini `parameters` is not JSON Schema; compare through the canonical form.
    if format == Format::Gemini {
        return;
    }
    let ours = jsonschema::validator_for(ours).unwrap();
    let documented = jsonschema::validator_for(documented).unwrap();
    for sample in samples {
        assert_eq!(
            ours.is_valid(sample),
            documented.is_valid(sample),
            "{format}: verdicts differ on {sample}"
        );
    }
}

fn entry<'a>(catalog: &'a Catalog, name: &str) -> &'a ToolEntry {
    catalog.get(name).unwrap()
}

#[test]
fn openai_chat_tool_list_matches_the_documented_shape() {
    let catalog = catalog();
    let doc = fixture("openai_chat.json");
    let format = Format::OpenAiChat { strict: false };
    let ours = providers::tool_definition(entry(&catalog, "get_current_weather"), format).unwrap();
    let documented = &doc["documented_tool"];
    assert_eq!(keys(&ours), keys(documented));
    assert_eq!(ours["type"], documented["type"]);
    // `strict` is optional in the documented request; we always say which.
    assert_eq!(
        keys(&ours["function"]),
        ["description", "name", "parameters", "strict"]
    );
    assert_eq!(ours["function"]["name"], documented["function"]["name"]);
    assert_eq!(
        ours["function"]["description"],
        documented["function"]["description"]
    );
    same_verdicts(
        &ours["function"]["parameters"],
        &documented["function"]["parameters"],
        &[
            json!({"location": "Boston, MA"}),
            json!({"location": "Boston, MA", "unit": "celsius"}),
            json!({"location": "Boston, MA", "unit": "kelvin"}),
            json!({"unit": "celsius"}),
            json!({"location": 3}),
        ],
        format,
    );
    golden(
        "openai_chat.json",
        &providers::export(&catalog, format).unwrap(),
    );
    golden(
        "openai_chat_strict.json",
        &providers::export(&catalog, Format::OpenAiChat { strict: true }).unwrap(),
    );
}

#[test]
fn openai_responses_tool_list_matches_the_documented_shape() {
    let catalog = catalog();
    let doc = fixture("openai_responses.json");
    let format = Format::OpenAiResponses { strict: true };
    let ours = providers::tool_definition(entry(&catalog, "get_weather"), format).unwrap();
    let documented = &doc["documented_tool"];
    // The documented example is already strict: ours is the same, word for word.
    assert_eq!(&ours, documented);
    golden(
        "openai_responses_strict.json",
        &providers::export(&catalog, format).unwrap(),
    );
}

#[test]
fn anthropic_tool_list_matches_the_documented_shape() {
    let catalog = catalog();
    let doc = fixture("anthropic.json");
    let ours =
        providers::tool_definition(entry(&catalog, "get_current_weather"), Format::Anthropic)
            .unwrap();
    let documented = &doc["documented_tool"];
    assert_eq!(keys(&ours), keys(documented));
    assert_eq!(ours["name"], "get_current_weather");
    assert_eq!(ours["description"], documented["description"]);
    same_verdicts(
        &ours["input_schema"],
        &documented["input_schema"],
        &[
            json!({"location": "San Francisco, CA", "unit": "celsius"}),
            json!({"location": "San Francisco, CA"}),
            json!({"location": "San Francisco, CA", "unit": "kelvin"}),
            json!({}),
        ],
        Format::Anthropic,
    );
    golden(
        "anthropic.json",
        &providers::export(&catalog, Format::Anthropic).unwrap(),
    );
}

#[test]
fn gemini_tool_list_matches_the_documented_shape() {
    let catalog = catalog();
    let doc = fixture("gemini.json");
    let tools = toolwright::registry::Registry::new(catalog.clone()).tools();
    let only_lights = providers::select(&tools, ["set_light_values"]).unwrap();
    let ours = providers::export(only_lights, Format::Gemini).unwrap();
    let documented = &doc["documented_tool"];
    let ours_decl = &ours[0]["functionDeclarations"][0];
    let doc_decl = &documented["functionDeclarations"][0];
    assert_eq!(keys(&ours[0]), keys(documented));
    assert_eq!(keys(ours_decl), keys(doc_decl));
    assert_eq!(ours_decl["name"], doc_decl["name"]);
    assert_eq!(ours_decl["description"], doc_decl["description"]);
    let (ours_params, doc_params) = (&ours_decl["parameters"], &doc_decl["parameters"]);
    assert_eq!(ours_params["type"], doc_params["type"]);
    assert_eq!(ours_params["required"], doc_params["required"]);
    assert_eq!(
        ours_params["properties"]["color_temp"]["enum"],
        doc_params["properties"]["color_temp"]["enum"]
    );
    assert_eq!(ours_params["properties"]["brightness"]["type"], "integer");
    golden(
        "gemini.json",
        &providers::export(&catalog, Format::Gemini).unwrap(),
    );
    golden(
        "gemini_json_schema.json",
        &providers::export(&catalog, Format::GeminiJsonSchema).unwrap(),
    );
}

#[test]
fn documented_responses_parse_into_calls() {
    let cases = [
        (
            "openai_chat.json",
            Format::OpenAiChat { strict: false },
            ToolCall::new(
                "call_abc123",
                "get_current_weather",
                json!({"location": "Boston, MA"}),
            ),
        ),
        (
            "openai_responses.json",
            Format::OpenAiResponses { strict: true },
            ToolCall::new(
                "call_12345xyz",
                "get_weather",
                json!({"location": "Paris, France"}),
            ),
        ),
        (
            "anthropic.json",
            Format::Anthropic,
            ToolCall::new(
                "toolu_01A09q90qw90lq917835lq9",
                "get_weather",
                json!({"location": "San Francisco, CA", "unit": "celsius"}),
            ),
        ),
        (
            "gemini.json",
            Format::Gemini,
            ToolCall::new(
                "gemini-0-0-set_light_values",
                "set_light_values",
                json!({"brightness": 25, "color_temp": "warm"}),
            ),
        ),
    ];
    for (file, format, expected) in cases {
        let calls = providers::parse_calls(&fixture(file)["response"], format).unwrap();
        assert_eq!(calls.len(), 1, "{file}");
        assert_eq!(calls[0].id, expected.id, "{file}");
        assert_eq!(calls[0].name, expected.name, "{file}");
        assert_eq!(calls[0].arguments, expected.arguments, "{file}");
    }
}

#[test]
fn synthesized_gemini_ids_are_stable() {
    let response = fixture("gemini.json")["response"].clone();
    let first = providers::parse_calls(&response, Format::Gemini).unwrap();
    let second = providers::parse_calls(&response, Format::Gemini).unwrap();
    assert_eq!(first, second);
    // A documented id is kept as it is, and echoed in the response.
    let mut with_id = response;
    with_id["candidates"][0]["content"]["parts"][0]["functionCall"]["id"] = json!("fc-7");
    let calls = providers::parse_calls(&with_id, Format::Gemini).unwrap();
    assert_eq!(calls[0].id, "fc-7");
    let outcome = CallOutcome::new(calls[0].id.clone(), calls[0].name.clone(), Ok(json!(1)));
    assert_eq!(
        providers::result_message(&outcome, Format::Gemini)["functionResponse"]["id"],
        "fc-7"
    );
}

#[test]
fn result_messages_are_the_documented_ones() {
    let cases = [
        (
            "openai_chat.json",
            Format::OpenAiChat { strict: false },
            "get_current_weather",
        ),
        (
            "openai_responses.json",
            Format::OpenAiResponses { strict: true },
            "get_weather",
        ),
        ("anthropic.json", Format::Anthropic, "get_weather"),
        ("gemini.json", Format::Gemini, "set_light_values"),
    ];
    for (file, format, name) in cases {
        let doc = fixture(file);
        let documented = &doc["documented_result"];
        let calls = providers::parse_calls(&doc["response"], format).unwrap();
        let result = match format {
            Format::OpenAiChat { .. } => documented["content"].clone(),
            Format::OpenAiResponses { .. } => documented["output"].clone(),
            Format::Anthropic => documented["content"].clone(),
            _ => documented["functionResponse"]["response"]["result"].clone(),
        };
        let outcome = CallOutcome::new(calls[0].id.clone(), name, Ok(result));
        assert_eq!(
            &providers::result_message(&outcome, format),
            documented,
            "{file}"
        );
    }
}

#[test]
fn error_results_are_marked_for_each_provider() {
    let outcome = CallOutcome::new(
        "toolu_1",
        "get_weather",
        Err(toolwright::CallError::Denied {
            key: "weather.temperature".into(),
        }),
    );
    let anthropic = providers::result_message(&outcome, Format::Anthropic);
    assert_eq!(anthropic["is_error"], json!(true));
    assert_eq!(
        anthropic["content"],
        "You are not allowed to call this tool."
    );
    let gemini = providers::result_message(&outcome, Format::Gemini);
    assert_eq!(
        gemini["functionResponse"]["response"],
        json!({"error": "You are not allowed to call this tool."})
    );
    let chat = providers::result_message(&outcome, Format::OpenAiChat { strict: true });
    assert_eq!(chat["content"], "You are not allowed to call this tool.");
}

/// A deferred tool built as the documented example describes it.
fn deferred(name: &str, description: &str, schema: Value) -> toolwright::registry::DynamicTool {
    // A key of one segment: no namespace (see the namespace test).
    toolwright::registry::DynamicTool::builder(name, name)
        .description(description)
        .effect(toolwright::Effect::Read)
        .defer(true)
        .input_schema(schema)
        .handler(|_| Box::pin(async { Ok(json!(null)) }))
        .build()
        .unwrap()
}

#[test]
fn anthropic_deferred_tools_and_tool_references_match_the_documented_shapes() {
    let doc = fixture("anthropic_tool_search.json");
    let documented = &doc["documented_tool"];
    let registry = toolwright::registry::Registry::new(Catalog::empty());
    let schema = documented["input_schema"].clone();
    registry
        .register(deferred(
            "get_weather",
            "Get current weather for a location",
            schema,
        ))
        .unwrap();
    let tools = registry.tools();
    let ours = providers::tool_definition(tools.get("get_weather").unwrap(), Format::Anthropic);
    assert_eq!(&ours.unwrap(), documented);

    let answer = providers::tool_reference_result("toolu_your_tool_id", tools.iter());
    let mut expected = doc["documented_tool_result"].clone();
    expected["content"][0]["tool_name"] = json!("get_weather");
    assert_eq!(answer, expected);

    // Chat Completions has no deferral: the tool goes out as any other.
    let chat = providers::export(&tools, Format::OpenAiChat { strict: false }).unwrap();
    assert!(
        chat[0].get("defer_loading").is_none()
            && chat[0]["function"].get("defer_loading").is_none()
    );
}

#[test]
fn openai_deferred_tools_and_the_tool_search_output_match_the_documented_shapes() {
    let doc = fixture("openai_tool_search.json");
    let documented = &doc["documented_output"];
    let tool = &documented["tools"][0];
    let registry = toolwright::registry::Registry::new(Catalog::empty());
    registry
        .register(deferred(
            "get_shipping_eta",
            tool["description"].as_str().unwrap(),
            tool["parameters"].clone(),
        ))
        .unwrap();
    let tools = registry.tools();
    let mut ours = providers::tool_search_output("call_abc123", &tools, false).unwrap();
    // Ours says `strict: false` besides; the rest is the documented item.
    assert_eq!(ours["tools"][0]["strict"], false);
    ours["tools"][0].as_object_mut().unwrap().remove("strict");
    assert_eq!(&ours, documented);
}

#[test]
fn openai_namespaces_group_deferred_tools_as_documented() {
    let doc = fixture("openai_namespace.json");
    let documented = &doc["documented_tools"][0];
    let function = &documented["tools"][0];
    let registry = toolwright::registry::Registry::new(Catalog::empty());
    let tool = |key: &str, name: &str, defer: bool| {
        toolwright::registry::DynamicTool::builder(key, name)
            .description(function["description"].as_str().unwrap())
            .effect(toolwright::Effect::Read)
            .defer(defer)
            .input_schema(function["parameters"].clone())
            .handler(|_| Box::pin(async { Ok(json!(null)) }))
            .build()
            .unwrap()
    };
    registry
        .register(tool("crm.list_open_orders", "list_open_orders", true))
        .unwrap();
    registry
        .register(tool("crm.open_orders_count", "open_orders_count", false))
        .unwrap();
    let tools = registry.tools();
    let mut ours = providers::export(&tools, Format::OpenAiResponses { strict: false }).unwrap();

    // The deferred tool goes out in the `crm` namespace, in the documented
    // shape; the one listed up front stays a top-level function.
    assert_eq!(keys(&ours[0]), keys(documented));
    assert_eq!(
        (&ours[0]["type"], &ours[0]["name"]),
        (&documented["type"], &documented["name"])
    );
    assert_eq!(ours[0]["description"], "The crm tools: list_open_orders.");
    let inner = &mut ours[0]["tools"][0];
    assert_eq!(inner["strict"], false);
    inner.as_object_mut().unwrap().remove("strict");
    assert_eq!(inner, function);
    assert_eq!(
        (&ours[1]["type"], &ours[1]["name"]),
        (&json!("function"), &json!("open_orders_count"))
    );
    assert_eq!(ours.as_array().unwrap().len(), 2);

    // The text export is the same document.
    let text = providers::export_json(&tools, Format::OpenAiResponses { strict: false }).unwrap();
    let text: Value = serde_json::from_str(text.get()).unwrap();
    assert_eq!(
        text,
        providers::export(&tools, Format::OpenAiResponses { strict: false }).unwrap()
    );

    // The search's answer loads the function inside its namespace.
    let found = [tools.get("list_open_orders").unwrap()];
    let answer = providers::tool_search_output("call_1", found, true).unwrap();
    assert_eq!(answer["tools"][0]["type"], "namespace");
    assert_eq!(answer["tools"][0]["tools"][0]["name"], "list_open_orders");

    // The model's call names the namespace and the function: it is the tool.
    let response = json!({"output": [doc["function_call"].clone()]});
    let calls =
        providers::parse_calls(&response, Format::OpenAiResponses { strict: false }).unwrap();
    assert_eq!(calls[0].name, "list_open_orders");
    assert_eq!(
        calls[0].arguments.as_ref().unwrap(),
        &json!({"customer_id": "CUST-12345"})
    );
}
