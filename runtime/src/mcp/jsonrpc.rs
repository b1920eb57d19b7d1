//! JSON-RPC answers to what a client sent that is no message the server
//! reads, the same over stdio and HTTP.

use rmcp::model::{ErrorCode, ErrorData, RequestId};
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

/// An error answer to a line the server could not read. Not rmcp's
/// `JsonRpcError`, which leaves out an unknown id: JSON-RPC 2.0 says `null`.
#[derive(Serialize)]
pub(super) struct Reply {
    jsonrpc: &'static str,
    id: Option<RequestId>,
    error: ErrorData,
}

impl Reply {
    pub(super) fn new(id: Option<RequestId>, error: ErrorData) -> Self {
        Reply {
            jsonrpc: "2.0",
            id,
            error,
        }
    }
}

/// How to answer text that did not read as a message.
pub(super) enum Unreadable {
    /// With this error.
    Answer(Reply),
    /// Not at all over stdio: a notification or a response, which expects
    /// no answer (answering could start two peers answering each other).
    Unanswered,
}

/// How to answer `text`, which failed to read as a client's message with
/// `error`: -32700 when it is not JSON, -32600 (with its id when it has
/// one) when it is JSON but no message. Texts never quote the input.
pub(super) fn unreadable(text: &[u8], error: &serde_json::Error) -> Unreadable {
    match error.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            tracing::debug!("an incoming MCP message is not JSON: {error}");
            // serde_json's syntax errors say where, never what: the input
            // is not quoted.
            let message = format!("Parse error: {error}");
            Unreadable::Answer(Reply::new(None, ErrorData::parse_error(message, None)))
        }
        serde_json::error::Category::Data | serde_json::error::Category::Io => {
            tracing::debug!("an incoming MCP message is not one: {error}");
            not_a_message(text)
        }
    }
}

/// The error a refused request gets from a server-side limit (-32000).
pub(super) fn server_error(message: String) -> Reply {
    Reply::new(None, ErrorData::new(ErrorCode(-32000), message, None))
}

/// The answer to JSON that is not a message the server reads. Its text is
/// fixed: serde's says no more ("unrecognized JSON-RPC message").
fn not_a_message(line: &[u8]) -> Unreadable {
    const NOT_A_MESSAGE: &str = "Invalid request: not a JSON-RPC 2.0 message";
    let (id, message) = match line.trim_ascii_start().first() {
        Some(b'[') => (None, "Invalid request: batches are not supported"),
        Some(b'{') => match serde_json::from_slice::<Shape<'_>>(line) {
            Ok(shape) => {
                let notification = shape.method.is_some() && shape.id.0.is_none();
                let response =
                    shape.method.is_none() && (shape.result.is_some() || shape.error.is_some());
                if notification || response {
                    return Unreadable::Unanswered;
                }
                let id = shape
                    .id
                    .0
                    .and_then(|raw| serde_json::from_str::<RequestId>(raw.get()).ok());
                (id, NOT_A_MESSAGE)
            }
            // Duplicate members, say.
            Err(_) => (None, NOT_A_MESSAGE),
        },
        _ => (None, NOT_A_MESSAGE),
    };
    Unreadable::Answer(Reply::new(id, ErrorData::invalid_request(message, None)))
}

/// The members of an object that say what kind of message it is.
#[derive(Deserialize)]
struct Shape<'a> {
    #[serde(borrow, default)]
    id: Member<'a>,
    method: Option<IgnoredAny>,
    result: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

/// A member's text, if the object has it (`null` included).
#[derive(Default)]
struct Member<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&RawValue>::deserialize(deserializer).map(|raw| Member(Some(raw)))
    }
}
