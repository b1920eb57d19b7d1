//! Why a tool is switched off. Below the error layer: a refused call
//! carries it.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// Why a tool is switched off: what the application gave, and when.
///
/// Serializes with `at` in milliseconds since the Unix epoch.
///
/// ```
/// use toolwright::{tool, Catalog, registry::{Reason, Registry, Selector}};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
/// registry.disable(&Selector::name("add"), Reason::new("audit").by("alice")).unwrap();
/// let disabled = registry.tools().disabled("add").cloned().unwrap();
/// let json = serde_json::to_value(&disabled).unwrap();
/// assert_eq!(json["reason"], "audit");
/// assert_eq!(json["by"], "alice");
/// assert!(json["at"].as_u64().unwrap() > 0);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Disabled {
    /// Why.
    pub reason: String,
    /// Who, when the application said. After a
    /// [`restore_by`](crate::registry::Registry::restore_by), who restored it.
    pub by: Option<String>,
    /// Who the restored [`RegistryState`](crate::registry::RegistryState) said
    /// disabled it: a state is data anyone holding it can write, so its
    /// `by` is kept only as a claim, never as [`by`](Self::by).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub originally_by: Option<String>,
    /// When the tool was disabled.
    #[serde(with = "crate::util::time::unix_ms")]
    pub at: SystemTime,
    /// What an operator needs to decide, when the one who disabled it said
    /// ([`Reason::detail`](crate::registry::Reason::detail)): for an
    /// imported tool whose definition changed, the two definitions' fields
    /// that differ, and the call that accepts the new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<serde_json::Value>,
}
