//! The tool contract as a file: `tools.lock.json`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::catalog::ToolEntry;
use crate::effect::Effect;

/// The version of the lock file's form this crate writes and reads.
pub const LOCK_VERSION: u32 = 1;

/// The tool contract: what models and clients rely on, per tool, sorted by
/// key, to check in beside the code as `tools.lock.json` (see
/// [`Lock::compare`]).
///
/// Each tool keeps its key, name, effect and tags, a digest of each text a
/// model reads (description, title, search hint), and its input and output
/// schemas with their digests: the schemas themselves, so that a check can
/// tell a new required argument or a narrowed type from a harmless change.
///
/// ```
/// use toolwright::{inspect::Lock, tool, Catalog};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
/// let lock = Lock::of(&catalog);
/// assert_eq!(lock.tools[0].key, "math.add");
/// assert!(lock.tools[0].description.starts_with("sha256:"));
/// // Written and read back, the same contract.
/// let text = lock.to_json();
/// assert_eq!(Lock::from_json(&text).unwrap(), lock);
/// assert_eq!(Lock::of(&catalog).to_json(), text, "stable: the same tools, the same bytes");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Lock {
    /// The form's version ([`LOCK_VERSION`]).
    pub version: u32,
    /// Every tool, by key.
    pub tools: Vec<LockedTool>,
}

/// One tool of a [`Lock`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LockedTool {
    /// Its key.
    pub key: String,
    /// Its name, as a model calls it.
    pub name: String,
    /// What it may do.
    pub effect: Effect,
    /// Its tags, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The digest of its description.
    pub description: String,
    /// The digest of its title, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The digest of its search hint, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_hint: Option<String>,
    /// Its arguments' schema.
    pub input: LockedSchema,
    /// Its result's schema, when the output type has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<LockedSchema>,
}

/// A schema of a [`LockedTool`], with its digest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LockedSchema {
    /// The digest of the schema as JSON text.
    pub digest: String,
    /// The schema.
    pub schema: Value,
}

/// A lock file that cannot be read as a [`Lock`].
///
/// ```
/// use toolwright::inspect::Lock;
///
/// let error = Lock::from_json("{\"version\": 99, \"tools\": []}").unwrap_err();
/// assert!(error.to_string().contains("version 99"));
/// assert!(Lock::from_json("not json").is_err());
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LockError(String);

impl Lock {
    /// The contract of `tools`, sorted by key.
    pub fn of<'a>(tools: impl IntoIterator<Item = &'a ToolEntry>) -> Lock {
        let mut tools: Vec<LockedTool> = tools.into_iter().map(LockedTool::of).collect();
        tools.sort_by(|a, b| a.key.cmp(&b.key));
        Lock {
            version: LOCK_VERSION,
            tools,
        }
    }

    /// The lock as the file's text: pretty JSON, a newline at the end.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a lock is plain JSON");
        text.push('\n');
        text
    }

    /// Reads a lock file's text.
    pub fn from_json(text: &str) -> Result<Lock, LockError> {
        let lock: Lock = serde_json::from_str(text)
            .map_err(|error| LockError(format!("not a tools.lock.json: {error}")))?;
        if lock.version != LOCK_VERSION {
            return Err(LockError(format!(
                "a tools.lock.json of version {}, which this toolwright (version {LOCK_VERSION}) does not read",
                lock.version
            )));
        }
        Ok(lock)
    }
}

impl LockedTool {
    fn of(tool: &ToolEntry) -> LockedTool {
        let mut tags: Vec<String> = tool.tags().iter().map(|t| (*t).to_owned()).collect();
        tags.sort();
        LockedTool {
            key: tool.key().to_owned(),
            name: tool.name().to_owned(),
            effect: tool.effect(),
            tags,
            description: digest(tool.description()),
            title: tool.title().map(digest),
            search_hint: tool.search_hint().map(digest),
            input: LockedSchema::of(tool.input_schema()),
            output: tool.output_schema().map(LockedSchema::of),
        }
    }
}

impl LockedSchema {
    fn of(schema: &Value) -> LockedSchema {
        LockedSchema {
            digest: digest(&schema.to_string()),
            schema: schema.clone(),
        }
    }
}

/// `sha256:` and the hex digest of `text`.
pub(super) fn digest(text: &str) -> String {
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}
