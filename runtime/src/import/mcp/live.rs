//! Keeping imported tools in step with their upstream. When the server
//! says its tool list changed (`notifications/tools/list_changed`,
//! unscoped or, in the 2026-07-28 era, on a `subscriptions/listen`
//! stream), and after a lost session was replaced, its tools are listed
//! again under the pin rules: a served tool whose definition differs from
//! its pin, or that the server no longer offers, refuses calls from then
//! on and is switched off in the registry it was registered in, with the
//! reason; the registry's change is what an MCP server turns into its own
//! `list_changed`. A tool first offered after the import is not served
//! until the next import. A changed definition a person accepted (the
//! import's `accept_definition` tool) is pinned, and its tool served again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use rmcp::model::Tool;
use serde_json::json;

use super::client::Hub;
use super::connection::Connection;
use super::{Changed, Pins};
use crate::error::BoxError;
use crate::registry::{Reason, Registry, Selector, WeakRegistry};

/// The reason a tool whose definition changed is switched off.
const CHANGED: &str = "definition changed";

/// The reason a tool the server stopped offering is switched off.
const GONE: &str = "no longer offered by the upstream";

/// What the tools of one upstream share with its refresh: the pins, which
/// tools refuse calls and why, and the registry they were registered in.
#[derive(Debug)]
pub(super) struct Live {
    /// The served tools: remote name to key.
    served: HashMap<String, String>,
    pins: Mutex<Pins>,
    /// Why a tool refuses calls, by remote name.
    refusals: Mutex<HashMap<String, String>>,
    registry: Mutex<Option<WeakRegistry>>,
    /// The definitions found changed and not accepted yet, by remote name:
    /// the change, and whether the tool here already has the new
    /// definition (found at import) or still the pinned one (found by a
    /// refresh).
    pending: Mutex<HashMap<String, (Changed, bool)>>,
    /// The name of the import's `accept_definition` tool, when it has one.
    accept: Option<String>,
    /// Told the pins after each acceptance, to keep them.
    keep: Option<KeepPins>,
    /// Woken when this is dropped too, so that the refresh ends.
    signal: Arc<Hub>,
}

/// What the application does with the pins after an acceptance.
#[derive(Clone)]
pub(super) struct KeepPins(pub(super) Arc<dyn Fn(&Pins) + Send + Sync>);

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
    pub(super) fn new(
        served: HashMap<String, String>,
        pins: Pins,
        refusals: HashMap<String, String>,
        changed: &[Changed],
        accept: Option<String>,
        keep: Option<KeepPins>,
        signal: Arc<Hub>,
    ) -> Self {
        let pending = changed
            .iter()
            .map(|c| (c.name.clone(), (c.clone(), true)))
            .collect();
        Live {
            served,
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
    /// switched on again if it already has that definition (else it is
    /// served from the next import).
    pub(super) fn accept(&self, name: &str, digest: &str) -> Result<String, BoxError> {
        let key = self
            .served
            .get(name)
            .ok_or_else(|| format!("`{name}` is not a tool this import serves"))?;
        let mut pending = lock(&self.pending);
        let (change, _) = pending.get(name).ok_or_else(|| {
            format!("the definition of `{name}` has not changed since it was pinned")
        })?;
        if change.found.to_string() != digest {
            let found = change.found;
            return Err(format!(
                "the changed definition of `{name}` is `{found}`, not `{digest}`: read it again"
            )
            .into());
        }
        let Some((change, fresh)) = pending.remove(name) else {
            unreachable!("found above, under the same lock")
        };
        drop(pending);
        let pins = {
            let mut pins = lock(&self.pins);
            pins.accept(&change);
            pins.clone()
        };
        if let Some(keep) = &self.keep {
            (keep.0)(&pins);
        }
        if !fresh {
            lock(&self.refusals).insert(
                name.to_owned(),
                format!(
                    "the new definition of `{name}` was accepted; it is served from the next import"
                ),
            );
            return Ok(format!("accepted: `{name}` is served from the next import"));
        }
        lock(&self.refusals).remove(name);
        let registry = lock(&self.registry)
            .as_ref()
            .and_then(WeakRegistry::upgrade);
        if let Some(registry) = registry {
            // Fails only when someone switched it on already, or removed it.
            let _ = registry.enable(&Selector::key(key.clone()));
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

    /// Applies the pin rules to the server's tools as now `listed`.
    fn apply(&self, listed: &[Tool]) {
        let mut off = Vec::new();
        {
            let (mut pins, mut refusals) = (lock(&self.pins), lock(&self.refusals));
            for (name, key) in &self.served {
                if refusals.contains_key(name) {
                    continue;
                }
                let (reason, refusal) = match listed.iter().find(|t| t.name == *name) {
                    None => (Reason::new(GONE), format!("`{name}` is {GONE}")),
                    Some(tool) => match pins.check(tool, key) {
                        None => continue,
                        Some(change) => {
                            let reason = changed_reason(&change, self.accept.as_deref());
                            lock(&self.pending).insert(name.clone(), (change, false));
                            (reason, changed(name))
                        }
                    },
                };
                refusals.insert(name.clone(), refusal);
                off.push((key.clone(), reason));
            }
        }
        let registry = lock(&self.registry)
            .as_ref()
            .and_then(WeakRegistry::upgrade);
        for (key, reason) in off {
            tracing::warn!(tool = %key, ?reason, "an imported tool is switched off");
            if let Some(registry) = &registry {
                // Fails only when someone removed or switched it off already.
                let _ = registry.disable(&Selector::key(key), reason);
            }
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
