//! A ranked search over tools, for a model that is not shown them all: it
//! describes what it wants, the search answers with the tools that fit.
//!
//! The ranking is Okapi BM25 over each tool's words (its name, title,
//! description, tags, search hint and parameters), reduced to their stems
//! (`rust-stemmers`' Porter2: "deleted" and "deleting" are `delet`, as
//! `delete_file`'s word is). A query's word counts its synonyms too, from
//! a [thesaurus](thesaurus) of applications' common words, for
//! less; and two query words written apart count as one ("check out" is
//! `checkout`). The scoring is written here rather than taken from a
//! crate: the `bm25` crate's tokenizer is made for prose, while a tool's
//! words are identifiers and short sentences (`cancel_order`, `orderId`),
//! which want splitting at `_`, `-` and case changes; the scoring itself
//! is a dozen lines. Deterministic: no model, no network; of tools that fit as well,
//! read-only ones first, then in key order.

use std::collections::HashMap;
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

use serde_json::Value;

use crate::catalog::ToolEntry;
use crate::effect::Effect;
use crate::util::hash::KeyMap;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalization.
const B: f64 = 0.75;

/// How many times each field counts: a word of the name says more about
/// a tool than a word of its description.
const NAME_WEIGHT: u32 = 3;
const TITLE_WEIGHT: u32 = 2;
const TAG_WEIGHT: u32 = 2;
/// A search hint is what its author expects users to say.
const HINT_WEIGHT: u32 = 2;

/// How much a synonym of a query's word counts, against the word itself.
const SYNONYM_WEIGHT: f64 = 0.5;

mod thesaurus;

/// Words too common in descriptions and requests to tell tools apart.
const STOP_WORDS: [&str; 44] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "my", "of",
    "on", "or", "that", "the", "this", "to", "with", "me", "i", "you", "your", "we", "our", "us",
    "can", "could", "would", "do", "does", "did", "please", "what", "which", "who", "whose",
    "there", "its", "has", "have",
];

/// English stems: Snowball's Porter2.
static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// Each stem of the thesaurus, and the stems of its synonyms.
static SYNONYMS: LazyLock<HashMap<String, Vec<String>>> = LazyLock::new(|| {
    let mut synonyms: HashMap<String, Vec<String>> = HashMap::new();
    for group in thesaurus::GROUPS {
        let stems: Vec<String> = group.iter().map(|word| stem(word)).collect();
        for word in &stems {
            let others = synonyms.entry(word.clone()).or_default();
            for other in &stems {
                if other != word && !others.contains(other) {
                    others.push(other.clone());
                }
            }
        }
    }
    synonyms
});

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
/// // "rain" is a synonym of the forecast's words; "jazz" of nothing's.
/// assert_eq!(index.search("will it rain tomorrow in Paris", 5)[0].key, "weather.forecast");
/// assert!(index.search("play some jazz", 5).is_empty(), "no word in common");
/// ```
#[derive(Debug, Clone)]
pub struct SearchIndex {
    tools: Vec<Indexed>,
    /// Each term (a word's stem) by its number: a search reads the lists
    /// of its words only.
    terms: KeyMap<String, u32>,
    /// For each term (by its number in `terms`), the tools it occurs in
    /// with how many times it counts there.
    postings: Vec<Vec<(usize, u32)>>,
}

