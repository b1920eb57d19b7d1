//! One upstream MCP server: how to reach it (a child process over stdio,
//! or a URL), what to serve of it, and its tools once connected.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::ServiceExt as _;
// Sampling is deprecated by the 2026-07-28 protocol (SEP-2577), yet it is
// what servers of the earlier eras ask.
use rmcp::model::{CallToolRequestParams, ElicitRequestParams, ElicitResult, Tool};
#[allow(deprecated)]
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};
use rmcp::service::RoleClient;
use serde_json::Value;

use super::client::{self, Answers, Hub, Listener};
use super::connection::{Connection, Session, Start};
use super::lines::BoundedLines;
use super::live::{self, Grow, Grown, KeepPins, Live};
use super::mapping;
use super::{Allowlist, Changed, Pins};
use crate::dynamic::{DynamicTool, input_schema_problem};
use crate::effect::Effect;
use crate::error::BoxError;
use crate::import::naming::qualified;
use crate::import::settings::Settings;
use crate::import::{ImportError, RemoteTools, Skipped};
use crate::principal::Principal;
use crate::registry::{Change, Reason, Registry, RegistryError};
use crate::util::names::is_valid_key;

/// The longest message read from a stdio server unless
/// [`Upstream::max_response`] says otherwise: 8 MiB, half of what rmcp's
/// transport reads at most.
///
/// ```
/// assert_eq!(toolwright::import::mcp::DEFAULT_MAX_RESPONSE, 8 * 1024 * 1024);
/// ```
pub const DEFAULT_MAX_RESPONSE: usize = 8 * 1024 * 1024;

/// The longest line rmcp's transport reads; a longer one it drops unsaid.
const RMCP_MAX_LINE: usize = 16 * 1024 * 1024;

/// An MCP server to start as a child process and import tools from: see
/// [the module](super). The settings of [`Upstream`] apply.
///
/// ```
/// use std::time::Duration;
/// use toolwright::import::mcp::{RemoteTools, StdioUpstream};
/// use toolwright::Effect;
///
/// let upstream = StdioUpstream::new("git", "mcp-server-git", ["--repository", "/srv/repo"])
///     .env(["PATH"])
///     .tools(RemoteTools::only(["git_status", "git_log"]))
///     .effect("git_status", Effect::Read)
///     .effect("git_log", Effect::Read)
///     .timeout(Duration::from_secs(20));
/// # let _ = upstream;
/// ```
pub type StdioUpstream = Upstream<Stdio>;

/// An upstream MCP server reached through `T` ([`Stdio`], or
/// `Http` with feature `import-mcp-http`): its namespace
/// here, the remote tools to serve and how, and their pins.
#[derive(Debug, Clone)]
pub struct Upstream<T> {
    namespace: String,
    reach: T,
    settings: Settings,
    max_concurrent: Option<usize>,
    pins: Pins,
    keep: Option<KeepPins>,
    answers: Answers,
    max_response: usize,
}

/// How a [`StdioUpstream`] is reached: the program it starts, its
/// arguments and the environment variables passed on.
#[derive(Debug, Clone)]
pub struct Stdio {
    program: String,
    args: Vec<String>,
    env: Vec<String>,
}

impl StdioUpstream {
    /// The server `program` started with `args`, its tools served under
    /// `namespace`. It serves no tool until [`tools`](Self::tools) says
    /// which, and passes on no environment variable.
    pub fn new<I, S>(namespace: impl Into<String>, program: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let reach = Stdio {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        };
        Upstream::reached(namespace.into(), reach)
    }

