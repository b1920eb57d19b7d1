//! The operations of an OpenAPI 3.0 or 3.1 document, as dynamic tools of
//! the registry that call the service over HTTP.
//!
//! A [`Service`] names the document (a `serde_json::Value`, however the
//! application got it: a file, `include_str!`, the service's own
//! `/openapi.json`), the base URL to call, which the application gives and
//! the document's `servers` never do, and the operations to serve
//! ([`RemoteTools`], by `operationId`, or by method and path as `GET
//! /pets/{id}` for an operation without one). [`Service::import`] builds
//! one tool per operation served:
//!
//! - its key and name are qualified by the namespace (`listPets` in `pets`
//!   is key `pets.listpets`, name `pets_listPets`), a name longer than 64
//!   characters cut and ended with a digest of the whole;
//! - its effect is `read` for `GET` and `HEAD`, `destructive` for `DELETE`
//!   and `write` for the rest, unless [`Service::effect`] says otherwise;
//!   a tool that changes something is served only with
//!   [`approvals`](Service::approvals);
//! - its input is one object: each path, query and header parameter under
//!   its name, and the JSON body under `body`; the component schemas it
//!   refers to go into its `$defs`, and OpenAPI 3.0's `nullable` becomes
//!   JSON Schema's `null` type;
//! - credentials ([`bearer`](Service::bearer), [`header`](Service::header),
//!   [`query`](Service::query)) are added to every request by the
//!   application: the parameters they fill are left out of every schema,
//!   and their values appear in no argument, `Debug` output or error.
//!
//! An operation this import cannot send exactly as the document describes
//! (a cookie parameter, an object in the query, a `multipart` body, a
//! `$ref` to another file...) is left out with the reason
//! ([`Imported::skipped`]): it never guesses.
//!
//! A call sends one request through reqwest (rustls), following no
//! redirect. A 2xx answer is the call's result: its JSON as a value, its
//! text as a string. Any other status is a tool error carrying the status
//! and the first 1,000 characters of the body; an answer longer than
//! [`max_response`](Service::max_response) is a tool error too; a request
//! that fails (refused, reset, timed out) is the call's error with its
//! source.
//!
//! ```no_run
//! use toolwright::import::RemoteTools;
//! use toolwright::import::openapi::Service;
//! use toolwright::{Catalog, registry::Registry};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let document: serde_json::Value =
//!     serde_json::from_str(&std::fs::read_to_string("petstore.json")?)?;
//! let imported = Service::new("pets", "https://pets.example.com/v1", document)
//!     .tools(RemoteTools::only(["listPets", "showPetById"]))
//!     .bearer(std::env::var("PETS_TOKEN")?)
//!     .import()?;
//! for skipped in imported.skipped() {
//!     eprintln!("not served: {} ({})", skipped.name, skipped.reason);
//! }
//! let registry = Registry::new(Catalog::empty());
//! imported.register(&registry)?;
//! # Ok(())
//! # }
//! ```

mod document;
mod request;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};
use serde_json::Value;

use super::naming::qualified;
use super::settings::Settings;
pub use super::{ImportError, RemoteTools, Skipped};
use crate::dynamic::DynamicTool;
use crate::effect::Effect;
use crate::principal::Principal;
use crate::registry::{Change, Registry, RegistryError};
use crate::util::names::is_valid_key;
use document::{Operation, Supplied};
use request::{Caller, Credentials};

/// The longest answer read by default: 1 MiB.
pub const DEFAULT_MAX_RESPONSE: usize = 1 << 20;

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A service described by an OpenAPI document, and what to serve of it:
/// see [the module](self).
///
/// ```
/// use std::time::Duration;
/// use serde_json::json;
/// use toolwright::import::RemoteTools;
/// use toolwright::import::openapi::Service;
/// use toolwright::Effect;
///
/// let document = json!({
///     "openapi": "3.1.0",
///     "paths": {"/pets/{id}": {"get": {
///         "operationId": "showPet",
///         "summary": "One pet, by its id.",
///         "parameters": [{"name": "id", "in": "path", "required": true,
///                         "schema": {"type": "integer"}}]
///     }}}
/// });
/// let imported = Service::new("pets", "http://127.0.0.1:8000", document)
///     .tools(RemoteTools::only(["showPet"]))
///     .header("X-Api-Key", "k-123")
///     .timeout(Duration::from_secs(5))
///     .import()
///     .unwrap();
/// let tool = &imported.tools()[0];
/// assert_eq!((tool.key(), tool.name()), ("pets.showpet", "pets_showPet"));
/// assert_eq!(tool.entry().effect(), Effect::Read);
/// assert_eq!(tool.entry().input_schema()["required"], json!(["id"]));
/// ```
#[derive(Clone)]
pub struct Service {
    namespace: String,
    base_url: String,
    document: Value,
    settings: Settings,
    headers: Vec<(String, String)>,
    query: Vec<(String, String)>,
    max_response: usize,
}