#[derive(Debug, Clone)]
struct Indexed {
    key: String,
    name: String,
    /// How many words it has, each counted by its field's weight.
    length: u32,
    /// BM25's `k1` times its length against the average: what a term's
    /// count is saturated by in this tool.
    k1_norm: f64,
    /// Whether it only reads: of two tools that fit a query as well, the
    /// one that changes nothing comes first.
    reads: bool,
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
        let mut stems = Stems::default();
        let mut postings: Vec<Vec<(usize, u32)>> = Vec::new();
        let tools: Vec<Indexed> = tools
            .into_iter()
            .enumerate()
            .map(|(at, tool)| {
                let words = counted(tool, &mut stems);
                let length = words.values().sum();
                for (term, count) in words {
                    let term = term as usize;
                    if term >= postings.len() {
                        postings.resize_with(term + 1, Vec::new);
                    }
                    postings[term].push((at, count));
                }
                Indexed {
                    key: tool.key().to_owned(),
                    name: tool.name().to_owned(),
                    length,
                    k1_norm: K1,
                    reads: tool.effect() == Effect::Read,
                }
            })
            .collect();
        let total: f64 = tools.iter().map(|t| f64::from(t.length)).sum();
        let average_length = total / tools.len().max(1) as f64;
        let mut tools = tools;
        for tool in &mut tools {
            tool.k1_norm = K1 * (1.0 - B + B * f64::from(tool.length) / average_length);
        }
        SearchIndex {
            tools,
            terms: stems.terms,
            postings,
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

    /// The tools that best fit `query`, at most `limit`, best first; of
    /// tools that fit as well, read-only ones first, then in key order. A
    /// tool with no word of the query (or synonym of one) is not a hit.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let count = self.tools.len() as f64;
        // A score per tool, and the tools that have one.
        let (mut scores, mut found) = (vec![0.0_f64; self.tools.len()], Vec::new());
        // A query word and its synonyms count once per tool: the best of
        // them, gathered here for the tools in `touched`.
        let (mut best, mut touched) = (vec![0.0_f64; self.tools.len()], Vec::new());
        for terms in query_terms(query) {
            // The lists this word and its synonyms read, with their weights;
            // a synonym most tools have tells none apart, and is skipped.
            let lists: Vec<(f64, &[(usize, u32)])> = terms
                .iter()
                .filter_map(|(word, weight)| {
                    let postings = &self.postings[*self.terms.get(word.as_str())? as usize];
                    let common = *weight < 1.0 && postings.len() > self.tools.len() / 2;
                    (!common).then_some((*weight, postings.as_slice()))
                })
                .collect();
            let one = lists.len() == 1;
            for (weight, postings) in lists {
                let df = postings.len() as f64;
                let idf = weight * ((count - df + 0.5) / (df + 0.5) + 1.0).ln();
                for &(at, tf) in postings {
                    let tf = f64::from(tf);
                    let score = idf * tf * (K1 + 1.0) / (tf + self.tools[at].k1_norm);
                    if one {
                        // Nothing to take the best of: straight to the score.
                        if scores[at] == 0.0 {
                            found.push(at);
                        }
                        scores[at] += score;
                        continue;
                    }
                    if best[at] == 0.0 {
                        touched.push(at);
                    }
                    best[at] = best[at].max(score);
                }
            }
            for at in touched.drain(..) {
                if scores[at] == 0.0 {
                    found.push(at);
                }
                scores[at] += std::mem::take(&mut best[at]);
            }
        }
        let order = |a: &usize, b: &usize| {
            let (x, y) = (&self.tools[*a], &self.tools[*b]);
            scores[*b]
                .total_cmp(&scores[*a])
                .then_with(|| y.reads.cmp(&x.reads))
                .then_with(|| x.key.cmp(&y.key))
        };
        // The best `limit` first, then only those sorted.
        if limit < found.len() {
            found.select_nth_unstable_by(limit, order);
            found.truncate(limit);
        }
        found.sort_by(order);
        found
            .into_iter()
            .map(|at| Hit {
                key: self.tools[at].key.clone(),
                name: self.tools[at].name.clone(),
                score: scores[at],
            })
            .collect()
    }
}

