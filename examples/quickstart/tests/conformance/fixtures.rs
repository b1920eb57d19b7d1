//! What the official MCP conformance suite asks of a server besides the
//! quickstart's own tools: the
//! reference server's fixture tools whose result is text (some of them
//! talk to the client while they run, through [`McpCall`]), and its
//! resources, prompts, completions and logging levels, served by a
//! companion rmcp handler ([`McpServerBuilder::companion`]).
//!
//! The shapes follow the suite's scenarios; none of this is part of the
//! task list.

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolwright::mcp::rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, UnsubscribeRequestParams,
};
use toolwright::mcp::rmcp::service::RequestContext;
use toolwright::mcp::rmcp::{ErrorData, RoleServer, ServerHandler};
use toolwright::mcp::{McpCall, McpServerBuilder};
use toolwright::{
    BoxError, Content, Contents, Effect,
    registry::{DynamicCall, DynamicTool, Registry},
};

/// A WAV file's first bytes, base64: what the suite looks at is the type.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

/// A 1×1 red PNG, base64.
const RED_PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// What a fixture tool's handler returns.
type Answer = Result<Value, BoxError>;

/// A fixture tool called `name` that answers with `handler`.
fn fixture<F>(
    name: &str,
    description: &str,
    input: Value,
    handler: F,
) -> Result<DynamicTool, BoxError>
where
    F: Fn(Value) -> toolwright::executor::BoxFuture<'static, Answer> + Send + Sync + 'static,
{
    Ok(builder(name, description, input)
        .handler(move |call: DynamicCall<'_>| handler(call.into_arguments()))
        .build()?)
}

/// A fixture tool called `name`, with no arguments, whose result is `blocks`.
fn contents(name: &str, description: &str, blocks: Vec<Content>) -> Result<DynamicTool, BoxError> {
    let result = serde_json::to_value(Contents::from(blocks))?;
    let empty = json!({"type": "object", "properties": {}});
    Ok(builder(name, description, empty)
        .output_schema(serde_json::to_value(schemars::schema_for!(Contents))?)
        .handler(move |_| {
            let result = result.clone();
            Box::pin(async move { Ok(result) })
        })
        .build()?)
}

/// A read-only fixture tool called `name`, keyed under `conformance`.
fn builder(
    name: &str,
    description: &str,
    input: Value,
) -> toolwright::registry::DynamicToolBuilder {
    let key = format!("conformance.{}", name.trim_start_matches("test_"));
    DynamicTool::builder(key, name)
        .description(description)
        .effect(Effect::Read)
        .input_schema(input)
}

/// The MCP request the fixture serves: these tools are only called over MCP.
fn mcp_call() -> Result<McpCall, BoxError> {
    McpCall::current().ok_or_else(|| "called outside an MCP request".into())
}

/// An rmcp value from its JSON form, for a tool.
fn made<T: DeserializeOwned>(value: Value) -> Result<T, BoxError> {
    Ok(serde_json::from_value(value)?)
}

/// Asks the client to fill in `schema`, and answers with what it said.
async fn elicit(message: &str, schema: Value) -> Answer {
    let call = mcp_call()?;
    let params = made(json!({"mode": "form", "message": message, "requestedSchema": schema}))?;
    let answer = call.peer().create_elicitation(params).await?;
    Ok(json!(format!(
        "The client answered: {}",
        serde_json::to_string(&answer)?
    )))
}

/// Adds the fixture tools whose result is text: a fixed text, one that
/// fails, and those that log, report progress, or ask the client for a
/// sampling or elicitations while they run.
pub(crate) fn register_tools(registry: &Registry) -> Result<(), BoxError> {
    let empty = json!({"type": "object", "properties": {}});
    let talking = [
        fixture(
            "test_tool_with_logging",
            "Send three log messages.",
            empty.clone(),
            |_| {
                Box::pin(async {
                    let call = mcp_call()?;
                    for (level, text) in
                        [("info", "starting"), ("info", "working"), ("info", "done")]
                    {
                        let message =
                            made(json!({"level": level, "logger": "conformance", "data": text}))?;
                        #[allow(deprecated)] // SEP-2577; still what clients listen for
                        call.peer().notify_logging_message(message).await?;
                    }
                    Ok(json!("Logged three messages."))
                })
            },
        )?,
        fixture(
            "test_tool_with_progress",
            "Report progress three times.",
            empty.clone(),
            |_| {
                Box::pin(async {
                    let call = mcp_call()?;
                    for done in [0.0, 50.0, 100.0] {
                        call.progress(done, Some(100.0), None).await?;
                    }
                    Ok(json!("Reported progress."))
                })
            },
        )?,
        fixture(
            "test_sampling",
            "Ask the client's model to answer a prompt.",
            json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
            |arguments| {
                Box::pin(async move {
                    let call = mcp_call()?;
                    let prompt = arguments["prompt"].as_str().unwrap_or_default().to_owned();
                    let params = made(json!({
                        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                        "maxTokens": 100,
                    }))?;
                    #[allow(deprecated)] // SEP-2577; still what clients answer
                    let answer = call.peer().create_message(params).await?;
                    Ok(json!(format!(
                        "The model answered: {}",
                        serde_json::to_string(&answer)?
                    )))
                })
            },
        )?,
        fixture(
            "test_elicitation",
            "Ask the person for their name and email.",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
            |arguments| {
                Box::pin(async move {
                    let message = arguments["message"].as_str().unwrap_or_default().to_owned();
                    let schema = json!({"type": "object", "properties": {
                        "username": {"type": "string", "description": "Your user name"},
                        "email": {"type": "string", "format": "email"},
                    }, "required": ["username", "email"]});
                    elicit(&message, schema).await
                })
            },
        )?,
        fixture(
            "test_elicitation_sep1034_defaults",
            "Ask the person, with a default for every field.",
            empty.clone(),
            |_| {
                Box::pin(elicit(
                    "Confirm or change your details.",
                    json!({"type": "object", "properties": {
                        "name": {"type": "string", "default": "John Doe"},
                        "age": {"type": "integer", "default": 30},
                        "score": {"type": "number", "default": 95.5},
                        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "default": true},
                    }}),
                ))
            },
        )?,
        fixture(
            "test_elicitation_sep1330_enums",
            "Ask the person to choose, in every enum form.",
            empty.clone(),
            |_| {
                let titled = json!([
                    {"const": "value1", "title": "First"},
                    {"const": "value2", "title": "Second"},
                    {"const": "value3", "title": "Third"},
                ]);
                let options = json!(["option1", "option2", "option3"]);
                Box::pin(elicit(
                    "Choose.",
                    json!({"type": "object", "properties": {
                        "untitledSingle": {"type": "string", "enum": options},
                        "titledSingle": {"type": "string", "oneOf": titled},
                        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                                       "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
                        "titledMulti": {"type": "array", "items": {"anyOf": titled}},
                    }}),
                ))
            },
        )?,
    ];
    registry.register_all(talking)?;
    let image = || Content::Image {
        data: RED_PIXEL.into(),
        mime_type: "image/png".into(),
    };
    let document = || {
        Content::resource_text(
            "test://embedded-resource",
            "text/plain",
            "This is an embedded resource content.",
        )
    };
    let showing = [
        contents("test_image_content", "Show an image.", vec![image()])?,
        contents(
            "test_audio_content",
            "Play a sound.",
            vec![Content::Audio {
                data: WAV.into(),
                mime_type: "audio/wav".into(),
            }],
        )?,
        contents(
            "test_embedded_resource",
            "Show a document.",
            vec![document()],
        )?,
        contents(
            "test_multiple_content_types",
            "Show text, an image and a document.",
            vec![
                Content::text("Multiple content types test:"),
                image(),
                document(),
            ],
        )?,
    ];
    registry.register_all(showing)?;
    let simple = DynamicTool::builder("conformance.simple_text", "test_simple_text")
        .description("Answer a fixed text.")
        .effect(Effect::Read)
        .input_schema(empty.clone())
        .handler(|_| Box::pin(async { Ok(json!("This is a simple text response for testing.")) }))
        .build()?;
    let failing = DynamicTool::builder("conformance.error_handling", "test_error_handling")
        .description("Always fail.")
        .effect(Effect::Read)
        .input_schema(empty)
        .handler(|_| {
            Box::pin(async { Err("this tool always fails, for the conformance suite".into()) })
        })
        .build()?;
    registry.register_all([simple, failing])?;
    Ok(())
}