impl fmt::Debug for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |pairs: &[(String, String)]| -> Vec<String> {
            pairs.iter().map(|(name, _)| name.clone()).collect()
        };
        f.debug_struct("Service")
            .field("namespace", &self.namespace)
            .field("base_url", &self.base_url)
            .field("settings", &self.settings)
            .field("credential_headers", &names(&self.headers))
            .field("credential_query", &names(&self.query))
            .field("max_response", &self.max_response)
            .finish_non_exhaustive()
    }
}

impl Service {
    /// The service at `base_url` (`https`, or plain `http` on a loopback
    /// address) that `document` describes, its operations served under
    /// `namespace`. It serves none until [`tools`](Self::tools) says which.
    pub fn new(namespace: impl Into<String>, base_url: impl Into<String>, document: Value) -> Self {
        Service {
            namespace: namespace.into(),
            base_url: base_url.into(),
            document,
            settings: Settings::default(),
            headers: Vec::new(),
            query: Vec::new(),
            max_response: DEFAULT_MAX_RESPONSE,
        }
    }

    /// The operations to serve, by `operationId`, or by method and path
    /// (`GET /pets/{id}`) for one without.
    pub fn tools(mut self, tools: RemoteTools) -> Self {
        self.settings.tools = tools;
        self
    }

    /// The effect of the operation `name`, decided here instead of by its
    /// method.
    pub fn effect(mut self, name: impl Into<String>, effect: Effect) -> Self {
        self.settings.effect(name.into(), effect);
        self
    }

