//! Why an import failed, and the remote tools it left out.

/// Why an upstream's `connect` imported nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The namespace is not dot-separated lowercase segments, as keys are.
    #[error(
        "the namespace `{namespace}` is not dot-separated lowercase segments (letters, digits and `_`, each starting with a letter)"
    )]
    InvalidNamespace {
        /// The namespace, as given.
        namespace: String,
    },
    /// The command is not on the allowlist.
    #[error("the command `{program}` with arguments {args:?} is not on the import allowlist")]
    CommandNotAllowed {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// The URL is not on the allowlist.
    #[error("the URL `{url}` is not on the import allowlist")]
    UrlNotAllowed {
        /// The URL, as given.
        url: String,
    },
    /// The URL is neither `https` nor on a loopback address.
    #[error("the URL `{url}` is not `https` and not on a loopback address")]
    UrlNotSecure {
        /// The URL, as given.
        url: String,
    },
    /// An environment variable to pass on is not on the allowlist.
    #[error("the environment variable `{name}` is not on the import allowlist")]
    EnvNotAllowed {
        /// The variable's name.
        name: String,
    },
    /// The OpenAPI document is not one this import reads (not OpenAPI 3.0
    /// or 3.1, or without `paths`).
    #[error("the OpenAPI document cannot be imported: {reason}")]
    Document {
        /// What is wrong with it.
        reason: String,
    },
    /// A credential header's name or value is not valid in a header.
    #[error("the credential header `{name}` is not a valid header name and value")]
    Credential {
        /// The header's name, as given (its value is never shown).
        name: String,
    },
    /// The HTTP client could not be built (its TLS backend failed to start).
    #[error("the HTTP client could not be built: {source}")]
    Client {
        /// Why, as reqwest reported it.
        source: crate::error::BoxError,
    },
    /// The server could not be started.
    #[error("starting `{program}` failed: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The server did not complete MCP's handshake.
    #[error("the MCP handshake with `{upstream}` failed: {reason}")]
    Handshake {
        /// The program or the URL.
        upstream: String,
        /// Why, as the client reported it.
        reason: String,
    },
    /// The server's tools could not be listed.
    #[error("listing the tools of `{upstream}` failed: {reason}")]
    List {
        /// The program or the URL.
        upstream: String,
        /// Why, as the client reported it.
        reason: String,
    },
    /// A tool (or operation) named in
    /// [`RemoteTools::only`](super::RemoteTools::only) is not offered by
    /// the upstream.
    #[error("the upstream offers no tool named `{name}`")]
    NotOffered {
        /// The remote name.
        name: String,
    },
    /// Two remote tools (or operations) would have the same key or name
    /// once qualified.
    #[error("the remote tools `{first}` and `{second}` would both be `{qualified}`")]
    Collision {
        /// One remote name.
        first: String,
        /// The other.
        second: String,
        /// The key or name they share.
        qualified: String,
    },
}

/// A remote tool the import does not serve, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skipped {
    /// The remote name.
    pub name: String,
    /// Why it is not served.
    pub reason: String,
}
