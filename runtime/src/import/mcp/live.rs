//! Keeping imported tools in step with their upstream. When the server
//! says its tool list changed (`notifications/tools/list_changed`,
//! unscoped or, in the 2026-07-28 era, on a `subscriptions/listen`
//! stream), and after a lost session was replaced, its tools are listed
//! again under the pin rules: a served tool whose definition differs from
//! its pin, or that the server no longer offers, refuses calls from then
//! on and is switched off in the registry it was registered in, with the
//! reason; the registry's change is what an MCP server turns into its own
//! `list_changed`. A tool first offered after the import is pinned and
//! served there under the import's rules. A changed definition a person accepted (the
//! import's `accept_definition` tool) is pinned, and its tool served again.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};

use rmcp::model::Tool;
use serde_json::json;

use super::client::Hub;
use super::connection::Connection;
use super::{Changed, Pins};
use crate::dynamic::DynamicTool;
use crate::error::BoxError;
use crate::registry::{Reason, Registry, Selector, WeakRegistry};

/// The reason a tool whose definition changed is switched off.
const CHANGED: &str = "definition changed";

/// The reason a tool the server stopped offering is switched off.
const GONE: &str = "no longer offered by the upstream";

/// What the tools of one upstream share with its refresh: the pins, which
/// tools refuse calls and why, and the registry they were registered in.
pub(super) struct Live {
    /// The served tools: remote name to key.
    served: Mutex<HashMap<String, String>>,
    /// Every remote name the server listed so far, served or not: a name
    /// not among them is a tool first offered since.
    known: Mutex<HashSet<String>>,
    /// Builds the tool for one first offered after the import.
    grow: Grow,
    pins: Mutex<Pins>,
    /// Why a tool refuses calls, by remote name.
    refusals: Mutex<HashMap<String, String>>,
    registry: Mutex<Option<WeakRegistry>>,
    /// The definitions found changed and not accepted yet, by remote name:
    /// the change, and the remote tool as the server gives it now when the
    /// tool here still has the pinned definition (found by a refresh: once
    /// accepted, the tool is built again); `None` when it already has the
    /// new one (found at import, or first offered since).
    pending: Mutex<HashMap<String, (Changed, Option<Tool>)>>,
    /// The name of the import's `accept_definition` tool, when it has one.
    accept: Option<String>,
    /// Told the pins after each acceptance, to keep them.
    keep: Option<KeepPins>,
    /// Woken when this is dropped too, so that the refresh ends.
    signal: Arc<Hub>,
}

/// Builds the local tool for a remote tool first offered after the
/// import, under the import's rules: `None` when it is not to be served
/// (not allowed), `Err` with the reason when it cannot be, or the tool and
/// why it must be served switched off (its schema rejected).
pub(super) type Grow =
    Arc<dyn Fn(&Tool, &Arc<Live>) -> Option<Result<Grown, String>> + Send + Sync>;

/// A tool built for a remote tool first offered after the import.
pub(super) struct Grown {
    pub(super) tool: DynamicTool,
    /// Why it is served switched off, if it is.
    pub(super) problem: Option<String>,
}

/// What the application does with the pins each time they change.
#[derive(Clone)]
pub(super) struct KeepPins(pub(super) Arc<dyn Fn(&Pins) + Send + Sync>);

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("served", &self.served)
            .field("pins", &self.pins)
            .field("refusals", &self.refusals)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for KeepPins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeepPins")
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.signal.changed.notify_one();
    }
}