    /// Operations that change something (every one not `read`) wait for a
    /// person's approval in the executor's ledger, the caller identified as
    /// a `C` ([`Principal::approval_ledger`]). Without this, such
    /// operations are left out ([`Imported::skipped`]).
    pub fn approvals<C: Principal + Send + Sync + 'static>(mut self) -> Self {
        self.settings.approvals::<C>();
        self
    }

    /// How long a call of any of its tools may take (each tool's
    /// `timeout`); by default, the executor's.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.settings.timeout = Some(timeout);
        self
    }

    /// The longest result of any of its tools, in characters (each tool's
    /// `max_result`); by default, the executor's.
    pub fn max_result(mut self, chars: usize) -> Self {
        self.settings.max_result(chars);
        self
    }

    /// The longest answer read, in bytes ([`DEFAULT_MAX_RESPONSE`] unless
    /// set): a longer one is a tool error, read no further.
    pub fn max_response(mut self, bytes: usize) -> Self {
        self.max_response = bytes;
        self
    }

    /// Sends `Authorization: Bearer <token>` with every request.
    pub fn bearer(self, token: impl fmt::Display) -> Self {
        self.header(AUTHORIZATION.as_str(), format!("Bearer {token}"))
    }

    /// Sends the header `name: value` with every request (an API key): a
    /// header parameter of that name is left out of every schema.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Adds the query parameter `name=value` to every request (an API key
    /// in the query): a query parameter of that name is left out of every
    /// schema.
    pub fn query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push((name.into(), value.into()));
        self
    }

    /// One dynamic tool per operation served, each calling the service at
    /// the base URL. An operation that cannot be served is left out with
    /// the reason ([`Imported::skipped`]); one named in
    /// [`RemoteTools::only`] that the document does not have fails the
    /// import, as do a base URL that is not `https` (or `http` on a
    /// loopback address), a credential that is no valid header, and a
    /// document that is not OpenAPI 3.0 or 3.1.
    pub fn import(self) -> Result<Imported, ImportError> {
        if !is_valid_key(&self.namespace) {
            return Err(ImportError::InvalidNamespace {
                namespace: self.namespace,
            });
        }
        let base = reqwest::Url::parse(&self.base_url)
            .ok()
            .filter(|_| super::secure(&self.base_url))
            .ok_or_else(|| ImportError::UrlNotSecure {
                url: self.base_url.clone(),
            })?;
        let credentials = self.credentials()?;
        let supplied = Supplied {
            headers: self
                .headers
                .iter()
                .map(|(n, _)| n.to_ascii_lowercase())
                .collect(),
            query: self.query.iter().map(|(n, _)| n.clone()).collect(),
        };
        let read = document::operations(&self.document, &supplied)?;
        if let RemoteTools::Only(names) = &self.settings.tools
            && let Some(missing) = names.iter().find(|name| {
                !read.iter().any(|op| match op {
                    Ok(op) => &op.remote == *name,
                    Err((remote, _)) => remote == *name,
                })
            })
        {
            return Err(ImportError::NotOffered {
                name: missing.clone(),
            });
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| ImportError::Client { source: e.into() })?;
        let caller = Arc::new(Caller {
            client,
            base,
            credentials,
            max_response: self.max_response,
        });
        let mut imported = Imported {
            tools: Vec::new(),
            skipped: Vec::new(),
        };
        let mut taken: HashMap<String, String> = HashMap::new();
        for operation in read {
            let operation = match operation {
                Ok(operation) if self.settings.tools.allows(&operation.remote) => operation,
                Err((name, reason)) if self.settings.tools.allows(&name) => {
                    imported.skipped.push(Skipped { name, reason });
                    continue;
                }
                _ => continue,
            };
            let (key, name) = match qualified(&self.namespace, &operation.slug) {
                Ok(qualified) => qualified,
                Err(reason) => {
                    let name = operation.remote;
                    imported.skipped.push(Skipped { name, reason });
                    continue;
                }
            };
            for qualified in [&key, &name] {
                if let Some(first) = taken.insert(qualified.clone(), operation.remote.clone()) {
                    return Err(ImportError::Collision {
                        first,
                        second: operation.remote,
                        qualified: qualified.clone(),
                    });
                }
            }
            let remote = operation.remote.clone();
            match self.tool(operation, key, name, &caller) {
                Ok(tool) => imported.tools.push(tool),
                Err(reason) => imported.skipped.push(Skipped {
                    name: remote,
                    reason,
                }),
            }
        }
        Ok(imported)
    }

    /// The credential headers as headers, marked sensitive.
    fn credentials(&self) -> Result<Credentials, ImportError> {
        let mut credentials = Credentials {
            query: self.query.clone(),
            ..Credentials::default()
        };
        for (name, value) in &self.headers {
            let invalid = || ImportError::Credential { name: name.clone() };
            let header = HeaderName::try_from(name.as_str()).map_err(|_| invalid())?;
            let mut value = HeaderValue::try_from(value.as_str()).map_err(|_| invalid())?;
            value.set_sensitive(true);
            credentials.headers.push((header, value));
        }
        Ok(credentials)
    }

    /// The tool for `operation`, or why it cannot be built.
    fn tool(
        &self,
        operation: Operation,
        key: String,
        name: String,
        caller: &Arc<Caller>,
    ) -> Result<DynamicTool, String> {
        let description = operation.description.unwrap_or_else(|| {
            format!(
                "The operation `{}` of `{}`.",
                operation.remote, self.namespace
            )
        });
        let mut builder = DynamicTool::builder(key, name)
            .description(description)
            .input_schema(operation.input_schema);
        if let Some(title) = operation.title {
            builder = builder.title(title);
        }
        let builder = self
            .settings
            .apply(builder, Some(&operation.remote), operation.effect)?;
        let (caller, route) = (caller.clone(), Arc::new(operation.route));
        builder
            .handler(move |call| {
                let (caller, route) = (caller.clone(), route.clone());
                Box::pin(async move { caller.call(&route, call.into_arguments()).await })
            })
            .build()
            .map_err(|e| e.to_string())
    }
}

/// The tools imported from one service, ready to register, and the
/// operations left out.
#[derive(Debug)]
pub struct Imported {
    tools: Vec<DynamicTool>,
    skipped: Vec<Skipped>,
}

impl Imported {
    /// The tools, in path and method order.
    pub fn tools(&self) -> &[DynamicTool] {
        &self.tools
    }

    /// The allowed operations that could not be served, and why.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// The tools, to register ([`Registry::register_all`]).
    pub fn into_tools(self) -> Vec<DynamicTool> {
        self.tools
    }

    /// Registers the tools in `registry` as one generation.
    pub fn register(self, registry: &Registry) -> Result<Change, RegistryError> {
        registry.register_all(self.tools)
    }
}
