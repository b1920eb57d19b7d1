//! What an MCP server serves besides tools (resources, prompts,
//! completions, logging levels), answered by an rmcp handler of the
//! application's: toolwright runs the tools, rmcp's own API the rest.

use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
// Logging levels are deprecated by SEP-2577, and still what clients send.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::util::BoxFuture;

type Answer<'a, T> = BoxFuture<'a, Result<T, ErrorData>>;

/// The requests a companion handler answers, as an object-safe trait:
/// rmcp's `ServerHandler` returns `impl Future`s, which a `dyn` cannot.
pub(super) trait Companion: Send + Sync + 'static {
    /// What it declares: its resources, prompts, completions and logging.
    fn capabilities(&self) -> ServerCapabilities;
    fn list_resources(
        &self,
        params: Option<PaginatedRequestParams>,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ListResourcesResult>;
    fn list_resource_templates(
        &self,
        params: Option<PaginatedRequestParams>,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ListResourceTemplatesResult>;
    fn read_resource(
        &self,
        params: ReadResourceRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ReadResourceResponse>;
    fn subscribe(
        &self,
        params: SubscribeRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ()>;
    fn unsubscribe(
        &self,
        params: UnsubscribeRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ()>;
    fn list_prompts(
        &self,
        params: Option<PaginatedRequestParams>,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ListPromptsResult>;
    fn get_prompt(
        &self,
        params: GetPromptRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, GetPromptResponse>;
    fn complete(
        &self,
        params: CompleteRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, CompleteResult>;
    #[allow(deprecated)]
    fn set_level(
        &self,
        params: SetLevelRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ()>;
}

impl<H: ServerHandler> Companion for H {
    fn capabilities(&self) -> ServerCapabilities {
        self.get_info().capabilities
    }

    fn list_resources(
        &self,
        params: Option<PaginatedRequestParams>,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ListResourcesResult> {
        Box::pin(ServerHandler::list_resources(self, params, request))
    }

    fn list_resource_templates(
        &self,
        params: Option<PaginatedRequestParams>,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ListResourceTemplatesResult> {
        Box::pin(ServerHandler::list_resource_templates(
            self, params, request,
        ))
    }

    fn read_resource(
        &self,
        params: ReadResourceRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ReadResourceResponse> {
        Box::pin(ServerHandler::read_resource(self, params, request))
    }

    // The requests of protocol versions before 2026-07-28, which clients
    // still send; rmcp marks them deprecated.
    #[allow(deprecated)]
    fn subscribe(
        &self,
        params: SubscribeRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ()> {
        Box::pin(ServerHandler::subscribe(self, params, request))
    }

    #[allow(deprecated)]
    fn unsubscribe(
        &self,
        params: UnsubscribeRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ()> {
        Box::pin(ServerHandler::unsubscribe(self, params, request))
    }

    fn list_prompts(
        &self,
        params: Option<PaginatedRequestParams>,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ListPromptsResult> {
        Box::pin(ServerHandler::list_prompts(self, params, request))
    }

    fn get_prompt(
        &self,
        params: GetPromptRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, GetPromptResponse> {
        Box::pin(ServerHandler::get_prompt(self, params, request))
    }

    fn complete(
        &self,
        params: CompleteRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, CompleteResult> {
        Box::pin(ServerHandler::complete(self, params, request))
    }

    #[allow(deprecated)]
    fn set_level(
        &self,
        params: SetLevelRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Answer<'_, ()> {
        Box::pin(ServerHandler::set_level(self, params, request))
    }
}

/// `ours` (the tools') with what the companion declares besides tools.
pub(super) fn merged(
    mut ours: ServerCapabilities,
    theirs: ServerCapabilities,
) -> ServerCapabilities {
    ours.resources = theirs.resources;
    ours.prompts = theirs.prompts;
    ours.completions = theirs.completions;
    ours.logging = theirs.logging;
    ours
}
