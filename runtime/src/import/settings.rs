//! What every import decides the same way: which remote tools it serves,
//! the effect of each, their limits, and how those that change something
//! are approved.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::dynamic::DynamicToolBuilder;
use crate::dynamic_call::Arguments;
use crate::effect::Effect;
use crate::invocation::Invocation;
use crate::principal::Principal;
use crate::util::BoxFuture;

/// The remote tools an import serves: named ones, or every one, which
/// must be asked for in so many words. A tool the server offers under a
/// name not listed (a renamed one too) is not served.
///
/// ```
/// use toolwright::import::RemoteTools;
///
/// let some = RemoteTools::only(["echo"]);
/// assert!(some.allows("echo"));
/// assert!(!some.allows("echo2"));
/// assert!(RemoteTools::all().allows("anything"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteTools {
    /// Only the tools of these names.
    Only(BTreeSet<String>),
    /// Every tool the server offers, now and after it changes its list.
    All,
}

impl RemoteTools {
    /// Only the tools named.
    pub fn only<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        RemoteTools::Only(names.into_iter().map(Into::into).collect())
    }

    /// Every tool the server offers.
    pub fn all() -> Self {
        RemoteTools::All
    }

    /// Whether the remote tool `name` is served.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            RemoteTools::Only(names) => names.contains(name),
            RemoteTools::All => true,
        }
    }
}

/// The settings an upstream's builder collects, applied to each tool.
#[derive(Debug, Clone)]
pub(super) struct Settings {
    pub(super) tools: RemoteTools,
    effects: BTreeMap<String, Effect>,
    pub(super) timeout: Option<Duration>,
    max_result: Option<usize>,
    /// How a tool that changes something asks for approval.
    approve: Option<fn(DynamicToolBuilder) -> DynamicToolBuilder>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            tools: RemoteTools::only(Vec::<String>::new()),
            effects: BTreeMap::new(),
            timeout: None,
            max_result: None,
            approve: None,
        }
    }
}

impl Settings {
    pub(super) fn effect(&mut self, remote: String, effect: Effect) {
        self.effects.insert(remote, effect);
    }

    pub(super) fn max_result(&mut self, chars: usize) {
        self.max_result = Some(chars);
    }

    /// Whether tools that change something can be served: an approval
    /// hook was given.
    #[cfg(feature = "import-mcp")]
    pub(super) fn approves(&self) -> bool {
        self.approve.is_some()
    }

    pub(super) fn approvals<C: Principal + Send + Sync + 'static>(&mut self) {
        self.approve = Some(ledger_approval::<C>);
    }

    /// The effect of the remote tool `remote`: the one decided here, else
    /// `default`; always `default` for a tool of the import's own (`None`).
    fn effect_of(&self, remote: Option<&str>, default: Effect) -> Effect {
        let decided = remote.and_then(|remote| self.effects.get(remote));
        decided.copied().unwrap_or(default)
    }

    /// Why the remote tool `remote` cannot be served, if it cannot: it
    /// changes something and nothing approves it.
    pub(super) fn unservable(&self, remote: Option<&str>, default: Effect) -> Option<String> {
        let effect = self.effect_of(remote, default);
        (effect != Effect::Read && self.approve.is_none()).then(|| {
            format!("it is `{effect}` and the import has no approvals (`approvals::<C>()`)")
        })
    }

    /// `builder` for the remote tool `remote` with its effect
    /// ([`effect_of`](Self::effect_of)), limits and approval; `Err` when
    /// it is [unservable](Self::unservable).
    pub(super) fn apply(
        &self,
        mut builder: DynamicToolBuilder,
        remote: Option<&str>,
        default: Effect,
    ) -> Result<DynamicToolBuilder, String> {
        if let Some(reason) = self.unservable(remote, default) {
            return Err(reason);
        }
        let effect = self.effect_of(remote, default);
        builder = builder.effect(effect);
        if let Some(timeout) = self.timeout {
            builder = builder.timeout(timeout);
        }
        if let Some(chars) = self.max_result {
            builder = builder.max_result(chars);
        }
        match self.approve {
            Some(approve) if effect != Effect::Read => Ok(approve(builder)),
            _ => Ok(builder),
        }
    }
}

/// `builder` with the ledger as its `approve` hook, for callers of type `C`.
fn ledger_approval<C: Principal + Send + Sync + 'static>(
    builder: DynamicToolBuilder,
) -> DynamicToolBuilder {
    fn ask<'a, C: Principal + Sync>(
        caller: &'a C,
        call: &'a Invocation<'a, Arguments>,
    ) -> BoxFuture<'a, Result<crate::hook::Verdict, crate::approval::LedgerError>> {
        Box::pin(caller.approval_ledger(call))
    }
    builder.approve(ask::<C>)
}
