//! The `tools/call` of `add` (2 + 3) the HTTP benches post, as a
//! stateless Streamable HTTP client sends it. Included by `mcp_http.rs` and
//! `observe.rs` with `#[path]`.

const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#;

/// The request of one `tools/call` of `add` to the MCP endpoint `url`.
pub(crate) fn add_request(client: &reqwest::Client, url: &str) -> reqwest::RequestBuilder {
    client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(CALL)
}
