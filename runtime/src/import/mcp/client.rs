//! The client side of an upstream's sessions: what it hears from the
//! server (`list_changed`, progress) and where it sends it.

#[cfg(feature = "mcp")]
use std::collections::HashMap;
use std::sync::Arc;
#[cfg(feature = "mcp")]
use std::sync::Mutex;

use rmcp::ClientHandler;
use rmcp::ErrorData;
#[cfg(feature = "mcp")]
use rmcp::model::ProgressToken;
// Sampling is deprecated by the 2026-07-28 protocol (SEP-2577), yet it is
// what servers of the earlier eras ask: answered while rmcp carries it.
use rmcp::model::{
    ClientConfig, CreateMessageRequestMethod, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, SamplingCapability, SubscriptionFilter,
};
#[allow(deprecated)]
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleClient};
use tokio::sync::Notify;

use crate::executor::BoxFuture;

#[cfg(feature = "mcp")]
use super::live::lock;

/// How the application answers a server's `sampling/createMessage`.
#[allow(deprecated)]
pub(super) type Sample = dyn Fn(CreateMessageRequestParams) -> BoxFuture<'static, Result<CreateMessageResult, ErrorData>>
    + Send
    + Sync;

/// How the application answers a server's `elicitation/create`.
pub(super) type Elicit = dyn Fn(ElicitRequestParams) -> BoxFuture<'static, Result<ElicitResult, ErrorData>>
    + Send
    + Sync;

/// What the application answers when the server asks something of this
/// side: by default nothing (the capability is not even announced).
#[derive(Clone, Default)]
pub(super) struct Answers {
    pub(super) sampling: Option<Arc<Sample>>,
    pub(super) elicitation: Option<Arc<Elicit>>,
}

impl std::fmt::Debug for Answers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Answers")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .finish()
    }
}

/// What the client side of an upstream's sessions shares with its tools.
#[derive(Debug, Default)]
pub(super) struct Hub {
    /// What the application answers the server's own requests with.
    pub(super) answers: Answers,
    /// Woken when the server's tool list changed, when a lost session was
    /// replaced, and when the tools are gone: the refresh's signal.
    pub(super) changed: Notify,
    /// The calls here that asked for progress, by the token each call
    /// upstream was sent with: the server's progress goes to them.
    #[cfg(feature = "mcp")]
    progress: Mutex<HashMap<ProgressToken, crate::mcp::McpCall>>,
}

impl Hub {
    /// A hub whose sessions answer the server's requests with `answers`.
    pub(super) fn new(answers: Answers) -> Self {
        Hub {
            answers,
            ..Hub::default()
        }
    }

    /// Relays the server's progress on the call sent with `token` to
    /// `call`'s client, until the returned guard is dropped.
    #[cfg(feature = "mcp")]
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
/// progress on a call to the client of the call here. The server's
/// sampling and elicitation requests go to the application's answers when
/// it gave them, and are refused (sampling as an unknown method,
/// elicitation declined) when it did not; roots are an empty list.
pub(super) struct Listener {
    pub(super) signal: Arc<Hub>,
    /// The server's process, when the session started one: killed when
    /// the session ends and this is dropped.
    #[expect(dead_code, reason = "held only to be dropped with the session")]
    pub(super) child: Option<std::sync::Mutex<tokio::process::Child>>,
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        let answers = &self.signal.answers;
        if answers.sampling.is_some() {
            info.capabilities.sampling = Some(SamplingCapability::default());
        }
        if answers.elicitation.is_some() {
            let form = FormElicitationCapability::default();
            info.capabilities.elicitation = Some(ElicitationCapability::new().with_form(form));
        }
        info
    }

    #[allow(deprecated)]
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<CreateMessageResult, ErrorData>> + Send + '_ {
        let answer = self.signal.answers.sampling.clone();
        async move {
            match answer {
                Some(answer) => answer(params).await,
                None => Err(ErrorData::method_not_found::<CreateMessageRequestMethod>()),
            }
        }
    }

    fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ElicitResult, ErrorData>> + Send + '_ {
        let answer = self.signal.answers.elicitation.clone();
        async move {
            match answer {
                Some(answer) => answer(request).await,
                None => Ok(ElicitResult::new(ElicitationAction::Decline)),
            }
        }
    }

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