    /// Passes on the environment variables `names`, with this process's
    /// values; each must be on the [`Allowlist`].
    pub fn env<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.reach.env.extend(names.into_iter().map(Into::into));
        self
    }

    /// Starts the server, if the allowlist lists its command and
    /// environment, completes MCP's handshake, lists its tools and builds
    /// one dynamic tool for each one served. A tool not named, or that
    /// cannot be served (a write without approvals), is left out with the
    /// reason ([`Imported::skipped`]); a tool named in
    /// [`RemoteTools::only`] that the server does not offer fails the
    /// import.
    pub async fn connect(self, allowlist: &Allowlist) -> Result<Imported, ImportError> {
        self.check(allowlist)?;
        let signal = self.hub();
        let session = self.start(signal.clone()).await?;
        let (again, restart) = (self.clone(), signal.clone());
        let start: Start = Box::new(move || {
            let (again, signal) = (again.clone(), restart.clone());
            Box::pin(async move { again.start(signal).await })
        });
        self.import(session, start, &self.reach.program, signal)
            .await
    }

    /// Fails unless the namespace is valid and the allowlist lists the
    /// command and every variable to pass on.
    fn check(&self, allowlist: &Allowlist) -> Result<(), ImportError> {
        self.check_namespace()?;
        let Stdio { program, args, env } = &self.reach;
        if !allowlist.allows_command(program, args) {
            return Err(ImportError::CommandNotAllowed {
                program: program.clone(),
                args: args.clone(),
            });
        }
        match env.iter().find(|name| !allowlist.allows_env(name)) {
            Some(name) => Err(ImportError::EnvNotAllowed { name: name.clone() }),
            None => Ok(()),
        }
    }

    /// The server, started with only the allowed environment, past MCP's
    /// handshake; its `list_changed` wakes `signal`.
    async fn start(&self, signal: Arc<Hub>) -> Result<Session, ImportError> {
        let Stdio { program, args, env } = &self.reach;
        let mut command = tokio::process::Command::new(program);
        command.args(args).env_clear();
        for name in env {
            if let Some(value) = std::env::var_os(name) {
                command.env(name, value);
            }
        }
        let piped = std::process::Stdio::piped;
        command.stdin(piped()).stdout(piped()).stderr(piped());
        // Killed when its session ends, whatever ended it.
        command.kill_on_drop(true);
        let spawned = command.spawn().and_then(|mut child| {
            let (stdin, stdout) = (child.stdin.take(), child.stdout.take());
            let stderr = child.stderr.take();
            match (stdin, stdout, stderr) {
                (Some(stdin), Some(stdout), Some(stderr)) => Ok((child, stdin, stdout, stderr)),
                _ => Err(std::io::Error::other(
                    "the child's standard streams are missing",
                )),
            }
        });
        let (child, stdin, stdout, stderr) = spawned.map_err(|source| ImportError::Spawn {
            program: program.clone(),
            source,
        })?;
        tokio::spawn(log_stderr(stderr, self.namespace.clone()));
        let stdout = BoundedLines::new(stdout, self.max_response);
        handshake((stdout, stdin), program, signal, Some(child)).await
    }
}

/// `transport` past MCP's handshake, the server's `list_changed` waking
/// `signal`. The server's own requests (sampling, elicitation) get the
/// application's answers in `signal`, or a refusal. The session holds
/// `child`, the server's process if it started one.
pub(super) async fn handshake<T, E, A>(
    transport: T,
    upstream: &str,
    signal: Arc<Hub>,
    child: Option<tokio::process::Child>,
) -> Result<Session, ImportError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let listener = Listener {
        signal: signal.clone(),
        child: child.map(std::sync::Mutex::new),
    };
    let session = listener
        .serve(transport)
        .await
        .map_err(|e| ImportError::Handshake {
            upstream: upstream.to_owned(),
            reason: e.to_string(),
        })?;
    client::listen(session.peer().clone(), signal);
    Ok(session)
}

impl<T> Upstream<T> {
    /// Reached through `reach`, serving nothing yet.
    pub(super) fn reached(namespace: String, reach: T) -> Self {
        Upstream {
            namespace,
            reach,
            settings: Settings::default(),
            max_concurrent: None,
            pins: Pins::new(),
            keep: None,
            answers: Answers::default(),
            max_response: DEFAULT_MAX_RESPONSE,
        }
    }

    /// The remote tools to serve.
    pub fn tools(mut self, tools: RemoteTools) -> Self {
        self.settings.tools = tools;
        self
    }

    /// The effect of the remote tool `name`, decided here: without one,
    /// it is `destructive`, whatever the server's annotations say.
    pub fn effect(mut self, name: impl Into<String>, effect: Effect) -> Self {
        self.settings.effect(name.into(), effect);
        self
    }

