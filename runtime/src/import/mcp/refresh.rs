//! Keeping imported tools in step with their upstream. When the server
//! says its tool list changed (`notifications/tools/list_changed`,
//! unscoped or, in the 2026-07-28 era, on a `subscriptions/listen`
//! stream), and after a lost session was replaced, its tools are listed
//! again under the pin rules: a served tool whose definition differs from
//! its pin, or that the server no longer offers, refuses calls from then
//! on and is switched off in the registry it was registered in, with the
//! reason; the registry's change is what an MCP server turns into its own
//! `list_changed`. A tool first offered after the import is not served
//! until the next import.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use rmcp::ClientHandler;
#[cfg(feature = "mcp")]
use rmcp::model::ProgressToken;
use rmcp::model::{SubscriptionFilter, Tool};
use rmcp::service::{NotificationContext, Peer, RoleClient};
use tokio::sync::Notify;

use super::connection::Connection;
use super::{Changed, Pins};
use crate::error::BoxError;
use crate::registry::{Reason, Registry, Selector, WeakRegistry};
use crate::request::Digest;

/// The reason a tool whose definition changed is switched off.
pub(super) const CHANGED: &str = "definition changed";

/// The reason a tool the server stopped offering is switched off.
const GONE: &str = "no longer offered by the upstream";

/// What the client side of an upstream's sessions shares with its tools.
#[derive(Debug, Default)]
pub(super) struct Hub {
    /// Woken when the server's tool list changed, when a lost session was
    /// replaced, and when the tools are gone: the refresh's signal.
    pub(super) changed: Notify,
    /// The calls here that asked for progress, by the token each call
    /// upstream was sent with: the server's progress goes to them.
    #[cfg(feature = "mcp")]
    progress: Mutex<HashMap<ProgressToken, crate::mcp::McpCall>>,
}

#[cfg(feature = "mcp")]
impl Hub {
    /// Relays the server's progress on the call sent with `token` to
    /// `call`'s client, until the returned guard is dropped.
    pub(super) fn relay(
        self: &Arc<Self>,
        token: ProgressToken,
        call: crate::mcp::McpCall,
    ) -> Relayed {
        lock(&self.progress).insert(token.clone(), call);
        Relayed {
            hub: self.clone(),
            token,
        }
    }
}

/// A call whose progress is relayed, until dropped.
#[cfg(feature = "mcp")]
pub(super) struct Relayed {
    hub: Arc<Hub>,
    token: ProgressToken,
}

#[cfg(feature = "mcp")]
impl Drop for Relayed {
    fn drop(&mut self) {
        lock(&self.hub.progress).remove(&self.token);
    }
}

/// The client side of a session: it hears the server's `list_changed`
/// and wakes the refresh, and (with feature `mcp`) relays the server's
/// progress on a call to the client of the call here. The server's requests (sampling, elicitation,
/// roots) are answered as unsupported, as `()` would.
pub(super) struct Listener {
    pub(super) signal: Arc<Hub>,
}

impl ClientHandler for Listener {
    #[cfg(feature = "mcp")]
    fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let call = lock(&self.signal.progress)
            .get(&params.progress_token)
            .cloned();
        async move {
            if let Some(call) = call {
                let _ = call
                    .progress(params.progress, params.total, params.message)
                    .await;
            }
        }
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.signal.changed.notify_one();
        std::future::ready(())
    }
}

/// Opens a `subscriptions/listen` stream for the tool list, when the
/// server says its list can change, and wakes the refresh for each
/// notification on it. A server of an earlier protocol answers that it
/// does not know the method: its notifications reach [`Listener`].
pub(super) fn listen(peer: Peer<RoleClient>, signal: Arc<Hub>) {
    let changes = peer.peer_info().and_then(|info| {
        info.capabilities
            .tools
            .as_ref()
            .and_then(|t| t.list_changed)
    });
    if changes != Some(true) {
        return;
    }
    tokio::spawn(async move {
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let Ok(mut subscription) = peer.listen(filter).await else {
            return;
        };
        while let Ok(Some(_)) = subscription.next().await {
            signal.changed.notify_one();
        }
    });
}

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
    /// the digest found, and whether the tool here already has it (found
    /// at import) or still the pinned one (found by a refresh).
    pending: Mutex<HashMap<String, (Digest, bool)>>,
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
        keep: Option<KeepPins>,
        signal: Arc<Hub>,
    ) -> Self {
        let pending = changed
            .iter()
            .map(|c| (c.name.clone(), (c.found, true)))
            .collect();
        Live {
            served,
            pins: Mutex::new(pins),
            refusals: Mutex::new(refusals),
            registry: Mutex::new(None),
            pending: Mutex::new(pending),
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
        let &(found, fresh) = pending.get(name).ok_or_else(|| {
            format!("the definition of `{name}` has not changed since it was pinned")
        })?;
        if found.to_string() != digest {
            return Err(format!(
                "the changed definition of `{name}` is `{found}`, not `{digest}`: read it again"
            )
            .into());
        }
        pending.remove(name);
        drop(pending);
        let pins = {
            let mut pins = lock(&self.pins);
            pins.set(name, found);
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
                    None => (GONE, format!("`{name}` is {GONE}")),
                    Some(tool) => match pins.check(tool, key) {
                        None => continue,
                        Some(change) => {
                            lock(&self.pending).insert(name.clone(), (change.found, false));
                            (CHANGED, changed(name))
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
            tracing::warn!(tool = %key, reason, "an imported tool is switched off");
            if let Some(registry) = &registry {
                // Fails only when someone removed or switched it off already.
                let _ = registry.disable(&Selector::key(key), Reason::new(reason));
            }
        }
    }
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

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
