//! The model APIs' wire formats, and their names.

use std::fmt;

/// A model API's wire format.
///
/// ```
/// use toolwright::providers::Format;
///
/// let format: Format = "openai-strict".parse().unwrap();
/// assert_eq!(format, Format::OpenAiChat { strict: true });
/// assert_eq!(Format::Gemini.to_string(), "gemini");
/// assert_eq!(Format::ALL.len(), 7);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// OpenAI Chat Completions: `{"type": "function", "function": {...}}`.
    /// With `strict`, schemas follow Structured Outputs' rules.
    OpenAiChat {
        /// Export for `strict: true`.
        strict: bool,
    },
    /// OpenAI Responses: `{"type": "function", "name", ...}`.
    OpenAiResponses {
        /// Export for `strict: true`.
        strict: bool,
    },
    /// Anthropic Messages: `{"name", "description", "input_schema"}`.
    Anthropic,
    /// Gemini `functionDeclarations` with `parameters` (OpenAPI 3.0 subset).
    Gemini,
    /// Gemini `functionDeclarations` with `parametersJsonSchema` (JSON Schema).
    GeminiJsonSchema,
}

impl Format {
    /// Every format, for listings and tests.
    pub const ALL: [Format; 7] = [
        Format::OpenAiChat { strict: false },
        Format::OpenAiChat { strict: true },
        Format::OpenAiResponses { strict: false },
        Format::OpenAiResponses { strict: true },
        Format::Anthropic,
        Format::Gemini,
        Format::GeminiJsonSchema,
    ];

    /// Gemini's formats, which hold every declaration in one `Tool`.
    pub(super) fn is_gemini(self) -> bool {
        matches!(self, Format::Gemini | Format::GeminiJsonSchema)
    }

    pub(super) fn is_openai(self) -> bool {
        matches!(
            self,
            Format::OpenAiChat { .. } | Format::OpenAiResponses { .. }
        )
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::OpenAiChat { strict: false } => "openai",
            Format::OpenAiChat { strict: true } => "openai-strict",
            Format::OpenAiResponses { strict: false } => "openai-responses",
            Format::OpenAiResponses { strict: true } => "openai-responses-strict",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::GeminiJsonSchema => "gemini-json-schema",
        })
    }
}

/// The name is not one of [`Format`]'s.
///
/// ```
/// use toolwright::providers::{Format, UnknownFormat};
///
/// let error = "openai-v2".parse::<Format>().unwrap_err();
/// assert_eq!(error, UnknownFormat("openai-v2".into()));
/// assert!(error.to_string().contains("anthropic"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown format `{0}`; use openai, openai-strict, openai-responses, openai-responses-strict, anthropic, gemini or gemini-json-schema"
)]
pub struct UnknownFormat(pub String);

impl std::str::FromStr for Format {
    type Err = UnknownFormat;

    /// Parses the names [`Format`] displays as.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.to_string() == s)
            .ok_or_else(|| UnknownFormat(s.to_owned()))
    }
}