impl Live {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        served: HashMap<String, String>,
        known: HashSet<String>,
        grow: Grow,
        pins: Pins,
        refusals: HashMap<String, String>,
        changed: &[Changed],
        accept: Option<String>,
        keep: Option<KeepPins>,
        signal: Arc<Hub>,
    ) -> Self {
        let pending = changed
            .iter()
            .map(|c| (c.name.clone(), (c.clone(), None)))
            .collect();
        Live {
            served: Mutex::new(served),
            known: Mutex::new(known),
            grow,
            pins: Mutex::new(pins),
            refusals: Mutex::new(refusals),
            registry: Mutex::new(None),
            pending: Mutex::new(pending),
            accept,
            keep,
            signal,
        }
    }

    /// Accepts `digest` as the definition of the remote tool `name`, which
    /// was found changed: it is pinned, the application told, and the tool
    /// switched on again, built again first if it still had the pinned
    /// definition.
    pub(super) fn accept(self: &Arc<Self>, name: &str, digest: &str) -> Result<String, BoxError> {
        let key = lock(&self.served)
            .get(name)
            .cloned()
            .ok_or_else(|| format!("`{name}` is not a tool this import serves"))?;
        let (change, listed) = {
            let mut pending = lock(&self.pending);
            let (change, listed) = pending.remove(name).ok_or_else(|| {
                format!("the definition of `{name}` has not changed since it was pinned")
            })?;
            if change.found.to_string() != digest {
                let found = change.found;
                pending.insert(name.to_owned(), (change, listed));
                return Err(format!(
                    "the changed definition of `{name}` is `{found}`, not `{digest}`: read it again"
                )
                .into());
            }
            (change, listed)
        };
        let pins = {
            let mut pins = lock(&self.pins);
            pins.accept(&change);
            pins.clone()
        };
        if let Some(keep) = &self.keep {
            (keep.0)(&pins);
        }
        let registry = lock(&self.registry)
            .as_ref()
            .and_then(WeakRegistry::upgrade);
        // Lifted first: the tool answers from the moment it is on again.
        lock(&self.refusals).remove(name);
        let served = match (listed, registry) {
            // The tool here has the new definition already: switched on.
            (None, registry) => {
                if let Some(registry) = registry {
                    // Fails only when someone switched it on already, or removed it.
                    let _ = registry.enable(&Selector::key(key));
                }
                true
            }
            // It still describes the old one: built again from the new.
            (Some(remote), Some(registry)) => match (self.grow)(&remote, self) {
                Some(Ok(Grown {
                    tool,
                    problem: None,
                })) => registry
                    .replace(tool)
                    .map_err(|error| tracing::warn!(%error, "an accepted tool is not served again"))
                    .is_ok(),
                _ => false,
            },
            (Some(_), None) => false,
        };
        if !served {
            let later = "it is served from the next import";
            let refusal = format!("the new definition of `{name}` was accepted; {later}");
            lock(&self.refusals).insert(name.to_owned(), refusal);
            return Ok(format!("accepted: `{name}`: {later}"));
        }
        Ok(format!("accepted: `{name}` is served again"))
    }

    /// Why the remote tool `name` refuses calls, if it does.
    pub(super) fn refusal(&self, name: &str) -> Option<String> {
        lock(&self.refusals).get(name).cloned()
    }

    /// The registry the tools were registered in: a refresh switches tools
    /// off there.
    pub(super) fn attach(&self, registry: &Registry) {
        *lock(&self.registry) = Some(registry.downgrade());
    }

    /// Applies the pin rules to the server's tools as now `listed`: a
    /// served tool changed or withdrawn is switched off; a tool first
    /// offered since is pinned and served, under the import's rules, in
    /// the registry the others are in.
    fn apply(self: &Arc<Self>, listed: &[Tool]) {
        let registry = lock(&self.registry)
            .as_ref()
            .and_then(WeakRegistry::upgrade);
        let (mut off, mut grown, mut pinned) = (Vec::new(), Vec::new(), false);
        {
            let (mut pins, mut refusals) = (lock(&self.pins), lock(&self.refusals));
            let mut served = lock(&self.served);
            for (name, key) in served.iter() {
                if refusals.contains_key(name) {
                    continue;
                }
                let (reason, refusal) = match listed.iter().find(|t| t.name == *name) {
                    None => (Reason::new(GONE), format!("`{name}` is {GONE}")),
                    Some(tool) => match pins.check(tool, key) {
                        None => continue,
                        Some(change) => {
                            let reason = changed_reason(&change, self.accept.as_deref());
                            let now = Some(tool.clone());
                            lock(&self.pending).insert(name.clone(), (change, now));
                            (reason, changed(name))
                        }
                    },
                };
                refusals.insert(name.clone(), refusal);
                off.push((key.clone(), reason));
            }
            // New tools are served only where the others are.
            let mut known = lock(&self.known);
            for tool in listed.iter().filter(|_| registry.is_some()) {
                if !known.insert(tool.name.to_string()) {
                    continue;
                }
                let Grown {
                    tool: local,
                    problem,
                } = match (self.grow)(tool, self) {
                    None => continue,
                    Some(Ok(grown)) => grown,
                    Some(Err(reason)) => {
                        tracing::warn!(tool = %tool.name, reason, "a tool first offered after the import is not served");
                        continue;
                    }
                };
                let (name, key) = (tool.name.to_string(), local.key().to_owned());
                let reason = match (pins.check(tool, &key), problem) {
                    (Some(change), _) => {
                        refusals.insert(name.clone(), changed(&name));
                        let reason = changed_reason(&change, self.accept.as_deref());
                        lock(&self.pending).insert(name.clone(), (change, None));
                        Some(reason)
                    }
                    (None, Some(problem)) => {
                        refusals.insert(name.clone(), format!("`{name}` is not called: {problem}"));
                        Some(Reason::new(problem))
                    }
                    (None, None) => None,
                };
                pinned = true;
                served.insert(name, key.clone());
                grown.push(local);
                off.extend(reason.map(|reason| (key, reason)));
            }
        }
        if pinned && let Some(keep) = &self.keep {
            let pins = lock(&self.pins).clone();
            (keep.0)(&pins);
        }
        let Some(registry) = registry else { return };
        let keys: HashSet<&str> = grown.iter().map(|t| t.key()).collect();
        let (theirs, others): (Vec<_>, Vec<_>) = off
            .into_iter()
            .partition(|(key, _)| keys.contains(key.as_str()));
        for (key, reason) in others {
            tracing::warn!(tool = %key, ?reason, "an imported tool is switched off");
            // Fails only when someone removed or switched it off already.
            let _ = registry.disable(&Selector::key(key), reason);
        }
        if !grown.is_empty()
            && let Err(error) = registry.register_all_off(grown, theirs)
        {
            tracing::warn!(%error, "the tools first offered after the import are not served");
        }
    }
}