    /// Tools that change something (every one not decided `read`) wait
    /// for a person's approval in the executor's ledger, the caller
    /// identified as a `C` ([`Principal::approval_ledger`]). Without this,
    /// such tools are left out ([`Imported::skipped`]): nothing is served
    /// that could change something unapproved.
    ///
    /// ```
    /// use toolwright::import::mcp::{RemoteTools, StdioUpstream};
    /// use toolwright::Principal;
    ///
    /// struct User(String);
    /// impl Principal for User {
    ///     fn id(&self) -> &str { &self.0 }
    /// }
    ///
    /// let upstream = StdioUpstream::new("fs", "mcp-server-filesystem", ["/srv/shared"])
    ///     .tools(RemoteTools::only(["write_file"]))
    ///     .approvals::<User>();
    /// # let _ = upstream;
    /// ```
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
    /// `max_result`: a longer text is cut there); by default, the
    /// executor's.
    pub fn max_result(mut self, chars: usize) -> Self {
        self.settings.max_result(chars);
        self
    }

    /// The longest message read from a stdio server, in bytes
    /// ([`DEFAULT_MAX_RESPONSE`] unless set; at most rmcp's own bound, 16
    /// MiB less one byte). A longer one is dropped as it is read, never
    /// held whole: the call it answers fails at once, saying so. Over
    /// Streamable HTTP, rmcp's client bounds an answer at 16 MiB.
    ///
    /// ```
    /// use toolwright::import::mcp::{RemoteTools, StdioUpstream};
    ///
    /// // A server whose answers are small: anything larger is a fault.
    /// let upstream = StdioUpstream::new("git", "mcp-server-git", ["--repository", "."])
    ///     .tools(RemoteTools::only(["git_status"]))
    ///     .max_response(256 * 1024);
    /// # let _ = upstream;
    /// ```
    pub fn max_response(mut self, bytes: usize) -> Self {
        self.max_response = bytes.min(RMCP_MAX_LINE - 1);
        self
    }

    /// At most `calls` calls of its tools in flight at once (at least 1);
    /// the others wait their turn, first come first served, and the wait
    /// counts toward their timeout. By default, no cap.
    pub fn max_concurrent(mut self, calls: usize) -> Self {
        self.max_concurrent = Some(calls);
        self
    }

    /// The definitions accepted at an earlier import: a tool whose
    /// definition differs from its pin is not called
    /// ([`Imported::changed`]). Without pins, every tool is pinned as first
    /// seen ([`Imported::pins`], to keep for the next import).
    ///
    /// ```
    /// use toolwright::import::mcp::{Pins, RemoteTools, StdioUpstream};
    ///
    /// # fn kept() -> String { "{}".into() }
    /// let pins: Pins = serde_json::from_str(&kept()).unwrap();
    /// let upstream = StdioUpstream::new("git", "mcp-server-git", ["--repository", "."])
    ///     .tools(RemoteTools::only(["git_status"]))
    ///     .pins(pins);
    /// # let _ = upstream;
    /// ```
    pub fn pins(mut self, pins: Pins) -> Self {
        self.pins = pins;
        self
    }

    /// Called with the pins each time they change after the import, to
    /// keep them where the next import reads them: a person accepted a
    /// changed definition (through the import's `accept_definition`
    /// tool), or a tool first offered after the import was pinned.
    ///
    /// ```
    /// use toolwright::import::mcp::{RemoteTools, StdioUpstream};
    ///
    /// let upstream = StdioUpstream::new("git", "mcp-server-git", ["--repository", "."])
    ///     .tools(RemoteTools::only(["git_status"]))
    ///     .on_pinned(|pins| {
    ///         let _ = std::fs::write("git-pins.json", serde_json::to_string(pins).unwrap());
    ///     });
    /// # let _ = upstream;
    /// ```
    pub fn on_pinned(mut self, keep: impl Fn(&Pins) + Send + Sync + 'static) -> Self {
        self.keep = Some(KeepPins(Arc::new(keep)));
        self
    }

    /// Answers the server's sampling requests (`sampling/createMessage`:
    /// the server asks for a completion of this side's model) with
    /// `answer`, and says so at the handshake. Without it the capability
    /// is not announced, and a request is refused as an unknown method:
    /// nobody's model runs for an upstream unless the application says so.
    ///
    /// The server asks while one of its tools runs, for whichever call;
    /// `answer` decides alone, for every caller (it may refuse with an
    /// error), and what it answers goes to the server only.
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// use rmcp::model::{CreateMessageResult, SamplingMessage};
    /// use toolwright::import::mcp::{RemoteTools, StdioUpstream};
    ///
    /// let upstream = StdioUpstream::new("research", "research-mcp", ["--stdio"])
    ///     .tools(RemoteTools::only(["summarize"]))
    ///     .sampling(|request| async move {
    ///         // Ask the application's own model here; this one only counts.
    ///         let asked = request.messages.len();
    ///         let text = format!("{asked} messages read");
    ///         Ok(CreateMessageResult::new(SamplingMessage::assistant_text(text), "local".into()))
    ///     });
    /// # let _ = upstream;
    /// ```
    #[allow(deprecated)]
    pub fn sampling<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorData>> + Send + 'static,
    {
        self.answers.sampling = Some(Arc::new(move |request| Box::pin(answer(request))));
        self
    }

