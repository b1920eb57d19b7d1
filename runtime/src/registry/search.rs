//! A ranked search over tools, for a model that is not shown them all: it
//! describes what it wants, the search answers with the tools that fit.
//!
//! The ranking is Okapi BM25 over each tool's words (its name, title,
//! description, tags, search hint and parameters). It is written here rather than taken
//! from a crate: the `bm25` crate's tokenizer brings stemmers, stop-word
//! lists and language detection for prose, while a tool's words are
//! identifiers and short sentences (`cancel_order`, `orderId`), which want
//! splitting at `_`, `-` and case changes instead; the scoring itself is
//! a dozen lines. Deterministic: no model, no network, ties in key order.

use std::collections::HashMap;

use serde_json::Value;

use crate::catalog::ToolEntry;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalization.
const B: f64 = 0.75;

/// How many times each field counts: a word of the name says more about
/// a tool than a word of its description.
const NAME_WEIGHT: usize = 3;
const TITLE_WEIGHT: usize = 2;
const TAG_WEIGHT: usize = 2;
/// A search hint is what its author expects users to say.
const HINT_WEIGHT: usize = 2;

/// Words too common in descriptions to tell tools apart.
const STOP_WORDS: [&str; 24] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "my", "of",
    "on", "or", "that", "the", "this", "to", "with", "me", "i",
];

/// The name of the tool a model searches deferred tools with, over MCP
/// and in the provider formats without deferral.
#[cfg(any(feature = "mcp", feature = "providers"))]
pub(crate) const SEARCH_TOOL: &str = "search_tools";

/// What the search tool tells a model it does.
#[cfg(any(feature = "mcp", feature = "providers"))]
pub(crate) const SEARCH_DESCRIPTION: &str = "Search this server's other tools by what you want \
     to do. The tools found are described here, and added to your tool list.";

/// How many tools one search answers with unless asked for fewer.
#[cfg(any(feature = "mcp", feature = "providers"))]
const DEFAULT_LIMIT: usize = 5;
/// The most tools one search answers with.
#[cfg(any(feature = "mcp", feature = "providers"))]
const MAX_LIMIT: usize = 10;

/// The search tool's input schema: a query, and how many tools to find.
#[cfg(any(feature = "mcp", feature = "providers"))]
pub(crate) fn search_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What you want to do, in a few words.",
            },
            "limit": {
                "type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                "description": "How many tools to find (5 unless given).",
            },
        },
        "required": ["query"],
        "additionalProperties": false,
    })
}

/// The query and the number of tools a search tool's `arguments` ask
/// for, or what is wrong with them.
#[cfg(any(feature = "mcp", feature = "providers"))]
pub(crate) fn search_request(arguments: &Value) -> Result<(&str, usize), &'static str> {
    let query = arguments
        .get("query")
        .and_then(Value::as_str)
        .ok_or("`query` is required: what you want to do, in a few words")?;
    let limit = arguments
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_LIMIT, |n| usize::try_from(n).unwrap_or(MAX_LIMIT))
        .clamp(1, MAX_LIMIT);
    Ok((query, limit))
}

/// The deferred tools a search found for one MCP session or one
/// conversation, by key, oldest first: they join its tool list.
#[cfg(any(feature = "mcp", feature = "providers"))]
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub(crate) struct Found(Vec<String>);

#[cfg(any(feature = "mcp", feature = "providers"))]
impl Found {
    /// Whether the tool `key` was found.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.0.iter().any(|k| k == key)
    }

    /// Whether `tool` is in the list: not deferred, or found.
    pub(crate) fn lists(&self, tool: &ToolEntry) -> bool {
        !tool.deferred() || self.contains(tool.key())
    }

    /// Runs the search tool's call with `arguments` over the deferred
    /// tools of `tools` and keeps what it found, at most `cap`, the
    /// oldest going first: the tools found, best first, and whether the
    /// list grew; or what is wrong with the arguments.
    pub(crate) fn search<'t>(
        &mut self,
        tools: &'t super::Tools,
        arguments: &Value,
        cap: usize,
    ) -> Result<(Vec<&'t ToolEntry>, bool), &'static str> {
        let (query, limit) = search_request(arguments)?;
        let hits = tools.deferred_index().search(query, limit);
        let found: Vec<&ToolEntry> = hits.iter().filter_map(|hit| tools.get(&hit.name)).collect();
        let before = self.0.clone();
        for tool in &found {
            if !self.contains(tool.key()) {
                self.0.push(tool.key().to_owned());
            }
        }
        let excess = self.0.len().saturating_sub(cap);
        self.0.drain(..excess);
        let grew = self.0 != before;
        Ok((found, grew))
    }
}

