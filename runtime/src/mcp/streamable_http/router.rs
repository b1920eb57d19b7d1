//! The Streamable HTTP endpoint: authentication, limits and the router.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::body::{self, declared_over};
use super::cors::cors;
use super::options::HttpOptions;
use super::sessions::{SessionGuard, credentials_owner};
use crate::mcp::auth::{Authenticate, WELL_KNOWN};
use crate::mcp::handler::McpHandler;
use crate::mcp::server::McpServer;
use crate::web::hosts::AllowedHosts;
use tower_service::Service as _;

impl<C: Any + Send + Sync> McpServer<C> {
    /// A Streamable HTTP endpoint at `/mcp`, to mount in the application's
    /// own axum router.
    ///
    /// Each request goes through, in order:
    /// - `Host` (DNS-rebinding protection): a request for a host not in
    ///   `options.allowed_hosts` gets 403, one with no `Host` 400, before
    ///   anything else;
    /// - CORS: a browser's preflight from an allowed origin
    ///   (`options.allowed_origins`) is answered, and responses carry the
    ///   `Access-Control-*` headers it needs;
    /// - a declared `Content-Length` over `options.max_body_bytes`: 413
    ///   before anything is read;
    /// - `authenticate`, which turns the request's HTTP parts (headers such
    ///   as a bearer token) into the caller's context, or refuses it with a
    ///   [`Rejection`](crate::mcp::Rejection) (401s name the [`ResourceMetadata`](crate::mcp::ResourceMetadata)
    ///   it has, which is served at `/.well-known/oauth-protected-resource`);
    /// - sessions: a session belongs to the principal that opened it (its
    ///   [`Principal::id`](crate::Principal::id) when the executor knows the
    ///   context type, else its credentials, however the token's scheme
    ///   and spaces are spelt), and any other gets 404 for it;
    ///   a new session over `max_sessions` gets 503, over
    ///   `max_sessions_per_principal` 429, and one idle for
    ///   `session_idle_timeout` is closed;
    /// - the body, read whole within `body_timeout` (else 408) and
    ///   `max_body_bytes` (else 413); one that is not JSON gets 400 with a
    ///   JSON-RPC -32700 error, one that is no JSON-RPC message (a batch,
    ///   say) 400 with -32600;
    /// - rmcp, which checks `Origin` against `options.allowed_origins` and
    ///   serves MCP.
    ///
    /// A path the router does not serve is 404, before authentication:
    /// `/.well-known/*` too, unless `authenticate` has metadata to serve.
    ///
    /// The connection limits of [`HttpOptions`] apply where the server owns
    /// the connections: [`McpServer::serve_http`].
    pub fn http_router<A>(&self, authenticate: A, options: HttpOptions) -> axum::Router
    where
        A: Authenticate<C>,
    {
        // `Host` is checked first, below, by the code the admin shares.
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_origins(options.allowed_origins.clone())
            .enforce_origin_validation()
            .with_max_request_body_bytes(options.max_body_bytes)
            .disable_allowed_hosts();
        config.legacy_session_mode = !options.stateless;
        config.json_response = options.json_response;

        let handler = McpHandler {
            shared: self.shared.clone(),
            context: None,
            sessions: !options.stateless,
            found: Default::default(),
        };
        // Each session its own: what it found with `search_tools`.
        let factory = move || {
            Ok(McpHandler {
                found: Default::default(),
                ..handler.clone()
            })
        };
        let hosts = AllowedHosts::new(&options.allowed_hosts);
        let (body_timeout, max_body_bytes) = (options.body_timeout, options.max_body_bytes);
        let endpoint = if options.stateless {
            let service = StreamableHttpService::new(
                factory,
                Arc::new(NeverSessionManager::default()),
                config,
            );
            let endpoint = Endpoint::new(service, body_timeout, max_body_bytes);
            axum::Router::new().nest_service("/mcp", endpoint)
        } else {
            let mut manager = LocalSessionManager::default();
            // rmcp's own idle timer closes what the guard no longer lists.
            manager.session_config.keep_alive = Some(options.session_idle_timeout);
            let manager = Arc::new(manager);
            // Anonymous callers are all one principal: a cap per principal
            // would be everyone's, and clients that never end their
            // sessions would soon shut out the rest.
            let per_principal = if authenticate.is_anonymous() {
                options.max_sessions
            } else {
                options.max_sessions_per_principal
            };
            let guard = SessionGuard::new(
                manager.clone(),
                options.max_sessions,
                per_principal,
                options.session_idle_timeout,
            );
            let service = StreamableHttpService::new(factory, manager, config);
            let shared = self.shared.clone();
            let endpoint = Endpoint::new(service, body_timeout, max_body_bytes);
            axum::Router::new()
                .nest_service("/mcp", endpoint)
                .layer(axum::middleware::from_fn(
                    move |request: axum::extract::Request, next: axum::middleware::Next| {
                        let owner = request
                            .extensions()
                            .get::<CallerContext<C>>()
                            .and_then(|caller| shared.executor.actor(&*caller.0))
                            .map(Arc::from)
                            .unwrap_or_else(|| credentials_owner(request.headers()));
                        guard.clone().serve(owner, request, next)
                    },
                ))
        };
        // The REST API: beside the endpoint, behind the same checks.
        #[cfg(feature = "openapi")]
        let endpoint = match options.rest {
            true => endpoint.merge(super::rest::routes(
                self.shared.clone(),
                body_timeout,
                max_body_bytes,
            )),
            false => endpoint,
        };
        let metadata = authenticate.resource_metadata().cloned();
        let metadata_url = metadata.as_ref().map(|m| Arc::<str>::from(m.url()));
        // Only on the endpoint's routes: a path the server does not serve
        // is 404 to anyone, not 401 (which sends a client looking for
        // OAuth metadata the server may not have).
        let endpoint = endpoint.route_layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let authenticate = authenticate.clone();
                let metadata_url = metadata_url.clone();
                async move {
                    let (mut parts, body) = request.into_parts();
                    match authenticate.authenticate(&parts).await {
                        Ok(ctx) => {
                            parts.extensions.insert(CallerContext(Arc::new(ctx)));
                            let request = axum::extract::Request::from_parts(parts, body);
                            next.run(request).await
                        }
                        Err(rejection) => rejection.into_response(metadata_url.as_deref()),
                    }
                }
            },
        ));
        // Protected-resource metadata is public: served beside the
        // endpoint, outside authentication.
        let endpoint = match metadata {
            Some(metadata) => {
                let json = serde_json::to_string(&metadata).unwrap_or_default();
                let json = axum::body::Bytes::from(json);
                let serve = move || {
                    let content_type = [(http::header::CONTENT_TYPE, "application/json")];
                    std::future::ready((content_type, json.clone()))
                };
                let mut router = endpoint.route(WELL_KNOWN, axum::routing::get(serve.clone()));
                let at_path = format!("{WELL_KNOWN}{}", metadata.path());
                if at_path != WELL_KNOWN {
                    router = router.route(&at_path, axum::routing::get(serve));
                }
                router
            }
            None => endpoint,
        };
        // A body declared too large is refused before anything waits for
        // it (or for credentials): for a browser inside CORS, so that a
        // page can read the 413; for any other caller in the outermost
        // layer below, one layer less for every call to go through.
        // CORS answers browsers, which send `Origin` on every request it
        // concerns (a preflight included). A request without one is no
        // browser's, and skips the layer, whose headers cost every call.
        let browsers = endpoint
            .clone()
            .layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| async move {
                    match declared_over(request.headers(), max_body_bytes) {
                        Some(refused) => refused,
                        None => next.run(request).await,
                    }
                },
            ))
            .layer(cors(&options.allowed_origins));
        // Outermost: a page on a rebound name gets nothing, not even CORS.
        endpoint.layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let checked = hosts.check(request.uri(), request.headers());
                let browser = request.headers().contains_key(http::header::ORIGIN);
                let mut browsers = browser.then(|| browsers.clone());
                async move {
                    match (checked, &mut browsers) {
                        // A router is always ready, and never fails.
                        (Ok(()), Some(browsers)) => match browsers.call(request).await {
                            Ok(response) => response,
                            Err(never) => match never {},
                        },
                        (Ok(()), None) => match declared_over(request.headers(), max_body_bytes) {
                            Some(refused) => refused,
                            None => next.run(request).await,
                        },
                        (Err(refusal), _) => {
                            let text = [(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")];
                            let answer = (refusal.status(), text, refusal.message());
                            axum::response::IntoResponse::into_response(answer)
                        }
                    }
                }
            },
        ))
    }
}