    /// Answers the server's elicitation requests (`elicitation/create`:
    /// the server asks a person for input) with `answer`, and says so at
    /// the handshake (form mode). Without it the capability is not
    /// announced, and a request is declined.
    ///
    /// As for [`sampling`](Self::sampling), the server asks while one of
    /// its tools runs, and `answer` decides for every caller.
    ///
    /// ```
    /// use rmcp::model::{ElicitResult, ElicitationAction};
    /// use toolwright::import::mcp::{RemoteTools, StdioUpstream};
    ///
    /// let upstream = StdioUpstream::new("tickets", "tickets-mcp", ["--stdio"])
    ///     .tools(RemoteTools::only(["open_ticket"]))
    ///     // Nobody is at hand to answer: say so, rather than guess.
    ///     .elicitation(|_request| async { Ok(ElicitResult::new(ElicitationAction::Cancel)) });
    /// # let _ = upstream;
    /// ```
    pub fn elicitation<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorData>> + Send + 'static,
    {
        self.answers.elicitation = Some(Arc::new(move |request| Box::pin(answer(request))));
        self
    }

    /// What a session of this upstream shares with its tools, its answers
    /// to the server's requests in it.
    pub(super) fn hub(&self) -> Arc<Hub> {
        Arc::new(Hub::new(self.answers.clone()))
    }

    /// How the connection in `reach` was reached.
    #[cfg(feature = "import-mcp-http")]
    pub(super) fn reach(&self) -> &T {
        &self.reach
    }

    /// Fails unless the namespace is dot-separated lowercase segments.
    pub(super) fn check_namespace(&self) -> Result<(), ImportError> {
        match is_valid_key(&self.namespace) {
            true => Ok(()),
            false => Err(ImportError::InvalidNamespace {
                namespace: self.namespace.clone(),
            }),
        }
    }

    /// Lists the tools of the upstream `session` is connected to (named
    /// `upstream` in errors; `start` replaces it once lost) and builds one
    /// dynamic tool for each one served.
    pub(super) async fn import(
        &self,
        session: Session,
        start: Start,
        upstream: &str,
        signal: Arc<Hub>,
    ) -> Result<Imported, ImportError>
    where
        T: Clone + Send + Sync + 'static,
    {
        let listed = session
            .list_all_tools()
            .await
            .map_err(|e| ImportError::List {
                upstream: upstream.to_owned(),
                reason: e.to_string(),
            })?;
        if let RemoteTools::Only(names) = &self.settings.tools
            && let Some(missing) = names.iter().find(|n| !listed.iter().any(|t| t.name == **n))
        {
            return Err(ImportError::NotOffered {
                name: missing.clone(),
            });
        }
        let connection = Connection::new(session, start, self.max_concurrent, signal.clone());
        self.imported(listed, Arc::new(connection), signal)
    }

