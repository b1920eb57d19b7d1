//! What an operator changes about a tool at run time without a redeploy:
//! the text a model reads and the limits a call runs under. Below the
//! catalog layer: a served tool carries its override.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A run-time override of a tool's title, description, timeout, result
/// bound or deferral: what an operator tunes without a redeploy when a model misreads a
/// tool or an upstream slows down. Each field left `None` keeps what the
/// tool declared; an override with every field `None` is no override.
///
/// Set with [`Registry::set_override`](crate::registry::Registry::set_override), kept
/// in the registry's [state](crate::registry::RegistryState). The key, name, effect,
/// tags and schemas are what rules, views and approvals match and bind, and
/// are never overridden.
///
/// Serializes with the timeout as `timeout_ms`; deserializing refuses
/// unknown fields and the values [`Registry::set_override`](crate::registry::Registry::set_override) refuses.
///
/// ```
/// use std::time::Duration;
/// use toolwright::registry::Override;
///
/// let tuned = Override::new()
///     .description("Look up an order. Use the number printed on the receipt.")
///     .timeout(Duration::from_secs(30));
/// let json = serde_json::to_value(&tuned).unwrap();
/// assert_eq!(json["timeout_ms"], 30_000);
/// let back: Override = serde_json::from_value(json).unwrap();
/// assert_eq!(back, tuned);
/// assert!(serde_json::from_str::<Override>(r#"{"max_result": 0}"#).is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Fields", into = "Fields")]
#[non_exhaustive]
pub struct Override {
    /// The title shown to people instead of the declared one.
    pub title: Option<String>,
    /// The description shown to models instead of the declared one.
    pub description: Option<String>,
    /// The time a call may take instead of the declared (or the executor's
    /// default) timeout.
    pub timeout: Option<Duration>,
    /// The bound, in characters, on a result's text shown to a model,
    /// instead of the declared one (or the executor's default).
    pub max_result: Option<usize>,
    /// Whether the tool is deferred (left out of a first tool list, found
    /// by a search), instead of what it declared.
    pub deferred: Option<bool>,
}

impl Override {
    /// An override that changes nothing yet.
    ///
    /// ```
    /// use toolwright::registry::Override;
    /// assert!(Override::new().is_empty());
    /// ```
    pub fn new() -> Self {
        Override::default()
    }

    /// Shows `title` to people instead of the declared title.
    ///
    /// ```
    /// use toolwright::registry::Override;
    /// let tuned = Override::new().title("Order lookup");
    /// assert_eq!(tuned.title.as_deref(), Some("Order lookup"));
    /// ```
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Shows `description` to models instead of the declared description.
    ///
    /// ```
    /// use toolwright::registry::Override;
    /// let tuned = Override::new().description("Look up an order by its receipt number.");
    /// assert!(tuned.description.is_some());
    /// ```
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Gives each call `timeout` instead of the declared one.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::registry::Override;
    /// let tuned = Override::new().timeout(Duration::from_secs(60));
    /// assert_eq!(tuned.timeout, Some(Duration::from_secs(60)));
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Cuts a result's text shown to a model past `chars` characters instead
    /// of the declared bound; the application still gets the whole value.
    ///
    /// ```
    /// use toolwright::registry::Override;
    /// let tuned = Override::new().max_result(4_000);
    /// assert_eq!(tuned.max_result, Some(4_000));
    /// ```
    pub fn max_result(mut self, chars: usize) -> Self {
        self.max_result = Some(chars);
        self
    }

    /// Defers the tool (`true`: left out of a first tool list and found
    /// by a search) or lists it up front (`false`), whatever it declared.
    ///
    /// ```
    /// use toolwright::registry::Override;
    /// let quiet = Override::new().deferred(true);
    /// assert_eq!(quiet.deferred, Some(true));
    /// assert_eq!(serde_json::to_value(&quiet).unwrap()["deferred"], true);
    /// ```
    pub fn deferred(mut self, deferred: bool) -> Self {
        self.deferred = Some(deferred);
        self
    }

    /// Whether it changes nothing.
    ///
    /// ```
    /// use toolwright::registry::Override;
    /// assert!(!Override::new().max_result(10).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        *self == Override::default()
    }

    /// What is wrong with it, if anything: an empty text, a timeout under a
    /// millisecond or a zero bound would leave a tool unusable.
    pub(crate) fn problem(&self) -> Option<&'static str> {
        let blank = |text: &Option<String>| text.as_ref().is_some_and(|t| t.trim().is_empty());
        if blank(&self.title) {
            Some("an overriding title is empty")
        } else if blank(&self.description) {
            Some("an overriding description is empty")
        } else if self.timeout.is_some_and(|t| t < Duration::from_millis(1)) {
            Some("an overriding timeout is shorter than a millisecond")
        } else if self.max_result == Some(0) {
            Some("an overriding result bound is zero characters")
        } else {
            None
        }
    }
}

/// An [`Override`] as it is written down.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_result: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    deferred: Option<bool>,
}

impl TryFrom<Fields> for Override {
    type Error = &'static str;

    fn try_from(fields: Fields) -> Result<Self, Self::Error> {
        let tuned = Override {
            title: fields.title,
            description: fields.description,
            timeout: fields.timeout_ms.map(Duration::from_millis),
            max_result: fields.max_result,
            deferred: fields.deferred,
        };
        match tuned.problem() {
            Some(problem) => Err(problem),
            None => Ok(tuned),
        }
    }
}

impl From<Override> for Fields {
    fn from(tuned: Override) -> Self {
        Fields {
            title: tuned.title,
            description: tuned.description,
            timeout_ms: tuned
                .timeout
                .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
            max_result: tuned.max_result,
            deferred: tuned.deferred,
        }
    }
}
