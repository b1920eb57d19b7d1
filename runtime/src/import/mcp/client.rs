//! The client side of an upstream's sessions: what it hears from the
//! server (`list_changed`, progress) and where it sends it.

#[cfg(feature = "mcp")]
use std::collections::HashMap;
use std::sync::Arc;
#[cfg(feature = "mcp")]
use std::sync::Mutex;

use rmcp::ClientHandler;
#[cfg(feature = "mcp")]
use rmcp::model::ProgressToken;
use rmcp::model::SubscriptionFilter;
use rmcp::service::{NotificationContext, Peer, RoleClient};
use tokio::sync::Notify;

#[cfg(feature = "mcp")]
use super::live::lock;

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