/// The reason a tool whose definition changed is switched off, with what
/// a person reads to decide on it: the digests, the fields that differ
/// and, when the import serves its `accept_definition` tool (`accept`),
/// the call that accepts the new definition.
pub(super) fn changed_reason(change: &Changed, accept: Option<&str>) -> Reason {
    let mut detail = json!({
        "pinned": change.pinned,
        "found": change.found,
        "difference": change.difference(),
    });
    if let Some(tool) = accept {
        let arguments = json!({"tool": change.name, "digest": change.found});
        detail["accept"] = json!({"tool": tool, "arguments": arguments});
    }
    Reason::new(CHANGED).detail(detail)
}

/// What a changed tool answers a call.
pub(super) fn changed(name: &str) -> String {
    format!(
        "the definition of `{name}` changed since it was pinned; \
         it is not called until a person accepts it"
    )
}

/// Lists the upstream's tools again each time `signal` wakes, and applies
/// the pin rules, until the tools are gone.
pub(super) fn spawn(live: Weak<Live>, connection: Weak<Connection>, signal: Arc<Hub>) {
    tokio::spawn(async move {
        loop {
            signal.changed.notified().await;
            let (Some(live), Some(connection)) = (live.upgrade(), connection.upgrade()) else {
                return;
            };
            match list(&connection).await {
                Ok(listed) => live.apply(&listed),
                Err(error) => tracing::debug!(%error, "listing an upstream's tools again failed"),
            }
        }
    });
}

/// The upstream's tools, listed on its session (a new one if it was lost).
async fn list(connection: &Connection) -> Result<Vec<Tool>, BoxError> {
    let session = connection.session().await?;
    Ok(session.list_all_tools().await?)
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
