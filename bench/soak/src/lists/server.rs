//! The serving process of `soak lists`: a registry of many dynamic tools
//! behind the Streamable HTTP endpoint, on loopback.

use std::io::Write;

use serde_json::json;
use toolwright::mcp::{HttpOptions, McpServer, allow_anonymous};
use toolwright::{
    Catalog, Container, Effect, Executor,
    registry::{DynamicTool, DynamicToolError, Registry},
};

use super::{BoxError, Options};

/// Serves `options.tools` tools in pages of `options.page_size`, printing
/// the endpoint's URL as the first line of stdout, until stdin closes (the
/// measuring process holds its other end, so the server ends with it).
pub(crate) fn serve(options: Options) -> Result<(), BoxError> {
    std::thread::spawn(|| {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        std::process::exit(0);
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let registry = Registry::new(Catalog::builder().build()?);
        let tools = (0..options.tools)
            .map(tool)
            .collect::<Result<Vec<_>, _>>()?;
        registry.register_all(tools)?;
        let executor = Executor::new(registry, Container::default())?;
        let server = McpServer::<()>::builder(executor, "soak-lists", "0")
            .page_size(options.page_size)
            .build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "http://{}/mcp", listener.local_addr()?)?;
        stdout.flush()?;
        server
            .serve_http_on(listener, allow_anonymous(()), HttpOptions::default())
            .await?;
        Ok(())
    })
}

/// Tool `i`, described as a tool of a real API is: two sentences, six
/// documented parameters with bounds, an output schema; listed, about
/// 2 KB of JSON.
fn tool(i: usize) -> Result<DynamicTool, DynamicToolError> {
    DynamicTool::builder(format!("records.search_{i:05}"), format!("search_records_{i:05}"))
        .title(format!("Search collection {i}"))
        .description(format!(
            "Find the records of collection {i} that match a query, newest first. Each \
             record carries its identifier, owner, status and the time it last changed; \
             pass an answer's cursor back to read the next page of matches. It changes \
             nothing, and answers within a second for collections of a million records."
        ))
        .effect(Effect::Read)
        .input_schema(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 200,
                          "description": "Words a record's title or notes must all contain, in any case; quote a phrase to match it whole."},
                "owner": {"type": "string", "maxLength": 64,
                          "description": "Only the records owned by this user id, as the directory spells it (`u-` and twelve digits)."},
                "status": {"type": "string", "enum": ["open", "pending", "closed", "archived"],
                           "description": "Only the records in this status."},
                "changed_after": {"type": "string", "format": "date-time",
                                  "description": "Only the records changed after this instant, in RFC 3339 with a time zone, e.g. 2026-01-31T09:00:00Z."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20,
                          "description": "The most records to return in one answer."},
                "cursor": {"type": "string", "maxLength": 256,
                           "description": "The cursor of an earlier answer, to continue where it stopped."}
            },
            "required": ["query"],
            "additionalProperties": false
        }))
        .output_schema(json!({
            "type": "object",
            "properties": {
                "records": {"type": "array", "description": "The matching records, newest first.",
                            "items": {"type": "object", "properties": {
                                "id": {"type": "string", "description": "The record's identifier."},
                                "owner": {"type": "string", "description": "The user id of its owner."},
                                "status": {"type": "string", "enum": ["open", "pending", "closed", "archived"]},
                                "changed": {"type": "string", "format": "date-time",
                                            "description": "When it last changed."}
                            }, "required": ["id", "owner", "status", "changed"]}},
                "cursor": {"type": ["string", "null"],
                           "description": "Where the next page starts; null after the last."}
            },
            "required": ["records", "cursor"]
        }))
        .handler(|_| Box::pin(async { Ok(json!({"records": [], "cursor": null})) }))
        .build()
}
