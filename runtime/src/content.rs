//! Tool results made of content blocks: text, images, audio and embedded
//! resources, for clients that show more than text.

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// The output schema's mark of a tool whose result is [`Contents`].
#[cfg(any(feature = "mcp", feature = "providers", feature = "import-mcp"))]
pub(crate) const CONTENTS_MARK: &str = "x-toolwright-contents";

/// A tool result made of content blocks, for a tool whose result is an
/// image, audio, a document, or several of them with text.
///
/// Over MCP the blocks are the result's `content`, as they are (no
/// `structuredContent`, no output schema: they are not structured data). A
/// model provider's result message gets their text, each other block named
/// by its kind and size (`[image/png, 68 bytes]`): providers take text
/// results. The application's [`invoke`](crate::Executor::invoke) gets the
/// blocks as MCP writes them (`{"type": "image", "data", "mimeType"}`), and
/// the typed [`call`](crate::Executor::call) gets the value itself.
///
/// ```
/// use toolwright::{tool, Catalog, Content, Contents};
///
/// /// Draw a chart of this month's sales.
/// #[tool(key = "sales.chart", effect = read, authorize = public)]
/// async fn sales_chart() -> Contents {
///     let png: Vec<u8> = vec![0x89, b'P', b'N', b'G']; // rendered elsewhere
///     Contents::from(vec![
///         Content::text("Sales rose 4% this month."),
///         Content::image(&png, "image/png"),
///     ])
/// }
///
/// let catalog = Catalog::builder().register::<SalesChartArgs>().build().unwrap();
/// let schema = catalog.get("sales_chart").unwrap().output_schema().unwrap();
/// assert_eq!(schema["type"], "array");
/// let blocks = serde_json::to_value(Contents::from(vec![Content::text("hi")])).unwrap();
/// assert_eq!(blocks, serde_json::json!([{"type": "text", "text": "hi"}]));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Contents(pub Vec<Content>);

impl From<Vec<Content>> for Contents {
    fn from(blocks: Vec<Content>) -> Self {
        Contents(blocks)
    }
}

/// One block of [`Contents`], serialized as MCP's content block.
///
/// ```
/// use toolwright::Content;
///
/// let wav = Content::audio(&[0x52, 0x49, 0x46, 0x46], "audio/wav");
/// let json = serde_json::to_value(&wav).unwrap();
/// assert_eq!(json["type"], "audio");
/// assert_eq!(json["mimeType"], "audio/wav");
/// assert_eq!(json["data"], "UklGRg==");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The image's bytes, base64-encoded.
        data: String,
        /// Its media type, such as `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// The audio's bytes, base64-encoded.
        data: String,
        /// Its media type, such as `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A document embedded whole, with the URI it is known by.
    Resource {
        /// The document.
        resource: Embedded,
    },
}

/// A document embedded in [`Content::Resource`]: text, or bytes as base64.
///
/// ```
/// use toolwright::Content;
///
/// let readme = Content::resource_text("file:///readme.md", "text/markdown", "# Hello");
/// let json = serde_json::to_value(&readme).unwrap();
/// assert_eq!(json["resource"]["uri"], "file:///readme.md");
/// assert_eq!(json["resource"]["text"], "# Hello");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Embedded {
    /// The URI the document is known by.
    pub uri: String,
    /// Its media type.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// Its text, for a text document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its bytes, base64-encoded, for any other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

impl Content {
    /// A text block.
    ///
    /// ```
    /// let block = toolwright::Content::text("done");
    /// # let _ = block;
    /// ```
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image block of `bytes` (encoded here) of media type `mime_type`.
    ///
    /// ```
    /// let block = toolwright::Content::image(&[0x89, b'P', b'N', b'G'], "image/png");
    /// # let _ = block;
    /// ```
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block of `bytes` (encoded here) of media type `mime_type`.
    ///
    /// ```
    /// let block = toolwright::Content::audio(b"RIFF", "audio/wav");
    /// # let _ = block;
    /// ```
    pub fn audio(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// A text document embedded whole.
    ///
    /// ```
    /// let block = toolwright::Content::resource_text("notes://1", "text/plain", "Call Ada.");
    /// # let _ = block;
    /// ```
    pub fn resource_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::Resource {
            resource: Embedded {
                uri: uri.into(),
                mime_type: mime_type.into(),
                text: Some(text.into()),
                blob: None,
            },
        }
    }

    /// A document of `bytes` (encoded here) embedded whole.
    ///
    /// ```
    /// let block = toolwright::Content::resource_bytes("files://report.pdf", "application/pdf", b"%PDF");
    /// # let _ = block;
    /// ```
    pub fn resource_bytes(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: &[u8],
    ) -> Self {
        Content::Resource {
            resource: Embedded {
                uri: uri.into(),
                mime_type: mime_type.into(),
                text: None,
                blob: Some(STANDARD.encode(bytes)),
            },
        }
    }
}

impl JsonSchema for Contents {
    fn schema_name() -> Cow<'static, str> {
        "Contents".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "array",
            "description": "Content blocks: text, images, audio, embedded resources.",
            "items": {
                "type": "object",
                "properties": {"type": {"enum": ["text", "image", "audio", "resource"]}},
                "required": ["type"],
            },
            "x-toolwright-contents": true,
        })
    }
}

/// Whether a tool whose output schema is `schema` returns [`Contents`].
#[cfg(any(feature = "mcp", feature = "providers"))]
pub(crate) fn is_contents(schema: Option<&serde_json::Value>) -> bool {
    schema.and_then(|schema| schema.get(CONTENTS_MARK)) == Some(&serde_json::Value::Bool(true))
}

/// What a model provider shows of `blocks` (a [`Contents`] value): their
/// text, each other block named by its kind and size.
#[cfg(feature = "providers")]
pub(crate) fn model_text(blocks: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let blocks = blocks.as_array()?;
    let described: Vec<String> = blocks
        .iter()
        .map(|block| {
            let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or_default();
            let size = |base64: &str| base64.len() / 4 * 3;
            match field("type") {
                "text" => field("text").to_owned(),
                "resource" => {
                    let resource = &block["resource"];
                    let uri = resource["uri"].as_str().unwrap_or_default();
                    match resource["text"].as_str() {
                        Some(text) => format!("[{uri}]\n{text}"),
                        None => format!(
                            "[{uri}: {}, {} bytes]",
                            resource["mimeType"].as_str().unwrap_or_default(),
                            size(resource["blob"].as_str().unwrap_or_default())
                        ),
                    }
                }
                _ => format!("[{}, {} bytes]", field("mimeType"), size(field("data"))),
            }
        })
        .collect();
    Some(described.join("\n"))
}