/// A tool's words, each counted by its field's weight.
/// The tool's terms, by number, with their counts.
fn counted(tool: &ToolEntry, stems: &mut Stems) -> KeyMap<u32, u32> {
    let mut words: KeyMap<u32, u32> = KeyMap::default();
    let mut add = |text: &str, weight: u32| {
        for word in kept(text) {
            *words.entry(stems.term(word)).or_default() += weight;
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

/// Endings of file names: a query naming `budget.xlsx` asks about a file.
const FILE_EXTENSIONS: [&str; 40] = [
    "txt", "md", "json", "yaml", "yml", "toml", "csv", "tsv", "xlsx", "xls", "docx", "doc", "pdf",
    "png", "jpg", "jpeg", "gif", "svg", "webp", "mp4", "mov", "mp3", "wav", "zip", "gz", "tar",
    "rs", "py", "js", "ts", "go", "java", "html", "css", "log", "sql", "xml", "ini", "conf", "sh",
];

/// What a search looks for: per word of `query`, the word and its
/// synonyms with the weight each counts for; then each pair of
/// neighbouring words written as one ("check out" as `checkout`); and
/// `file` when the query names one (`report.txt`).
fn query_terms(query: &str) -> Vec<Vec<(String, f64)>> {
    let names_file = query.split_whitespace().any(|token| {
        let token = token.trim_end_matches(|c: char| !c.is_alphanumeric());
        token.rsplit_once('.').is_some_and(|(stem, extension)| {
            !stem.is_empty() && !token.contains('@') && FILE_EXTENSIONS.contains(&extension)
        })
    });
    let mut raw = split(query);
    if names_file {
        raw.push("file".to_owned());
    }
    let mut seen: Vec<String> = Vec::new();
    let mut terms: Vec<Vec<(String, f64)>> = Vec::new();
    let mut add = |word: String, group: Vec<(String, f64)>| {
        if !seen.contains(&word) {
            seen.push(word);
            terms.push(group);
        }
    };
    for word in raw.iter().filter(|w| !STOP_WORDS.contains(&w.as_str())) {
        let word = stem(word);
        let mut group = vec![(word.clone(), 1.0)];
        if let Some(synonyms) = SYNONYMS.get(&word) {
            group.extend(synonyms.iter().map(|s| (s.clone(), SYNONYM_WEIGHT)));
        }
        add(word, group);
    }
    let joined = raw.len() - usize::from(names_file);
    for pair in raw[..joined].windows(2) {
        let joined = stem(&format!("{}{}", pair[0], pair[1]));
        add(joined.clone(), vec![(joined, 1.0)]);
    }
    terms
}

/// `word`'s stem.
fn stem(word: &str) -> String {
    STEMMER.stem(word).into_owned()
}

/// The terms of an index being built: each stem by its number, and each
/// word by its stem's number. A catalog's tools share most of their
/// words: a lookup costs less than stemming again.
#[derive(Default)]
struct Stems {
    terms: KeyMap<String, u32>,
    words: KeyMap<String, u32>,
}

impl Stems {
    /// The number of `word`'s stem.
    fn term(&mut self, word: String) -> u32 {
        if let Some(&term) = self.words.get(&word) {
            return term;
        }
        let count = u32::try_from(self.terms.len()).unwrap_or(u32::MAX);
        let term = *self.terms.entry(stem(&word)).or_insert(count);
        self.words.insert(word, term);
        term
    }
}

/// The words of `text`: [split](split), without stop words, each
/// reduced to its stem (`orders` is `order`, `deleted` is `delet`), as
/// an index counts them.
#[cfg(test)]
fn words(text: &str) -> Vec<String> {
    kept(text).map(|w| stem(&w)).collect()
}

/// The words of `text` an index keeps: [split](split), without stop words.
fn kept(text: &str) -> impl Iterator<Item = String> {
    split(text)
        .into_iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
}

/// `text` split at anything but letters and digits and at a lower-case
/// letter followed by an upper-case one (`orderId` is `order` `id`),
/// lower-cased.
fn split(text: &str) -> Vec<String> {
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
}

#[cfg(test)]
mod tests {
    use super::{query_terms, words};

    #[test]
    fn identifiers_and_sentences_become_the_same_words() {
        assert_eq!(words("cancel_order"), ["cancel", "order"]);
        assert_eq!(words("cancelOrder"), ["cancel", "order"]);
        assert_eq!(words("shop.cancel-orders"), ["shop", "cancel", "order"]);
        assert_eq!(words("Cancel my Orders, please"), ["cancel", "order"]);
        assert_eq!(words("the address of the business"), ["address", "busi"]);
        assert_eq!(words("deleted"), words("delete_file")[..1]);
    }

    #[test]
    fn a_query_word_brings_its_synonyms_and_neighbours_join() {
        let terms = query_terms("check out the folder");
        let words: Vec<Vec<&str>> = terms
            .iter()
            .map(|group| group.iter().map(|(w, _)| w.as_str()).collect())
            .collect();
        assert!(words[2].contains(&"folder") && words[2].contains(&"directori"));
        assert_eq!(terms[2][0].1, 1.0, "the word itself counts in full");
        assert!(terms[2][1..].iter().all(|(_, weight)| *weight < 1.0));
        assert!(words.contains(&vec!["checkout"]));
    }
}