    /// One dynamic tool per remote tool served, each calling through
    /// `connection`; a refresh, woken by `signal`, keeps them in step.
    fn imported(
        &self,
        listed: Vec<Tool>,
        connection: Arc<Connection>,
        signal: Arc<Hub>,
    ) -> Result<Imported, ImportError>
    where
        T: Clone + Send + Sync + 'static,
    {
        let mut skipped = Vec::new();
        let (mut pins, mut changed) = (self.pins.clone(), Vec::new());
        let (mut malformed, mut off) = (Vec::new(), Vec::new());
        let mut taken: HashMap<String, String> = HashMap::new();
        let (mut served, mut refusals) = (HashMap::new(), HashMap::new());
        let mut built = Vec::new();
        // The tool a person accepts a changed definition with, if served.
        let accept = self
            .settings
            .approves()
            .then(|| qualified(&self.namespace, ACCEPT));
        let accept = accept.and_then(Result::ok).map(|(_, name)| name);
        for remote in &listed {
            if !self.settings.tools.allows(&remote.name) {
                tracing::info!(upstream = %self.namespace, tool = %remote.name, "{NOT_LISTED}");
                skipped.push(skip(remote, NOT_LISTED.to_owned()));
                continue;
            }
            let (key, name) = match qualified(&self.namespace, &remote.name) {
                Ok(qualified) => qualified,
                Err(reason) => {
                    skipped.push(skip(remote, reason));
                    continue;
                }
            };
            for qualified in [&key, &name] {
                if let Some(first) = taken.insert(qualified.clone(), remote.name.to_string()) {
                    return Err(ImportError::Collision {
                        first,
                        second: remote.name.to_string(),
                        qualified: qualified.clone(),
                    });
                }
            }
            let unservable = self
                .settings
                .unservable(Some(&remote.name), Effect::Destructive);
            if let Some(reason) = unservable {
                skipped.push(skip(remote, reason));
                continue;
            }
            let change = pins.check(remote, &key);
            let (schema, problem) = checked_schema(remote);
            // Served switched off, with the reason, and refusing calls.
            let refused = match (&change, &problem) {
                (Some(change), _) => Some((
                    live::changed_reason(change, accept.as_deref()),
                    live::changed(&remote.name),
                )),
                (None, Some(reason)) => {
                    let reason = reason.clone();
                    malformed.push(skip(remote, reason.clone()));
                    let refusal = format!("`{}` is not called: {reason}", remote.name);
                    Some((Reason::new(reason), refusal))
                }
                (None, None) => None,
            };
            built.push((remote, key.clone(), name, schema));
            if let Some((reason, refusal)) = refused {
                refusals.insert(remote.name.to_string(), refusal);
                off.push((key.clone(), reason));
            }
            served.insert(remote.name.to_string(), key);
            changed.extend(change);
        }
        let keep = self.keep.clone();
        let known = listed.iter().map(|t| t.name.to_string()).collect();
        let grow: Grow = {
            let (upstream, connection) = (self.clone(), connection.clone());
            Arc::new(move |remote: &Tool, live: &Arc<Live>| {
                upstream.later(remote, &connection, live)
            })
        };
        let live = Live::new(
            served,
            known,
            grow,
            pins.clone(),
            refusals,
            &changed,
            accept,
            keep,
            signal.clone(),
        );
        let live = Arc::new(live);
        let mut tools = Vec::new();
        if self.settings.approves() {
            match self.acceptance(&live) {
                Ok(accept) => {
                    for qualified in [accept.key(), accept.name()] {
                        if let Some(first) = taken.insert(qualified.to_owned(), ACCEPT.to_owned()) {
                            return Err(ImportError::Collision {
                                first,
                                second: ACCEPT.to_owned(),
                                qualified: qualified.to_owned(),
                            });
                        }
                    }
                    tools.push(accept);
                }
                Err(reason) => skipped.push(Skipped {
                    name: ACCEPT.to_owned(),
                    reason,
                }),
            }
        }
        for (remote, key, name, schema) in built {
            match self.tool(remote, key.clone(), name, schema, &connection, &live) {
                Ok(tool) => tools.push(tool),
                Err(reason) => {
                    skipped.push(skip(remote, reason));
                    changed.retain(|c| c.key != key);
                    off.retain(|(k, _)| *k != key);
                }
            }
        }
        live::spawn(Arc::downgrade(&live), Arc::downgrade(&connection), signal);
        Ok(Imported {
            tools,
            skipped,
            malformed,
            pins,
            changed,
            off,
            live,
        })
    }

