//! One client of `soak lists`: an MCP session over Streamable HTTP that
//! lists every tool, page by page, as MCP clients do.

use serde_json::{Value, json};

use super::BoxError;

/// What one full listing saw.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Listing {
    /// Tools listed, over every page.
    pub(crate) tools: usize,
    /// Answers it took.
    pub(crate) pages: usize,
    /// The largest answer's body, in bytes.
    pub(crate) largest: usize,
    /// Every answer's body, in bytes.
    pub(crate) bytes: usize,
}

/// An initialized session, on a connection of its own.
pub(crate) struct Session {
    client: reqwest::Client,
    url: String,
    id: String,
}

impl Session {
    /// Initializes a session: `initialize`, then `notifications/initialized`.
    pub(crate) async fn open(url: &str) -> Result<Session, BoxError> {
        let client = reqwest::Client::new();
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "soak-lists", "version": "0"}}
        });
        let response = request(&client, url)
            .body(initialize.to_string())
            .send()
            .await?;
        let id = response
            .headers()
            .get("mcp-session-id")
            .ok_or("`initialize` answered without a session id")?
            .to_str()?
            .to_owned();
        answer(&response.text().await?)?;
        let session = Session {
            client,
            url: url.to_owned(),
            id,
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        session.post(&initialized).await?;
        Ok(session)
    }

    /// Lists every tool, following `nextCursor` to the last page.
    pub(crate) async fn list_all(&self) -> Result<Listing, BoxError> {
        let mut listing = Listing::default();
        let mut cursor: Option<String> = None;
        loop {
            let params = cursor.map_or(json!({}), |cursor| json!({"cursor": cursor}));
            let list = json!({"jsonrpc": "2.0", "id": listing.pages + 1,
                              "method": "tools/list", "params": params});
            let body = self.post(&list).await?;
            let result = answer(&body)?;
            listing.pages += 1;
            listing.bytes += body.len();
            listing.largest = listing.largest.max(body.len());
            listing.tools += result["tools"].as_array().map_or(0, Vec::len);
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(listing),
            }
        }
    }

    /// Ends the session (`DELETE`), as a client that is done does.
    pub(crate) async fn close(self) -> Result<(), BoxError> {
        self.client
            .delete(&self.url)
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
            .await?
            .error_for_status()?;
        Ok(())
    }

    /// Posts `message` in the session: the answer's body.
    async fn post(&self, message: &Value) -> Result<String, BoxError> {
        let response = request(&self.client, &self.url)
            .header("mcp-session-id", &self.id)
            .body(message.to_string())
            .send()
            .await?
            .error_for_status()?;
        Ok(response.text().await?)
    }
}

fn request(client: &reqwest::Client, url: &str) -> reqwest::RequestBuilder {
    client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
}

/// The `result` of a JSON-RPC answer, sent as JSON or, in a session, as
/// the `data:` of an event stream.
fn answer(body: &str) -> Result<Value, BoxError> {
    let json = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .find(|data| data.starts_with('{'))
        .unwrap_or(body);
    let mut message: Value = serde_json::from_str(json)?;
    match message.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(format!("an error answer: {}", message["error"]).into()),
    }
}
