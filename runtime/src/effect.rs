//! What a tool declares it does to the world.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a tool declares it does to the world.
///
/// `Write` and `Destructive` tools need an `approve` hook: the executor never
/// runs them unless that hook approved the exact arguments.
///
/// ```
/// use toolwright::Effect;
/// assert!(!Effect::Read.requires_approval());
/// assert!(Effect::Destructive.requires_approval());
/// assert_eq!(Effect::Write.to_string(), "write");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Effect {
    /// Reads state and changes nothing.
    Read,
    /// Changes state in a way that can be undone or repeated.
    Write,
    /// Changes state in a way that cannot be undone (deletes, payments, sends).
    Destructive,
}

impl Effect {
    /// Whether the executor asks the tool's `approve` hook before running it.
    ///
    /// ```
    /// use toolwright::Effect;
    ///
    /// let gated: Vec<_> = [Effect::Read, Effect::Write, Effect::Destructive]
    ///     .into_iter()
    ///     .filter(|effect| effect.requires_approval())
    ///     .collect();
    /// assert_eq!(gated, [Effect::Write, Effect::Destructive]);
    /// ```
    pub const fn requires_approval(self) -> bool {
        !matches!(self, Effect::Read)
    }

    /// The lowercase word used in `#[tool(effect = ...)]`, in `Display`,
    /// and in serialized descriptors.
    ///
    /// ```
    /// use toolwright::Effect;
    ///
    /// assert_eq!(Effect::Destructive.as_str(), "destructive");
    /// assert_eq!(serde_json::to_value(Effect::Write).unwrap(), Effect::Write.as_str());
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Destructive => "destructive",
        }
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}