    /// The tool that accepts the changed definition of one of the served
    /// tools: a write, so approved as the import's writes are.
    fn acceptance(&self, live: &Arc<Live>) -> Result<DynamicTool, String> {
        let (key, name) = qualified(&self.namespace, ACCEPT)?;
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "tool": {"type": "string",
                         "description": "The remote name of the changed tool."},
                "digest": {"type": "string", "pattern": "^[0-9a-f]{64}$",
                           "description": "The digest of its new definition, as the change reports it."},
            },
            "required": ["tool", "digest"],
            "additionalProperties": false,
        });
        let description = format!(
            "Accept the new definition of a tool of `{}` that changed since it was pinned, \
             so that it is served again. For operators: a person approves it.",
            self.namespace
        );
        let builder = DynamicTool::builder(key, name)
            .description(description)
            .tags(["pins"])
            .input_schema(schema);
        // Always a write, whatever is decided for a remote tool of its name.
        let builder = self.settings.apply(builder, None, Effect::Write)?;
        let live = live.clone();
        builder
            .handler(move |call| {
                let live = live.clone();
                Box::pin(async move {
                    let arguments = call.arguments();
                    let text =
                        |field: &str| arguments[field].as_str().unwrap_or_default().to_owned();
                    Ok(Value::String(live.accept(&text("tool"), &text("digest"))?))
                })
            })
            .build()
            .map_err(|e| e.to_string())
    }

    /// The local tool for `remote`, first offered after the import, under
    /// the import's rules: `None` when the remote tools to serve do not
    /// name it.
    fn later(
        &self,
        remote: &Tool,
        connection: &Arc<Connection>,
        live: &Arc<Live>,
    ) -> Option<Result<Grown, String>> {
        if !self.settings.tools.allows(&remote.name) {
            // Perhaps a served tool renamed: worth a look, unlike those left out at import.
            tracing::warn!(upstream = %self.namespace, tool = %remote.name,
                "a tool first offered after the import is not served: {NOT_LISTED}");
            return None;
        }
        let unservable = self
            .settings
            .unservable(Some(&remote.name), Effect::Destructive);
        if let Some(reason) = unservable {
            return Some(Err(reason));
        }
        let grown = qualified(&self.namespace, &remote.name).and_then(|(key, name)| {
            let (schema, problem) = checked_schema(remote);
            let tool = self.tool(remote, key, name, schema, connection, live)?;
            Ok(Grown { tool, problem })
        });
        Some(grown)
    }

    /// The local tool for `remote`, taking `schema`, or why it cannot be
    /// built. It refuses every call while `live` says so.
    fn tool(
        &self,
        remote: &Tool,
        key: String,
        name: String,
        schema: Value,
        connection: &Arc<Connection>,
        live: &Arc<Live>,
    ) -> Result<DynamicTool, String> {
        let mut builder = DynamicTool::builder(key, name)
            .description(mapping::description(remote, &self.namespace))
            .input_schema(schema);
        if let Some(title) = &remote.title {
            builder = builder.title(title.clone());
        }
        // The remote output schema, when it has one (its results are then
        // the structured content it describes); else text or blocks.
        builder = builder.output_schema(match &remote.output_schema {
            Some(schema) => Value::Object(schema.as_ref().clone()),
            None => mapping::result_schema(),
        });
        let builder = self
            .settings
            .apply(builder, Some(&remote.name), Effect::Destructive)?;
        let (connection, live) = (connection.clone(), live.clone());
        let remote_name = remote.name.to_string();
        builder
            .handler(move |call| {
                let (connection, remote_name) = (connection.clone(), remote_name.clone());
                let live = live.clone();
                Box::pin(async move {
                    if let Some(refusal) = live.refusal(&remote_name) {
                        return Err(refusal.into());
                    }
                    forward(&connection, remote_name, call.into_arguments()).await
                })
            })
            .build()
            .map_err(|e| e.to_string())
    }
}

/// The input schema of `remote`, and why it is rejected if it is: then a
/// stand-in that takes any object, for a tool served switched off.
fn checked_schema(remote: &Tool) -> (Value, Option<String>) {
    let schema = Value::Object(remote.input_schema.as_ref().clone());
    match input_schema_problem(&schema) {
        None => (schema, None),
        Some(problem) => {
            let reason = format!("input schema rejected: {problem}");
            (serde_json::json!({"type": "object"}), Some(reason))
        }
    }
}

/// Why a tool the server offers is not served when the import does not name it.
const NOT_LISTED: &str = "not named by the import's `RemoteTools::only`";

/// The remote name of the tool that accepts changed definitions.
const ACCEPT: &str = "accept_definition";

/// Calls `remote_name` on the upstream with `arguments`.
async fn forward(
    connection: &Connection,
    remote_name: String,
    arguments: Value,
) -> Result<Value, BoxError> {
    let mut params = CallToolRequestParams::new(remote_name);
    params.arguments = match arguments {
        Value::Object(map) => Some(map),
        Value::Null => None,
        other => return Err(format!("the arguments are not an object: {other}").into()),
    };
    let _turn = connection.turn().await;
    let session = connection.session().await?;
    #[cfg(feature = "mcp")]
    if let Some(call) = crate::mcp::McpCall::current().filter(|c| c.progress_token().is_some()) {
        return relayed(&session, connection.hub(), params, call).await;
    }
    let result = session.call_tool(params).await?;
    mapping::result(result)
}