/// The caller's context for one HTTP request, put there by authentication.
pub(in crate::mcp) struct CallerContext<C>(pub(in crate::mcp) Arc<C>);

impl<C> Clone for CallerContext<C> {
    fn clone(&self) -> Self {
        CallerContext(self.0.clone())
    }
}

/// rmcp's service behind an `Arc`, reading each POST's body within its
/// limits first ([`body::read_body`]). axum clones the service under each
/// layer for every request, and rmcp's carries its whole configuration
/// (origin and host lists): shared, a request costs a reference count.
/// Reading the body here rather than in a layer of its own spares every
/// call that layer's clones and boxes.
struct Endpoint<S, M> {
    service: Arc<StreamableHttpService<S, M>>,
    body_timeout: Duration,
    max_body_bytes: usize,
}

impl<S, M> Endpoint<S, M> {
    fn new(
        service: StreamableHttpService<S, M>,
        body_timeout: Duration,
        max_body_bytes: usize,
    ) -> Self {
        Endpoint {
            service: Arc::new(service),
            body_timeout,
            max_body_bytes,
        }
    }
}

impl<S, M> Clone for Endpoint<S, M> {
    fn clone(&self) -> Self {
        Endpoint {
            service: self.service.clone(),
            body_timeout: self.body_timeout,
            max_body_bytes: self.max_body_bytes,
        }
    }
}

impl<S, M> tower_service::Service<axum::extract::Request> for Endpoint<S, M>
where
    S: rmcp::ServerHandler + Send + 'static,
    M: rmcp::transport::streamable_http_server::SessionManager,
{
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = futures_util::future::BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: axum::extract::Request) -> Self::Future {
        let service = self.service.clone();
        let (timeout, limit) = (self.body_timeout, self.max_body_bytes);
        Box::pin(async move {
            let handle = |request| async move {
                let response = service.handle(request).await;
                axum::response::IntoResponse::into_response(response)
            };
            Ok(body::read_body(timeout, limit, request, handle).await)
        })
    }
}