/// An index of tools to search, built once and searched many times.
///
/// Build it from the tools a caller may list (a view's
/// [`Tools`](super::Tools)), so that a search never reveals a tool the
/// caller could not list.
///
/// ```
/// use toolwright::{tool, Catalog, registry::SearchIndex};
///
/// /// Cancel an order that has not shipped yet.
/// #[tool(key = "shop.cancel_order", effect = read, authorize = public)]
/// async fn cancel_order(order_id: u64) -> bool { true }
///
/// /// Look up the weather forecast for a city.
/// #[tool(key = "weather.forecast", effect = read, authorize = public)]
/// async fn forecast(city: String) -> String { city }
///
/// let catalog = Catalog::builder()
///     .register::<CancelOrderArgs>()
///     .register::<ForecastArgs>()
///     .build()
///     .unwrap();
/// let index = SearchIndex::new(catalog.iter());
/// let hits = index.search("I want to cancel my orders", 5);
/// assert_eq!(hits[0].key, "shop.cancel_order");
/// assert!(index.search("rain tomorrow in Paris", 5).is_empty(), "no word in common");
/// ```
#[derive(Debug, Clone)]
pub struct SearchIndex {
    tools: Vec<Indexed>,
    /// Each word, and the tools it occurs in with how many times it
    /// counts there: a search reads the lists of its words only.
    postings: HashMap<String, Vec<(usize, usize)>>,
    average_length: f64,
}

#[derive(Debug, Clone)]
struct Indexed {
    key: String,
    name: String,
    /// How many words it has, each counted by its field's weight.
    length: usize,
}

/// A tool a search found, with its score (higher fits better).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Hit {
    /// The tool's key.
    pub key: String,
    /// The tool's name, as a model calls it.
    pub name: String,
    /// Its BM25 score for the query.
    pub score: f64,
}

impl SearchIndex {
    /// An index of `tools`.
    pub fn new<'a>(tools: impl IntoIterator<Item = &'a ToolEntry>) -> Self {
        let mut postings: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
        let tools: Vec<Indexed> = tools
            .into_iter()
            .enumerate()
            .map(|(at, tool)| {
                let words = counted(tool);
                let length = words.values().sum();
                for (word, count) in words {
                    postings.entry(word).or_default().push((at, count));
                }
                Indexed {
                    key: tool.key().to_owned(),
                    name: tool.name().to_owned(),
                    length,
                }
            })
            .collect();
        let total: usize = tools.iter().map(|t| t.length).sum();
        let average_length = total as f64 / tools.len().max(1) as f64;
        SearchIndex {
            tools,
            postings,
            average_length,
        }
    }

    /// How many tools it holds.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether it holds no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tools that best fit `query`, at most `limit`, best first; ties
    /// in key order. A tool with no word of the query is not a hit.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let mut query = words(query);
        query.sort();
        query.dedup();
        let count = self.tools.len() as f64;
        // A score per tool, and the tools that have one.
        let (mut scores, mut found) = (vec![0.0_f64; self.tools.len()], Vec::new());
        for postings in query.iter().filter_map(|word| self.postings.get(word)) {
            let df = postings.len() as f64;
            let idf = ((count - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(at, tf) in postings {
                let tf = tf as f64;
                let norm = 1.0 - B + B * self.tools[at].length as f64 / self.average_length;
                if scores[at] == 0.0 {
                    found.push(at);
                }
                scores[at] += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
            }
        }
        let mut hits: Vec<(usize, f64)> = found.into_iter().map(|at| (at, scores[at])).collect();
        hits.sort_by(|a, b| {
            let key = |at: usize| self.tools[at].key.as_str();
            b.1.total_cmp(&a.1).then_with(|| key(a.0).cmp(key(b.0)))
        });
        hits.truncate(limit);
        hits.into_iter()
            .map(|(at, score)| Hit {
                key: self.tools[at].key.clone(),
                name: self.tools[at].name.clone(),
                score,
            })
            .collect()
    }
}

/// A tool's words, each counted by its field's weight.
fn counted(tool: &ToolEntry) -> HashMap<String, usize> {
    let mut words: HashMap<String, usize> = HashMap::new();
    let mut add = |text: &str, weight: usize| {
        for word in self::words(text) {
            *words.entry(word).or_default() += weight;
        }
    };
    add(tool.name(), NAME_WEIGHT);
    add(tool.key(), 1);
    if let Some(title) = tool.title() {
        add(title, TITLE_WEIGHT);
    }
    add(tool.description(), 1);
    for tag in tool.tags() {
        add(tag, TAG_WEIGHT);
    }
    if let Some(hint) = tool.search_hint() {
        add(hint, HINT_WEIGHT);
    }
    if let Some(Value::Object(properties)) = tool.input_schema().get("properties") {
        for (name, schema) in properties {
            add(name, 1);
            if let Some(description) = schema.get("description").and_then(Value::as_str) {
                add(description, 1);
            }
        }
    }
    words
}

/// The words of `text`: split at anything but letters and digits and at
/// a lower-case letter followed by an upper-case one (`orderId` is
/// `order` `id`), lower-cased, without stop words, and a trailing plural
/// `s` dropped (`orders` is `order`).
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        let split = !c.is_alphanumeric() || (previous_lower && c.is_uppercase());
        if split && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        previous_lower = c.is_lowercase();
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
        .into_iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|mut w| {
            if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
                w.pop();
            }
            w
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn identifiers_and_sentences_become_the_same_words() {
        assert_eq!(words("cancel_order"), ["cancel", "order"]);
        assert_eq!(words("cancelOrder"), ["cancel", "order"]);
        assert_eq!(words("shop.cancel-orders"), ["shop", "cancel", "order"]);
        assert_eq!(
            words("Cancel my Orders, please"),
            ["cancel", "order", "please"]
        );
        assert_eq!(
            words("the address of the business"),
            ["address", "business"]
        );
    }
}
