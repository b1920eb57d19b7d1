//! What an import may start and pass on, decided by the application's
//! code: a configuration file names upstreams, this says which may run.

use std::collections::BTreeSet;

/// The commands an import may start, each with its exact arguments, the
/// URLs it may connect to, and the environment variables it may pass on.
/// Empty, it allows nothing.
///
/// ```
/// use toolwright::import::mcp::Allowlist;
///
/// let allowlist = Allowlist::new()
///     .command("mcp-server-git", ["--repository", "/srv/repo"])
///     .env(["PATH", "HOME"]);
/// assert!(allowlist.allows_command("mcp-server-git", &["--repository", "/srv/repo"]));
/// assert!(!allowlist.allows_command("mcp-server-git", &["--repository", "/"]));
/// assert!(allowlist.allows_env("PATH"));
/// let allowlist = allowlist.url("https://mcp.example.com/mcp");
/// assert!(allowlist.allows_url("https://mcp.example.com/mcp"));
/// assert!(!allowlist.allows_url("https://mcp.example.com/mcp/"));
/// assert!(!allowlist.allows_env("AWS_SECRET_ACCESS_KEY"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Allowlist {
    commands: BTreeSet<(String, Vec<String>)>,
    urls: BTreeSet<String>,
    env: BTreeSet<String>,
}

impl Allowlist {
    /// An allowlist that allows nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allows starting `program` with exactly `args`.
    pub fn command<I, S>(mut self, program: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let args = args.into_iter().map(Into::into).collect();
        self.commands.insert((program.into(), args));
        self
    }

    /// Allows connecting to `url`, exactly as written (an
    /// `HttpUpstream` of feature `import-mcp-http`).
    /// It must also be `https`, or on a loopback address.
    pub fn url(mut self, url: impl Into<String>) -> Self {
        self.urls.insert(url.into());
        self
    }

    /// Allows passing on the environment variables `names`, with the
    /// values this process has. No other variable reaches a child process.
    pub fn env<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.env.extend(names.into_iter().map(Into::into));
        self
    }

    /// Whether `program` may be started with `args`.
    pub fn allows_command<S: AsRef<str>>(&self, program: &str, args: &[S]) -> bool {
        self.commands.iter().any(|(allowed, allowed_args)| {
            allowed == program
                && allowed_args.len() == args.len()
                && allowed_args.iter().zip(args).all(|(a, b)| a == b.as_ref())
        })
    }

    /// Whether `url` may be connected to, as far as the list goes.
    pub fn allows_url(&self, url: &str) -> bool {
        self.urls.contains(url)
    }

    /// Whether the environment variable `name` may be passed on.
    pub fn allows_env(&self, name: &str) -> bool {
        self.env.contains(name)
    }
}