/// Calls the upstream for an MCP client here that asked for progress: the
/// server's progress on the call goes to that client. Given up before it
/// ends (dropped), the call is cancelled upstream, as `call_tool` does.
#[cfg(feature = "mcp")]
async fn relayed(
    session: &Session,
    hub: &Arc<Hub>,
    params: CallToolRequestParams,
    call: crate::mcp::McpCall,
) -> Result<Value, BoxError> {
    use rmcp::model::{CallToolRequest, ClientRequest, ServerResult};
    use rmcp::service::PeerRequestOptions;

    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = session
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await?;
    let _relayed = hub.relay(handle.progress_token.clone(), call);
    let mut pending = Pending(Some((handle.peer.clone(), handle.id.clone())));
    let response = handle.await_response().await;
    pending.0 = None;
    match response? {
        ServerResult::CallToolResult(result) => mapping::result(result),
        _ => Err("the server answered `tools/call` with something else".into()),
    }
}

/// A call sent upstream and not answered yet: dropped, it is cancelled
/// there.
#[cfg(feature = "mcp")]
struct Pending(Option<(rmcp::service::Peer<RoleClient>, rmcp::model::RequestId)>);

#[cfg(feature = "mcp")]
impl Drop for Pending {
    fn drop(&mut self) {
        if let Some((peer, id)) = self.0.take() {
            let reason = Some("the call was given up".to_owned());
            let cancelled = rmcp::model::CancelledNotificationParam::new(Some(id), reason);
            tokio::spawn(async move { peer.notify_cancelled(cancelled).await });
        }
    }
}

/// What the server writes to stderr, as DEBUG events of its namespace, a
/// few KiB at a time (a line of any length cannot grow a buffer), until it
/// closes it.
async fn log_stderr(mut stderr: tokio::process::ChildStderr, namespace: String) {
    use tokio::io::AsyncReadExt as _;
    let mut chunk = vec![0; 4096];
    while let Ok(read @ 1..) = stderr.read(&mut chunk).await {
        let text = String::from_utf8_lossy(&chunk[..read]);
        tracing::debug!(upstream = %namespace, "{}", text.trim_end());
    }
}

fn skip(remote: &Tool, reason: String) -> Skipped {
    Skipped {
        name: remote.name.to_string(),
        reason,
    }
}

/// The tools imported from one upstream, ready to register, and the
/// remote tools left out. The server runs until the last of its tools is
/// dropped.
#[derive(Debug)]
pub struct Imported {
    tools: Vec<DynamicTool>,
    skipped: Vec<Skipped>,
    malformed: Vec<Skipped>,
    pins: Pins,
    changed: Vec<Changed>,
    /// The keys of the tools registered switched off, and why.
    off: Vec<(String, Reason)>,
    live: Arc<Live>,
}

impl Imported {
    /// The tools, in the server's order.
    pub fn tools(&self) -> &[DynamicTool] {
        &self.tools
    }

    /// The remote tools not served, and why: those
    /// [`RemoteTools::only`] does not name, and the allowed ones that
    /// could not be.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// The tools whose input schema no validator compiles: registered
    /// switched off with the reason (`input schema rejected: ...`), and
    /// refusing every call, so that the others still load.
    pub fn malformed(&self) -> &[Skipped] {
        &self.malformed
    }

    /// The pins to keep for the next import: those given, and the tools
    /// first seen now. A changed tool keeps its old pin until
    /// [accepted](Pins::accept).
    pub fn pins(&self) -> &Pins {
        &self.pins
    }

    /// The tools whose definition is not the one pinned. Each refuses
    /// every call; [`register`](Self::register) switches them off.
    pub fn changed(&self) -> &[Changed] {
        &self.changed
    }

    /// The tools, to register
    /// ([`Registry::register_all`]); prefer
    /// [`register`](Self::register), which shows a changed tool switched off.
    pub fn into_tools(self) -> Vec<DynamicTool> {
        self.tools
    }

    /// Registers the tools in `registry` as one generation, each changed
    /// one switched off with the reason `definition changed`, and each
    /// [malformed](Self::malformed) one with its own.
    pub fn register(self, registry: &Registry) -> Result<Change, RegistryError> {
        self.live.attach(registry);
        registry.register_all_off(self.tools, self.off)
    }
}