/// `server` with the fixture's resources, prompts, completions and logging,
/// its tools reaching their requests.
pub(crate) fn with_fixtures<C: Send + Sync + 'static>(
    server: McpServerBuilder<C>,
) -> McpServerBuilder<C> {
    server.companion(Fixtures).mcp_calls()
}

/// The reference server's resources and prompts, as the suite reads them.
struct Fixtures;

/// An rmcp result from its JSON form.
fn wire<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

impl ServerHandler for Fixtures {
    #[allow(deprecated)] // logging: SEP-2577; the suite still sets a level
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_completions()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        wire(json!({"resources": [
            {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png"},
            {"uri": "test://watched-resource", "name": "watched-resource", "mimeType": "text/plain"},
        ]}))
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        wire(json!({"resourceTemplates": [{
            "uriTemplate": "test://template/{id}/data",
            "name": "template-data",
            "mimeType": "application/json",
        }]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let content = match uri {
            "test://static-binary" => {
                json!({"uri": uri, "mimeType": "image/png", "blob": RED_PIXEL})
            }
            "test://static-text" | "test://watched-resource" | "test://example-resource" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "This is the content of a static text resource."})
            }
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) => json!({
                    "uri": uri,
                    "mimeType": "application/json",
                    "text": json!({"id": id, "data": format!("data for {id}")}).to_string(),
                }),
                None => {
                    let data = Some(json!({"uri": uri}));
                    return Err(ErrorData::resource_not_found("no such resource", data));
                }
            },
        };
        let result: ReadResourceResult = wire(json!({"contents": [content]}))?;
        Ok(result.into())
    }

    #[allow(deprecated)] // what clients before 2026-07-28 send
    async fn subscribe(
        &self,
        _: SubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    #[allow(deprecated)] // what clients before 2026-07-28 send
    async fn unsubscribe(
        &self,
        _: UnsubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        wire(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A prompt with no arguments."},
            {"name": "test_prompt_with_arguments", "description": "A prompt with two arguments.",
             "arguments": [{"name": "arg1", "required": true}, {"name": "arg2", "required": true}]},
            {"name": "test_prompt_with_embedded_resource", "description": "A prompt with a resource.",
             "arguments": [{"name": "resourceUri", "required": true}]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image."},
        ]}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let argument = |name: &str| {
            let value = request.arguments.as_ref().and_then(|args| args.get(name));
            value.and_then(Value::as_str).unwrap_or_default().to_owned()
        };
        let text =
            |text: String| json!({"role": "user", "content": {"type": "text", "text": text}});
        let messages = match request.name.as_str() {
            "test_simple_prompt" => json!([text("This is a simple prompt for testing.".into())]),
            "test_prompt_with_arguments" => json!([text(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                argument("arg1"),
                argument("arg2")
            ))]),
            "test_prompt_with_embedded_resource" => {
                let uri = argument("resourceUri");
                json!([
                    {"role": "user", "content": {"type": "resource", "resource": {
                        "uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing.",
                    }}},
                    text("Please process the embedded resource above.".into()),
                ])
            }
            "test_prompt_with_image" => json!([
                {"role": "user", "content": {"type": "image", "data": RED_PIXEL, "mimeType": "image/png"}},
                text("Please analyze the image above.".into()),
            ]),
            _ => return Err(ErrorData::invalid_params("no such prompt", None)),
        };
        let result: GetPromptResult = wire(json!({"messages": messages}))?;
        Ok(result.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let typed = request.argument.value;
        let values: Vec<&str> = ["paris", "park", "party"]
            .into_iter()
            .filter(|value| value.starts_with(typed.as_str()))
            .collect();
        wire(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }

    #[allow(deprecated)] // SEP-2577; still what clients send
    async fn set_level(
        &self,
        _: toolwright::mcp::rmcp::model::SetLevelRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }
}
