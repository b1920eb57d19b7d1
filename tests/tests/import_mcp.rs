//! Another MCP server's tools imported into the registry: the reference
//! server `@modelcontextprotocol/server-everything` (npm, pinned in
//! `tests/upstreams/package-lock.json`, installed under the target
//! directory on the first run), started over stdio and over Streamable
//! HTTP behind allowlists, its tools pinned; `server-filesystem` (npm, the
//! same lock) and `mcp-server-git` (PyPI, pinned in
//! `tests/python/git-requirements.txt`), whose writes wait for approval;
//! and `fault-upstream` (this crate's binary) for a server that hangs,
//! dies mid-call, cannot be started for a while, answers too much, serves
//! a malformed schema or changes a definition mid-session.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::json;
use toolwright::admin::{Admin, Operator};
use toolwright::approval::Approvals;
use toolwright::approval::{MemoryLedger, Status};
use toolwright::audit::{AuditError, AuditRecord, AuditTrail};
use toolwright::executor::BoxFuture;
use toolwright::import::mcp::{
    Allowlist, HttpUpstream, ImportError, Imported, Pins, RemoteTools, Skipped, StdioUpstream,
};
use toolwright::observe::{Event, ExecutionLog, OutcomeClass};
use toolwright::providers::ToolCall;
use toolwright::registry::{ChangeKind, Registry, Selector};
use toolwright::{CallError, Catalog, Container, Effect, Executor, Principal};

mod installs;

/// `node` and the server's script, or `None` after a one-line message
/// when npm cannot install it here. On CI (`CI=true`) that fails instead.
fn everything_or_skip(test: &str) -> Option<(String, Vec<String>)> {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("upstreams");
    match installs::npm_ci(&source, "node-upstreams", &[]) {
        Ok(dir) => {
            let script =
                dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
            Some((
                "node".to_owned(),
                vec![script.display().to_string(), "stdio".to_owned()],
            ))
        }
        Err(why) if !installs::must_run() => {
            eprintln!("skipped {test}: server-everything is unavailable ({why})");
            None
        }
        Err(why) => panic!("{why}"),
    }
}

struct User(&'static str);

impl Principal for User {
    fn id(&self) -> &str {
        self.0
    }
}

/// An executor over `imported`'s tools, registered as `register` does,
/// with an in-memory approval ledger.
fn served(imported: Imported) -> (Executor, Approvals) {
    let registry = Registry::new(Catalog::empty());
    imported.register(&registry).unwrap();
    let approvals = Approvals::new(MemoryLedger::new());
    let executor = Executor::builder(registry, Container::default())
        .approvals(approvals.clone())
        .build()
        .unwrap();
    (executor, approvals)
}

/// `executor` served as the gateway serves it (`mcp_calls`: a call's body,
/// the import's here, reaches its MCP request), over an in-memory pipe:
/// the client's end.
fn gateway_pipe(executor: Executor) -> tokio::io::DuplexStream {
    use rmcp::ServiceExt as _;
    let server = toolwright::mcp::McpServer::<()>::builder(executor, "gateway", "0")
        .mcp_calls()
        .build();
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.handler(());
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client_io
}

fn allowing(program: &str, args: &[String]) -> Allowlist {
    Allowlist::new().command(program, args).env(["PATH"])
}

/// Why a tool the server offers is not served when the import does not name it.
const NOT_NAMED: &str = "not named by the import's `RemoteTools::only`";

/// The tools the import named but could not serve, and why.
fn unserved(imported: &Imported) -> Vec<&Skipped> {
    let skipped = imported.skipped().iter();
    skipped.filter(|s| s.reason != NOT_NAMED).collect()
}

/// The WARN events toolwright gave the process's subscriber so far, one
/// line each, installed by the first call: the tests share the process.
fn warnings() -> String {
    use std::fmt::Write as _;
    use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};

    static WARNINGS: Mutex<String> = Mutex::new(String::new());
    static INSTALLED: OnceLock<()> = OnceLock::new();
    struct Fields<'a>(&'a mut String);
    impl tracing::field::Visit for Fields<'_> {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
    struct Warnings;
    impl<S: tracing::Subscriber> Layer<S> for Warnings {
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            let metadata = event.metadata();
            if *metadata.level() == tracing::Level::WARN
                && metadata.target().starts_with("toolwright")
            {
                let mut text = WARNINGS.lock().unwrap_or_else(PoisonError::into_inner);
                event.record(&mut Fields(&mut text));
                text.push('\n');
            }
        }
    }
    INSTALLED.get_or_init(|| {
        let subscriber = tracing_subscriber::registry().with(Warnings);
        tracing::subscriber::set_global_default(subscriber).unwrap();
    });
    WARNINGS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

#[tokio::test]
async fn a_command_or_variable_not_on_the_allowlist_is_refused_naming_it() {
    let upstream = StdioUpstream::new("up", "some-server", ["--serve"]).tools(RemoteTools::all());
    let refused = upstream
        .clone()
        .connect(&Allowlist::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, ImportError::CommandNotAllowed { program, .. } if program == "some-server")
    );
    assert!(refused.to_string().contains("`some-server`"), "{refused}");

    // The same program with other arguments is another command.
    let other_args = Allowlist::new().command("some-server", ["--serve", "--all"]);
    let refused = upstream.clone().connect(&other_args).await.unwrap_err();
    assert!(matches!(refused, ImportError::CommandNotAllowed { .. }));

    let listed = Allowlist::new().command("some-server", ["--serve"]);
    let refused = upstream
        .env(["AWS_SECRET_ACCESS_KEY"])
        .connect(&listed)
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the environment variable `AWS_SECRET_ACCESS_KEY` is not on the import allowlist"
    );

    let refused = StdioUpstream::new("Up!", "some-server", ["--serve"])
        .connect(&listed)
        .await
        .unwrap_err();
    assert!(matches!(refused, ImportError::InvalidNamespace { .. }));
}

#[tokio::test]
async fn the_allowed_tools_of_a_real_server_are_served_qualified_and_called() {
    let test = "the_allowed_tools_of_a_real_server_are_served_qualified_and_called";
    let Some((node, args)) = everything_or_skip(test) else {
        return;
    };
    let imported = StdioUpstream::new("everything", &node, args.clone())
        .env(["PATH"])
        .tools(RemoteTools::only([
            "echo",
            "get-sum",
            "get-env",
            "toggle-simulated-logging",
        ]))
        .effect("echo", Effect::Read)
        .effect("get-sum", Effect::Read)
        .effect("get-env", Effect::Read)
        .approvals::<User>()
        .connect(&allowing(&node, &args))
        .await
        .unwrap();
    assert!(unserved(&imported).is_empty(), "{:?}", imported.skipped());
    let registry = Registry::new(Catalog::empty());
    registry.register_all(imported.into_tools()).unwrap();

    // Qualified, sorted by key; only the allowed ones.
    let tools = registry.tools();
    let listed: Vec<_> = tools
        .iter()
        .map(|t| (t.key(), t.name(), t.effect()))
        .collect();
    assert_eq!(
        listed,
        [
            // The import's own: accepting a changed definition, approved.
            (
                "everything.accept_definition",
                "everything_accept_definition",
                Effect::Write
            ),
            ("everything.echo", "everything_echo", Effect::Read),
            ("everything.get_env", "everything_get-env", Effect::Read),
            ("everything.get_sum", "everything_get-sum", Effect::Read),
            // No local decision: destructive, whatever its annotations say.
            (
                "everything.toggle_simulated_logging",
                "everything_toggle-simulated-logging",
                Effect::Destructive
            ),
        ]
    );

    let approvals = Approvals::new(MemoryLedger::new());
    let executor = Executor::builder(registry, Container::default())
        .approvals(approvals.clone())
        .build()
        .unwrap();
    let ann = User("ann");
    let call =
        |name: &'static str, arguments: serde_json::Value| executor.invoke(name, arguments, &ann);

    let echoed = call("everything_echo", json!({"message": "hi"})).await;
    assert_eq!(echoed.unwrap(), json!("Echo: hi"));
    let sum = call("everything_get-sum", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum.unwrap(), json!("The sum of 2 and 3 is 5."));

    // Checked here against the remote schema: nothing is sent.
    let invalid = call("everything_get-sum", json!({"a": "two", "b": 3})).await;
    assert!(
        matches!(invalid, Err(CallError::InvalidArguments { .. })),
        "{invalid:?}"
    );

    // A tool the allowlist leaves out is not there at all.
    let unknown = call("everything_get-tiny-image", json!({})).await;
    assert!(
        matches!(unknown, Err(CallError::UnknownTool { .. })),
        "{unknown:?}"
    );

    // The server sees the variables allowed, and none of this process's others.
    let env = call("everything_get-env", json!({})).await.unwrap();
    let env = env.as_str().unwrap();
    assert!(env.contains("\"PATH\""), "{env}");
    assert!(!env.contains("CARGO_MANIFEST_DIR"), "{env}");

    // Destructive: it waits for another person, then runs once.
    let toggle = "everything_toggle-simulated-logging";
    let asked = call(toggle, json!({})).await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("{asked:?}")
    };
    approvals
        .approve(request.id.unwrap(), &User("bob"), "fine")
        .await
        .unwrap();
    let toggled = call(toggle, json!({})).await.unwrap();
    assert!(toggled.as_str().unwrap().contains("logging"), "{toggled}");
    let again = call(toggle, json!({})).await;
    assert!(
        matches!(again, Err(CallError::ApprovalRequired(_))),
        "{again:?}"
    );
}

/// An MCP client that counts the progress notifications it hears.
struct CountsProgress(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl rmcp::ClientHandler for CountsProgress {
    async fn on_progress(
        &self,
        _params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test]
async fn the_upstreams_progress_on_a_call_reaches_the_mcp_client_that_made_it() {
    use rmcp::ServiceExt as _;

    let test = "the_upstreams_progress_on_a_call_reaches_the_mcp_client_that_made_it";
    let Some((node, args)) = everything_or_skip(test) else {
        return;
    };
    let imported = StdioUpstream::new("everything", &node, args.clone())
        .env(["PATH"])
        .tools(RemoteTools::only(["trigger-long-running-operation"]))
        .effect("trigger-long-running-operation", Effect::Read)
        .connect(&allowing(&node, &args))
        .await
        .unwrap();
    let (executor, _) = served(imported);
    let client_io = gateway_pipe(executor);
    let heard = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let client = CountsProgress(heard.clone())
        .serve(client_io)
        .await
        .unwrap();
    // rmcp's client sends a progress token with every request.
    let arguments = json!({"duration": 0.3, "steps": 3});
    let params =
        rmcp::model::CallToolRequestParams::new("everything_trigger-long-running-operation")
            .with_arguments(arguments.as_object().unwrap().clone());
    let result = client.call_tool(params).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    // Relayed as they come; the last may trail the result.
    let count = || heard.load(std::sync::atomic::Ordering::SeqCst);
    for _ in 0..100 {
        if count() >= 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(count(), 3, "one notification per step reached the client");
}

#[tokio::test]
async fn the_filesystem_servers_writes_wait_for_approval_and_run_once_approved() {
    let test = "the_filesystem_servers_writes_wait_for_approval_and_run_once_approved";
    let Some((node, args)) = everything_or_skip(test) else {
        return;
    };
    let script = args[0].replace("server-everything", "server-filesystem");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args = vec![script, dir.display().to_string()];
    let imported = StdioUpstream::new("fs", &node, args.clone())
        .env(["PATH"])
        .tools(RemoteTools::only([
            "read_text_file",
            "write_file",
            "move_file",
        ]))
        .effect("read_text_file", Effect::Read)
        .approvals::<User>()
        .connect(&allowing(&node, &args))
        .await
        .unwrap();
    let registry = Registry::new(Catalog::empty());
    imported.register(&registry).unwrap();
    let tools = registry.tools();
    let effects: Vec<_> = tools.iter().map(|t| (t.name(), t.effect())).collect();
    assert_eq!(
        effects,
        [
            ("fs_accept_definition", Effect::Write),
            ("fs_move_file", Effect::Destructive),
            ("fs_read_text_file", Effect::Read),
            ("fs_write_file", Effect::Destructive),
        ]
    );
    let approvals = Approvals::new(MemoryLedger::new());
    let executor = Executor::builder(registry, Container::default())
        .approvals(approvals.clone())
        .build()
        .unwrap();
    let (ann, bob) = (User("ann"), User("bob"));
    let note = dir.join("note.txt").display().to_string();
    let write = json!({"path": note, "content": "hello"});

    // Nothing is written until another person approves; then once.
    let asked = executor.invoke("fs_write_file", write.clone(), &ann).await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("{asked:?}")
    };
    assert!(!dir.join("note.txt").exists(), "written before approval");
    let id = request.id.unwrap();
    let own = approvals.approve(id, &ann, "mine").await;
    assert!(own.is_err(), "a requester approved their own write");
    approvals.approve(id, &bob, "fine").await.unwrap();
    executor
        .invoke("fs_write_file", write.clone(), &ann)
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("note.txt")).unwrap(),
        "hello"
    );
    let again = executor.invoke("fs_write_file", write, &ann).await;
    assert!(
        matches!(again, Err(CallError::ApprovalRequired(_))),
        "{again:?}"
    );

    let read = executor
        .invoke("fs_read_text_file", json!({"path": note}), &ann)
        .await;
    assert!(read.unwrap().to_string().contains("hello"));
    // Outside the directory the server was given: the server refuses.
    let outside = json!({"path": "/etc/hostname"});
    let refused = executor.invoke("fs_read_text_file", outside, &ann).await;
    assert!(
        matches!(refused, Err(CallError::Tool { .. })),
        "{refused:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A virtualenv with the pinned mcp-server-git, or `None` after a one-line
/// message when PyPI cannot install it here. On CI (`CI=true`) that fails
/// instead.
fn git_server_or_skip(test: &str) -> Option<PathBuf> {
    let installed = installs::python_venv("python-git", "git-requirements.txt");
    match installed {
        Ok(python) => Some(python),
        Err(why) if !installs::must_run() => {
            eprintln!("skipped {test}: mcp-server-git is unavailable ({why})");
            None
        }
        Err(why) => panic!("{why}"),
    }
}

#[tokio::test]
// Sampling is deprecated by the 2026-07-28 protocol, yet servers of the
// earlier eras, this one included, still ask for it.
#[allow(deprecated)]
async fn the_servers_sampling_and_elicitation_are_refused_unless_the_application_answers_them() {
    use rmcp::model::{CreateMessageResult, ElicitResult, ElicitationAction, SamplingMessage};
    let test =
        "the_servers_sampling_and_elicitation_are_refused_unless_the_application_answers_them";
    let Some((node, args)) = everything_or_skip(test) else {
        return;
    };
    let (sample, elicit) = ("trigger-sampling-request", "trigger-elicitation-request");
    let upstream = StdioUpstream::new("everything", &node, args.clone())
        .env(["PATH"])
        .effect(sample, Effect::Read)
        .effect(elicit, Effect::Read);
    let allowlist = allowing(&node, &args);

    // Unasked, the import announces neither capability, and this server
    // offers no tool that would need one.
    for name in [sample, elicit] {
        let refused = upstream
            .clone()
            .tools(RemoteTools::only([name]))
            .connect(&allowlist)
            .await;
        assert!(
            matches!(&refused, Err(ImportError::NotOffered { name: n }) if n == name),
            "{refused:?}"
        );
    }

    // Answered by the application: the server's questions reach it, and
    // its answers reach the server.
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let (prompts, questions) = (asked.clone(), asked.clone());
    let imported = upstream
        .tools(RemoteTools::only([sample, elicit]))
        .sampling(move |request| {
            let text = serde_json::to_string(&request.messages).unwrap();
            prompts.lock().unwrap().push(text);
            async {
                let reply = SamplingMessage::assistant_text("a haiku from the application");
                Ok(CreateMessageResult::new(reply, "app-model".into()))
            }
        })
        .elicitation(move |request| {
            let text = serde_json::to_string(&request).unwrap();
            questions.lock().unwrap().push(text);
            async {
                let answer = json!({"name": "Ann Example", "check": true});
                Ok(ElicitResult::new(ElicitationAction::Accept).with_content(answer))
            }
        })
        .connect(&allowlist)
        .await
        .unwrap();
    let (executor, _) = served(imported);
    let ann = User("ann");
    let sampled = executor
        .invoke(
            "everything_trigger-sampling-request",
            json!({"prompt": "write a haiku"}),
            &ann,
        )
        .await
        .unwrap()
        .to_string();
    assert!(
        sampled.contains("a haiku from the application"),
        "{sampled}"
    );
    assert!(sampled.contains("app-model"), "{sampled}");
    let elicited = executor
        .invoke("everything_trigger-elicitation-request", json!({}), &ann)
        .await
        .unwrap()
        .to_string();
    assert!(elicited.contains("Name: Ann Example"), "{elicited}");
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked[0].contains("write a haiku"), "{asked:?}");
    assert!(asked[1].contains("Your full, legal name"), "{asked:?}");
}

#[tokio::test]
async fn a_python_servers_tools_are_served_and_its_writes_wait_for_approval() {
    let test = "a_python_servers_tools_are_served_and_its_writes_wait_for_approval";
    let Some(python) = git_server_or_skip(test) else {
        return;
    };
    let repo =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("git-{}", std::process::id()));
    std::fs::create_dir_all(&repo).unwrap();
    installs::run(
        std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&repo),
    )
    .unwrap();
    std::fs::write(repo.join("a.txt"), "a").unwrap();
    let python = python.display().to_string();
    let args = ["-m", "mcp_server_git", "--repository"].map(str::to_owned);
    let args = [&args[..], &[repo.display().to_string()]].concat();
    let imported = StdioUpstream::new("git", &python, args.clone())
        .env(["PATH"])
        .tools(RemoteTools::only(["git_status", "git_add"]))
        .effect("git_status", Effect::Read)
        .effect("git_add", Effect::Write)
        .approvals::<User>()
        .connect(&allowing(&python, &args))
        .await
        .unwrap();
    let (executor, approvals) = served(imported);
    let ann = User("ann");
    let at = json!({"repo_path": repo.display().to_string()});
    let status = || executor.invoke("git_git_status", at.clone(), &ann);
    let before = status().await.unwrap().to_string();
    assert!(before.contains("Untracked files"), "{before}");

    let add = json!({"repo_path": repo.display().to_string(), "files": ["a.txt"]});
    let asked = executor.invoke("git_git_add", add.clone(), &ann).await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("{asked:?}")
    };
    assert_eq!(
        status().await.unwrap().to_string(),
        before,
        "added before approval"
    );
    approvals
        .approve(request.id.unwrap(), &User("bob"), "fine")
        .await
        .unwrap();
    executor.invoke("git_git_add", add, &ann).await.unwrap();
    let after = status().await.unwrap().to_string();
    assert!(after.contains("Changes to be committed"), "{after}");
    std::fs::remove_dir_all(&repo).unwrap();
}

#[tokio::test]
async fn without_approvals_a_tool_that_changes_something_is_left_out_saying_why() {
    let test = "without_approvals_a_tool_that_changes_something_is_left_out_saying_why";
    let Some((node, args)) = everything_or_skip(test) else {
        return;
    };
    let imported = StdioUpstream::new("everything", &node, args.clone())
        .env(["PATH"])
        .tools(RemoteTools::only(["echo", "toggle-simulated-logging"]))
        .effect("echo", Effect::Read)
        .connect(&allowing(&node, &args))
        .await
        .unwrap();
    let names: Vec<_> = imported.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["everything_echo"]);
    let skipped = unserved(&imported);
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].name, "toggle-simulated-logging");
    assert_eq!(
        skipped[0].reason,
        "it is `destructive` and the import has no approvals (`approvals::<C>()`)"
    );
}

#[tokio::test]
async fn a_tool_named_that_the_server_does_not_offer_fails_the_import() {
    let test = "a_tool_named_that_the_server_does_not_offer_fails_the_import";
    let Some((node, args)) = everything_or_skip(test) else {
        return;
    };
    let refused = StdioUpstream::new("everything", &node, args.clone())
        .env(["PATH"])
        .tools(RemoteTools::only(["echo", "delete-everything"]))
        .connect(&allowing(&node, &args))
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the upstream offers no tool named `delete-everything`"
    );
}

#[tokio::test]
async fn a_changed_definition_is_accepted_through_the_ledger_by_four_eyes_and_served_again() {
    let test = "a_changed_definition_is_accepted_through_the_ledger_by_four_eyes_and_served_again";
    let Some((node, args)) = everything_or_skip(test) else {
        return;
    };
    let upstream = StdioUpstream::new("everything", &node, args.clone())
        .env(["PATH"])
        .tools(RemoteTools::only(["echo", "get-sum"]))
        .effect("echo", Effect::Read)
        .effect("get-sum", Effect::Read)
        .approvals::<User>();
    let allowlist = allowing(&node, &args);
    let first = upstream.clone().connect(&allowlist).await.unwrap();
    // Pins that accepted another definition of `echo`.
    let mut kept = serde_json::to_value(first.pins()).unwrap();
    kept["echo"] = kept["get-sum"].clone();
    let kept: Pins = serde_json::from_value(kept).unwrap();
    let saved = std::sync::Arc::new(std::sync::Mutex::new(None::<Pins>));
    let saving = saved.clone();
    let imported = upstream
        .pins(kept)
        .on_pinned(move |pins| *saving.lock().unwrap() = Some(pins.clone()))
        .connect(&allowlist)
        .await
        .unwrap();
    let found = imported.changed()[0].found;
    let (executor, approvals) = served(imported);
    let admin = Operators::serve(&executor).await;
    let (ann, bob) = (User("ann"), User("bob"));
    let accept = |digest: String| {
        let arguments = json!({"tool": "echo", "digest": digest});
        executor.invoke("everything_accept_definition", arguments, &ann)
    };

    // The admin API shows what changed beside what was accepted, and the
    // call that accepts it.
    let (status, tool) = admin.get("api/tools/everything_echo", "ann").await;
    assert_eq!(status, 200, "{tool}");
    let disabled = &tool["disabled"];
    assert_eq!(disabled["reason"], "definition changed");
    let detail = &disabled["detail"];
    assert_eq!(detail["found"], json!(found.to_string()));
    let description = &detail["difference"]["description"];
    assert!(
        description["pinned"].as_str().unwrap().contains("sum"),
        "{detail}"
    );
    assert!(
        description["found"].as_str().unwrap().contains("Echo"),
        "{detail}"
    );
    assert_eq!(
        detail["accept"],
        json!({"tool": "everything_accept_definition",
               "arguments": {"tool": "echo", "digest": found.to_string()}})
    );

    // A decision like an approval: asked, decided by another person (here
    // an operator, on the admin API), then it takes effect once.
    let asked = accept(found.to_string()).await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("{asked:?}")
    };
    let id = request.id.unwrap();
    let own = approvals.approve(id, &ann, "mine").await;
    assert!(own.is_err(), "the requester approved their own acceptance");
    let (status, refused) = admin.approve(id, "ann").await;
    assert_eq!(
        status, 403,
        "an operator approved their own request: {refused}"
    );
    let (status, decided) = admin.approve(id, "bob").await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(decided["status"], "approved");
    let accepted = accept(found.to_string()).await.unwrap();
    assert_eq!(accepted, json!("accepted: `echo` is served again"));
    assert_eq!(
        saved.lock().unwrap().as_ref().unwrap().get("echo"),
        Some(found)
    );
    assert!(
        executor
            .registry()
            .tools()
            .disabled("everything_echo")
            .is_none()
    );
    let echoed = executor.invoke("everything_echo", json!({"message": "hi"}), &ann);
    assert_eq!(echoed.await.unwrap(), json!("Echo: hi"));

    // Nothing is left to accept; an approved acceptance of a digest that is
    // not the one found changes nothing.
    let other = "0".repeat(64);
    let asked = accept(other.clone()).await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("{asked:?}")
    };
    approvals
        .approve(request.id.unwrap(), &bob, "fine")
        .await
        .unwrap();
    let Err(CallError::Tool { source, .. }) = accept(other).await else {
        panic!("accepted twice")
    };
    assert!(source.to_string().contains("has not changed"), "{source}");
    let (_, tool) = admin.get("api/tools/everything_echo", "ann").await;
    assert_eq!(tool["disabled"], json!(null));
}

/// The admin API of an executor, served on loopback, with one operator
/// per name asked for (`ann`, `bob`), each holding a token of their name.
struct Operators {
    root: String,
}

impl Operators {
    async fn serve(executor: &Executor) -> Operators {
        let token = |name: &str| format!("{name}-admin-token-0123456789");
        let admin = Admin::new(executor.clone())
            .operator(token("ann"), Operator::new("ann"))
            .operator(token("bob"), Operator::new("bob"));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let root = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, admin.router()).await });
        Operators { root }
    }

    /// `method path` as `operator`, with `If-Match` when given: the status
    /// and the JSON answer.
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        operator: &str,
        if_match: Option<&str>,
    ) -> (u16, serde_json::Value) {
        let token = format!("{operator}-admin-token-0123456789");
        let mut request = reqwest::Client::new()
            .request(method.clone(), format!("{}/{path}", self.root))
            .header("authorization", format!("Bearer {token}"));
        if method == reqwest::Method::POST {
            request = request
                .header("content-type", "application/json")
                .body("{}");
        }
        if let Some(tag) = if_match {
            request = request.header("if-match", tag);
        }
        let answer = request.send().await.unwrap();
        let status = answer.status().as_u16();
        let body = answer.bytes().await.unwrap();
        (status, serde_json::from_slice(&body).unwrap_or(json!(null)))
    }

    async fn get(&self, path: &str, operator: &str) -> (u16, serde_json::Value) {
        self.send(reqwest::Method::GET, path, operator, None).await
    }

    /// Approves the request `id` as `operator`, naming its ETag.
    async fn approve(
        &self,
        id: toolwright::approval::ApprovalId,
        operator: &str,
    ) -> (u16, serde_json::Value) {
        let (_, request) = self.get(&format!("api/approvals/{}", id.0), operator).await;
        let tag = request["etag"].as_str().unwrap().to_owned();
        let path = format!("api/approvals/{}/approve", id.0);
        self.send(reqwest::Method::POST, &path, operator, Some(&tag))
            .await
    }
}

#[tokio::test]
async fn a_tool_whose_definition_changed_since_it_was_pinned_is_switched_off_alone() {
    let test = "a_tool_whose_definition_changed_since_it_was_pinned_is_switched_off_alone";
    let Some((node, args)) = everything_or_skip(test) else {
        return;
    };
    let upstream = StdioUpstream::new("everything", &node, args.clone())
        .env(["PATH"])
        .tools(RemoteTools::only(["echo", "get-sum"]))
        .effect("echo", Effect::Read)
        .effect("get-sum", Effect::Read);
    let allowlist = allowing(&node, &args);

    // The first import pins every tool as it is; the same tools again
    // match their pins.
    let first = upstream.clone().connect(&allowlist).await.unwrap();
    assert!(first.changed().is_empty());
    assert_eq!(first.pins().len(), 2);
    let again = upstream
        .clone()
        .pins(first.pins().clone())
        .connect(&allowlist)
        .await
        .unwrap();
    assert!(again.changed().is_empty());
    assert_eq!(again.pins(), first.pins());

    // Pins that accepted another definition of `echo`: the server's is a
    // change now, and only `echo` is one.
    let mut kept = serde_json::to_value(first.pins()).unwrap();
    kept["echo"] = kept["get-sum"].clone();
    let kept: Pins = serde_json::from_value(kept).unwrap();
    let imported = upstream
        .clone()
        .pins(kept.clone())
        .connect(&allowlist)
        .await
        .unwrap();
    let changed = imported.changed().to_vec();
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert_eq!(
        (&*changed[0].name, &*changed[0].key),
        ("echo", "everything.echo")
    );
    assert_eq!(Some(changed[0].pinned), kept.get("echo"));
    assert_eq!(imported.pins(), &kept, "a changed tool keeps its old pin");

    let registry = Registry::new(Catalog::empty());
    imported.register(&registry).unwrap();
    let tools = registry.tools();
    let reason = tools.disabled("everything_echo").map(|d| d.reason.as_str());
    assert_eq!(reason, Some("definition changed"));
    assert!(tools.disabled("everything_get-sum").is_none());
    let executor = Executor::builder(registry, Container::default())
        .build()
        .unwrap();
    let ann = User("ann");
    let echo = || executor.invoke("everything_echo", json!({"message": "hi"}), &ann);
    let refused = echo().await;
    assert!(
        matches!(refused, Err(CallError::Disabled { .. })),
        "{refused:?}"
    );
    let sum = executor.invoke("everything_get-sum", json!({"a": 2, "b": 3}), &ann);
    assert_eq!(sum.await.unwrap(), json!("The sum of 2 and 3 is 5."));

    // Switched on by hand, it still refuses: only accepting it serves it.
    let by_hand = Selector::key("everything.echo");
    executor.registry().enable(&by_hand).unwrap();
    let still = echo().await;
    let Err(CallError::Tool { source, .. }) = &still else {
        panic!("{still:?}")
    };
    let told = source.to_string();
    assert!(told.contains("changed since it was pinned"), "{told}");

    // Accepted, the next import serves it.
    let mut accepted = kept;
    accepted.accept(&changed[0]);
    let next = upstream.pins(accepted).connect(&allowlist).await.unwrap();
    assert!(next.changed().is_empty());
    let registry = Registry::new(Catalog::empty());
    next.register(&registry).unwrap();
    let executor = Executor::builder(registry, Container::default())
        .build()
        .unwrap();
    let echoed = executor.invoke("everything_echo", json!({"message": "hi"}), &ann);
    assert_eq!(echoed.await.unwrap(), json!("Echo: hi"));
}

#[tokio::test]
async fn a_url_not_on_the_allowlist_or_not_https_is_refused_naming_it() {
    let upstream = |url: &str| HttpUpstream::new("up", url).tools(RemoteTools::all());
    let url = "https://mcp.example.com/mcp";
    let refused = upstream(url).connect(&Allowlist::new()).await.unwrap_err();
    assert!(matches!(&refused, ImportError::UrlNotAllowed { url: u } if u == url));
    assert_eq!(
        refused.to_string(),
        "the URL `https://mcp.example.com/mcp` is not on the import allowlist"
    );
    // Written otherwise, it is another URL.
    let listed = Allowlist::new().url(url);
    let refused = upstream("https://mcp.example.com/mcp/")
        .connect(&listed)
        .await;
    assert!(matches!(refused, Err(ImportError::UrlNotAllowed { .. })));
    // Listed, plain http is still refused off the loopback interface.
    let plain = "http://mcp.example.com/mcp";
    let refused = upstream(plain)
        .connect(&Allowlist::new().url(plain))
        .await
        .unwrap_err();
    assert!(matches!(&refused, ImportError::UrlNotSecure { url: u } if u == plain));
}

#[tokio::test]
async fn the_tools_of_a_real_server_over_streamable_http_are_served_and_called() {
    let test = "the_tools_of_a_real_server_over_streamable_http_are_served_and_called";
    let Some((node, mut args)) = everything_or_skip(test) else {
        return;
    };
    args[1] = "streamableHttp".to_owned();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .unwrap()
        .port();
    let _server = tokio::process::Command::new(&node)
        .args(&args)
        .env("PORT", port.to_string())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the server never listened"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    let url = format!("http://127.0.0.1:{port}/mcp");
    let imported = HttpUpstream::new("everything", &url)
        .tools(RemoteTools::only(["echo", "get-sum"]))
        .effect("echo", Effect::Read)
        .effect("get-sum", Effect::Read)
        .connect(&Allowlist::new().url(&url))
        .await
        .unwrap();
    assert_eq!(imported.pins().len(), 2);
    let (executor, _) = served(imported);
    let ann = User("ann");
    let echoed = executor.invoke("everything_echo", json!({"message": "hi"}), &ann);
    assert_eq!(echoed.await.unwrap(), json!("Echo: hi"));
    let sum = executor.invoke("everything_get-sum", json!({"a": 2, "b": 3}), &ann);
    assert_eq!(sum.await.unwrap(), json!("The sum of 2 and 3 is 5."));
}

/// The tools of `fault-upstream`, imported with a 2 s timeout and results
/// cut at 1,000 characters.
async fn faults() -> Executor {
    faults_with(|upstream| upstream).await
}

/// [`faults`], with `more` settings.
async fn faults_with(more: impl FnOnce(StdioUpstream) -> StdioUpstream) -> Executor {
    let program = env!("CARGO_BIN_EXE_fault-upstream");
    let upstream = StdioUpstream::new("faults", program, Vec::<String>::new())
        .tools(RemoteTools::only([
            "echo",
            "hang",
            "crash",
            "big",
            "cancelled",
        ]))
        .effect("echo", Effect::Read)
        .effect("cancelled", Effect::Read)
        .effect("hang", Effect::Read)
        .effect("crash", Effect::Read)
        .effect("big", Effect::Read)
        .timeout(std::time::Duration::from_secs(2))
        .max_result(1_000);
    let imported = more(upstream)
        .connect(&Allowlist::new().command(program, Vec::<String>::new()))
        .await
        .unwrap();
    served(imported).0
}

#[tokio::test]
async fn an_upstream_that_hangs_times_out_and_its_other_tools_still_answer() {
    let executor = faults().await;
    let ann = User("ann");
    let hung = executor.invoke("faults_hang", json!({}), &ann).await;
    assert!(matches!(hung, Err(CallError::Timeout { .. })), "{hung:?}");
    // The call given up here is cancelled there (the notification and the
    // next call travel apart: asked until it has arrived).
    let mut cancelled = json!("0");
    for _ in 0..50 {
        cancelled = executor
            .invoke("faults_cancelled", json!({}), &ann)
            .await
            .unwrap();
        if cancelled != json!("0") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(cancelled, json!("1"));
    let echoed = executor.invoke("faults_echo", json!({"message": "still here"}), &ann);
    assert_eq!(echoed.await.unwrap(), json!("Echo: still here"));
}

#[tokio::test]
async fn an_upstream_that_dies_mid_call_fails_that_call_and_the_next_one_reconnects() {
    let executor = faults().await;
    let ann = User("ann");
    let crashed = executor.invoke("faults_crash", json!({}), &ann).await;
    let Err(CallError::Tool { .. }) = &crashed else {
        panic!("{crashed:?}")
    };
    // The server is started again for the next call, which runs.
    let echoed = executor.invoke("faults_echo", json!({"message": "back"}), &ann);
    assert_eq!(echoed.await.unwrap(), json!("Echo: back"));
}

#[tokio::test]
async fn an_oversized_result_is_cut_at_the_limit() {
    let executor = faults().await;
    let call = ToolCall::new("c1", "faults_big", json!({"chars": 5_000_000}));
    let outcomes = executor.run_calls(vec![call], &User("ann")).await;
    // What a model reads is cut; the application still has the whole value.
    let text = outcomes[0].model_text();
    assert!(text.starts_with("xxxx"), "{text}");
    assert!(text.ends_with("more characters]"), "{text}");
    assert!(text.chars().count() < 1_100, "{} characters", text.len());
    let whole = outcomes[0].result.as_ref().unwrap();
    assert_eq!(whole.as_str().map(str::len), Some(5_000_000));
}

#[tokio::test]
async fn an_answer_over_max_response_is_never_held_and_fails_its_call_at_once() {
    // A timeout no call here reaches: a call waiting for an answer that
    // never comes would end there.
    let executor = faults_with(|upstream| {
        upstream
            .timeout(std::time::Duration::from_secs(600))
            .max_response(1_000_000)
    })
    .await;
    let ann = User("ann");
    // 50 MB on one line: dropped as it is read, the call told.
    let big = executor
        .invoke("faults_big", json!({"chars": 50_000_000}), &ann)
        .await;
    let Err(CallError::Tool { source, .. }) = &big else {
        panic!("{big:?}")
    };
    let told = source.to_string();
    assert!(told.contains("over the limit of 1000000 bytes"), "{told}");
    // Under the bound, as ever; the session goes on.
    let fits = executor.invoke("faults_big", json!({"chars": 900_000}), &ann);
    assert_eq!(fits.await.unwrap().as_str().map(str::len), Some(900_000));
    let echoed = executor.invoke("faults_echo", json!({"message": "after"}), &ann);
    assert_eq!(echoed.await.unwrap(), json!("Echo: after"));
}

#[tokio::test]
async fn calls_beyond_an_upstreams_cap_wait_their_turn() {
    let executor = faults_with(|upstream| upstream.max_concurrent(1)).await;
    let ann = User("ann");
    let ended = std::sync::Mutex::new(Vec::new());
    let hang = async {
        let hung = executor.invoke("faults_hang", json!({}), &ann).await;
        ended.lock().unwrap().push(("hang", hung.is_ok()));
    };
    let echo = async {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let echoed = executor.invoke("faults_echo", json!({"message": "next"}), &ann);
        let echoed = echoed.await;
        ended.lock().unwrap().push(("echo", echoed.is_ok()));
    };
    tokio::join!(hang, echo);
    // Uncapped, the echo would end first; capped at one, it waits until the
    // hung call's timeout gives its turn back, then runs.
    assert_eq!(*ended.lock().unwrap(), [("hang", false), ("echo", true)]);
}

#[tokio::test]
async fn a_tool_with_a_malformed_schema_is_registered_off_with_the_reason_and_the_others_load() {
    let program = env!("CARGO_BIN_EXE_fault-upstream");
    let imported = StdioUpstream::new("faults", program, Vec::<String>::new())
        .tools(RemoteTools::only(["echo", "malformed"]))
        .effect("echo", Effect::Read)
        .effect("malformed", Effect::Read)
        .connect(&Allowlist::new().command(program, Vec::<String>::new()))
        .await
        .unwrap();
    assert!(unserved(&imported).is_empty(), "{:?}", imported.skipped());
    let malformed = imported.malformed();
    assert_eq!(malformed.len(), 1);
    assert_eq!(malformed[0].name, "malformed");
    let reason = malformed[0].reason.clone();
    assert!(reason.starts_with("input schema rejected: "), "{reason}");

    let registry = Registry::new(Catalog::empty());
    imported.register(&registry).unwrap();
    // The malformed one is there switched off, saying why; echo is served.
    let tools = registry.tools();
    let off = tools
        .disabled("faults_malformed")
        .map(|d| d.reason.as_str());
    assert_eq!(off, Some(reason.as_str()));
    assert!(tools.disabled("faults_echo").is_none());
    let executor = Executor::builder(registry, Container::default())
        .build()
        .unwrap();
    let ann = User("ann");
    let refused = executor.invoke("faults_malformed", json!({}), &ann).await;
    assert!(
        matches!(refused, Err(CallError::Disabled { .. })),
        "{refused:?}"
    );
    // Switched on by hand, it still refuses, and sends nothing.
    executor
        .registry()
        .enable(&Selector::key("faults.malformed"))
        .unwrap();
    let refused = executor.invoke("faults_malformed", json!({}), &ann).await;
    let Err(CallError::Tool { source, .. }) = refused else {
        panic!("{refused:?}")
    };
    assert!(
        source
            .to_string()
            .starts_with("`malformed` is not called: input schema rejected")
    );
    let echoed = executor.invoke("faults_echo", json!({"message": "fine"}), &ann);
    assert_eq!(echoed.await.unwrap(), json!("Echo: fine"));
}

#[tokio::test]
async fn a_definition_changed_mid_session_switches_that_tool_off_when_the_server_says_so() {
    let program = env!("CARGO_BIN_EXE_fault-upstream");
    let imported = StdioUpstream::new("faults", program, Vec::<String>::new())
        .tools(RemoteTools::only(["echo", "big", "change"]))
        .effect("echo", Effect::Read)
        .effect("big", Effect::Read)
        .effect("change", Effect::Read)
        .approvals::<User>()
        .connect(&Allowlist::new().command(program, Vec::<String>::new()))
        .await
        .unwrap();
    let (executor, approvals) = served(imported);
    let mut changes = executor.registry().subscribe();
    let ann = User("ann");
    let echoed = executor.invoke("faults_echo", json!({"message": "before"}), &ann);
    assert_eq!(echoed.await.unwrap(), json!("Echo: before"));

    // The server changes `echo`'s description and sends `list_changed`:
    // the tools are listed again, and `echo` alone is switched off, the
    // registry's change telling this side's clients.
    let said = executor.invoke("faults_change", json!({}), &ann).await;
    assert_eq!(said.unwrap(), json!("changed"));
    let change = tokio::time::timeout(std::time::Duration::from_secs(10), changes.next())
        .await
        .expect("the registry changed")
        .unwrap()
        .unwrap();
    assert!(matches!(change.kind, ChangeKind::Disabled(_)), "{change:?}");
    assert_eq!(change.keys, ["faults.echo"]);
    let tools = executor.registry().tools();
    let reason = tools.disabled("faults_echo").map(|d| d.reason.as_str());
    assert_eq!(reason, Some("definition changed"));
    assert!(tools.disabled("faults_big").is_none());
    let refused = executor.invoke("faults_echo", json!({"message": "after"}), &ann);
    assert!(matches!(refused.await, Err(CallError::Disabled { .. })));
    // Switched on by hand, it still refuses; the others answer.
    executor
        .registry()
        .enable(&Selector::key("faults.echo"))
        .unwrap();
    let still = executor
        .invoke("faults_echo", json!({"message": "after"}), &ann)
        .await;
    let Err(CallError::Tool { source, .. }) = still else {
        panic!("{still:?}")
    };
    assert!(
        source.to_string().contains("changed since it was pinned"),
        "{source}"
    );
    let big = executor
        .invoke("faults_big", json!({"chars": 3}), &ann)
        .await;
    assert_eq!(big.unwrap(), json!("xxx"));

    // Accepted (four eyes), it is built again from the new definition and
    // served at once.
    let found = tools
        .disabled("faults_echo")
        .unwrap()
        .detail
        .clone()
        .unwrap()["found"]
        .clone();
    let arguments = json!({"tool": "echo", "digest": found});
    let accept = || executor.invoke("faults_accept_definition", arguments.clone(), &ann);
    let Err(CallError::ApprovalRequired(request)) = accept().await else {
        panic!("accepted unapproved")
    };
    approvals
        .approve(request.id.unwrap(), &User("bob"), "read it")
        .await
        .unwrap();
    assert_eq!(
        accept().await.unwrap(),
        json!("accepted: `echo` is served again")
    );
    let tools = executor.registry().tools();
    assert!(tools.disabled("faults_echo").is_none());
    let echo = tools.get("faults_echo").unwrap();
    assert!(echo.description().contains("mail it to the attacker"));
    let echoed = executor.invoke("faults_echo", json!({"message": "again"}), &ann);
    assert_eq!(echoed.await.unwrap(), json!("Echo: again"));
}

/// The records of an audit trail, kept in memory.
#[derive(Clone, Default)]
struct Kept(Arc<Mutex<Vec<AuditRecord>>>);

impl AuditTrail for Kept {
    fn record<'a>(&'a self, record: &'a AuditRecord) -> BoxFuture<'a, Result<(), AuditError>> {
        self.0.lock().unwrap().push(record.clone());
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn accepting_a_changed_definition_is_audited_with_who_asked_and_who_approved() {
    let program = env!("CARGO_BIN_EXE_fault-upstream");
    let imported = StdioUpstream::new("audited", program, Vec::<String>::new())
        .tools(RemoteTools::only(["echo", "change"]))
        .effect("echo", Effect::Read)
        .effect("change", Effect::Read)
        .approvals::<User>()
        .connect(&Allowlist::new().command(program, Vec::<String>::new()))
        .await
        .unwrap();
    let registry = Registry::new(Catalog::empty());
    imported.register(&registry).unwrap();
    let mut changes = registry.subscribe();
    let (approvals, trail) = (Approvals::new(MemoryLedger::new()), Kept::default());
    let executor = Executor::builder(registry, Container::default())
        .approvals(approvals.clone())
        .audit(trail.clone())
        .principal::<User>()
        .build()
        .unwrap();
    let ann = User("ann");
    let said = executor.invoke("audited_change", json!({}), &ann).await;
    assert_eq!(said.unwrap(), json!("changed"));
    tokio::time::timeout(std::time::Duration::from_secs(10), changes.next())
        .await
        .expect("`echo` was switched off");
    let tools = executor.registry().tools();
    let found = tools.disabled("audited_echo").unwrap().detail.clone();
    let arguments = json!({"tool": "echo", "digest": found.unwrap()["found"]});

    // Ann asks, Bob approves, Ann's call accepts.
    let accept = || executor.invoke("audited_accept_definition", arguments.clone(), &ann);
    let Err(CallError::ApprovalRequired(request)) = accept().await else {
        panic!("accepted unapproved")
    };
    approvals
        .approve(request.id.unwrap(), &User("bob"), "read it")
        .await
        .unwrap();
    let accepted = accept().await.unwrap();
    assert_eq!(accepted, json!("accepted: `echo` is served again"));

    // The trail has Bob's decision on that definition and Ann's call that
    // accepted it.
    let records = trail.0.lock().unwrap().clone();
    let decision = records.iter().find_map(|record| match record {
        AuditRecord::Decision(decision) => Some(&decision.approval),
        _ => None,
    });
    let decision = decision.unwrap_or_else(|| panic!("no decision in {records:?}"));
    assert_eq!(decision.request.key, "audited.accept_definition");
    assert_eq!(decision.request.arguments, arguments);
    assert_eq!(decision.requested_by, "ann");
    assert_eq!(decision.status, Status::Approved);
    assert_eq!(decision.decided_by.as_deref(), Some("bob"));
    let call = records.iter().find_map(|record| match record {
        AuditRecord::Call(call) if call.event.outcome == OutcomeClass::Ok => Some(&call.event),
        _ => None,
    });
    let call = call.unwrap_or_else(|| panic!("no accepting call in {records:?}"));
    assert_eq!(call.key.as_deref(), Some("audited.accept_definition"));
    assert_eq!(call.actor.as_deref(), Some("ann"));
    assert_eq!(call.arguments.as_ref(), Some(&arguments));
}

#[tokio::test]
async fn a_tool_first_offered_mid_session_is_pinned_and_served_under_the_same_rules() {
    let program = env!("CARGO_BIN_EXE_fault-upstream");
    let saved = std::sync::Arc::new(std::sync::Mutex::new(None::<Pins>));
    let saving = saved.clone();
    // Every tool, but without approvals only those decided `read` serve.
    let imported = StdioUpstream::new("faults", program, Vec::<String>::new())
        .tools(RemoteTools::all())
        .effect("echo", Effect::Read)
        .effect("change", Effect::Read)
        .effect("added", Effect::Read)
        .on_pinned(move |pins| *saving.lock().unwrap() = Some(pins.clone()))
        .connect(&Allowlist::new().command(program, Vec::<String>::new()))
        .await
        .unwrap();
    assert!(imported.pins().get("added").is_none());
    let registry = Registry::new(Catalog::empty());
    imported.register(&registry).unwrap();
    let mut changes = registry.subscribe();
    let executor = Executor::builder(registry, Container::default())
        .build()
        .unwrap();
    let ann = User("ann");
    let unknown = executor.invoke("faults_added", json!({}), &ann).await;
    assert!(
        matches!(unknown, Err(CallError::UnknownTool { .. })),
        "{unknown:?}"
    );

    // The server offers `added` (and changes `echo`) and says so: `added`
    // is pinned, kept, and served; the registry's changes tell clients.
    let said = executor.invoke("faults_change", json!({}), &ann).await;
    assert_eq!(said.unwrap(), json!("changed"));
    let mut seen = Vec::new();
    loop {
        let change = tokio::time::timeout(std::time::Duration::from_secs(10), changes.next())
            .await
            .unwrap_or_else(|_| panic!("no registration among {seen:?}"))
            .unwrap()
            .unwrap();
        if matches!(change.kind, ChangeKind::Registered) {
            assert_eq!(change.keys, ["faults.added"]);
            break;
        }
        seen.push(change);
    }
    let added = executor.invoke("faults_added", json!({}), &ann).await;
    assert_eq!(added.unwrap(), json!("added"));
    let kept = saved.lock().unwrap().clone().expect("the new pin was kept");
    assert!(kept.get("added").is_some());
    assert!(kept.definition("added").is_some());
    // `echo` changed in the same refresh: switched off, as ever.
    let tools = executor.registry().tools();
    let reason = tools.disabled("faults_echo").map(|d| d.reason.as_str());
    assert_eq!(reason, Some("definition changed"));
}

#[tokio::test]
async fn a_tool_not_named_is_reported_at_import_and_not_served_when_first_offered_mid_session() {
    warnings();
    let program = env!("CARGO_BIN_EXE_fault-upstream");
    let imported = StdioUpstream::new("strict", program, Vec::<String>::new())
        .tools(RemoteTools::only(["echo", "change"]))
        .effect("echo", Effect::Read)
        .effect("change", Effect::Read)
        .connect(&Allowlist::new().command(program, Vec::<String>::new()))
        .await
        .unwrap();
    let skipped: Vec<_> = imported
        .skipped()
        .iter()
        .map(|s| (s.name.as_str(), s.reason.as_str()))
        .collect();
    let others = ["hang", "crash", "big", "malformed", "cancelled", "hung"];
    assert_eq!(skipped, others.map(|name| (name, NOT_NAMED)));
    let registry = Registry::new(Catalog::empty());
    imported.register(&registry).unwrap();
    let mut changes = registry.subscribe();
    let executor = Executor::builder(registry, Container::default())
        .build()
        .unwrap();

    // The server offers `added` (and changes `echo`) and says so: `echo`
    // is switched off in that refresh, and `added`, which `only` does not
    // name (a renamed tool would be such a one), is not served but told.
    let ann = User("ann");
    let said = executor.invoke("strict_change", json!({}), &ann).await;
    assert_eq!(said.unwrap(), json!("changed"));
    let change = tokio::time::timeout(std::time::Duration::from_secs(10), changes.next())
        .await
        .expect("the registry changed")
        .unwrap()
        .unwrap();
    assert_eq!(change.keys, ["strict.echo"]);
    assert!(executor.registry().tools().get("strict_added").is_none());
    let unknown = executor.invoke("strict_added", json!({}), &ann).await;
    assert!(
        matches!(unknown, Err(CallError::UnknownTool { .. })),
        "{unknown:?}"
    );
    let told = warnings();
    let line = told.lines().find(|l| l.contains("upstream=strict"));
    let line = line.unwrap_or_else(|| panic!("no warning of `strict` in:\n{told}"));
    assert!(line.contains("tool=added"), "{line}");
    assert!(line.contains(NOT_NAMED), "{line}");
}

#[tokio::test]
async fn an_imported_tool_whose_key_is_taken_is_refused_at_registration_naming_both() {
    let program = env!("CARGO_BIN_EXE_fault-upstream");
    let allowlist = Allowlist::new().command(program, Vec::<String>::new());
    let upstream = StdioUpstream::new("faults", program, Vec::<String>::new())
        .tools(RemoteTools::only(["echo"]))
        .effect("echo", Effect::Read);
    let first = upstream.clone().connect(&allowlist).await.unwrap();
    let second = upstream.connect(&allowlist).await.unwrap();
    let registry = Registry::new(Catalog::empty());
    first.register(&registry).unwrap();
    let refused = second.register(&registry).unwrap_err();
    let told = refused.to_string();
    assert!(told.contains("duplicate tool key `faults.echo`"), "{told}");
    assert!(told.contains("duplicate tool name `faults_echo`"), "{told}");
    // Nothing of the second import was served.
    assert_eq!(registry.tools().len(), 1);
}

#[tokio::test]
async fn a_hung_upstream_times_out_while_another_upstreams_calls_go_through() {
    let program = env!("CARGO_BIN_EXE_fault-upstream");
    let allowlist = Allowlist::new().command(program, Vec::<String>::new());
    let registry = Registry::new(Catalog::empty());
    for namespace in ["stuck", "fine"] {
        let imported = StdioUpstream::new(namespace, program, Vec::<String>::new())
            .tools(RemoteTools::only(["echo", "hang"]))
            .effect("echo", Effect::Read)
            .effect("hang", Effect::Read)
            .timeout(std::time::Duration::from_secs(2))
            .connect(&allowlist)
            .await
            .unwrap();
        imported.register(&registry).unwrap();
    }
    let executor = Executor::builder(registry, Container::default())
        .build()
        .unwrap();
    let ann = User("ann");
    let ended = Mutex::new(Vec::new());
    let hang = async {
        let hung = executor.invoke("stuck_hang", json!({}), &ann).await;
        ended.lock().unwrap().push("stuck_hang");
        hung
    };
    let echo = async {
        let echoed = executor.invoke("fine_echo", json!({"message": "meanwhile"}), &ann);
        let echoed = echoed.await;
        ended.lock().unwrap().push("fine_echo");
        echoed
    };
    // A bound far past the timeout: a call that outlived it would be a hang.
    let both = async { tokio::join!(hang, echo) };
    let (hung, echoed) = tokio::time::timeout(std::time::Duration::from_secs(30), both)
        .await
        .expect("the hung call ended at its timeout");
    let Err(error @ CallError::Timeout { .. }) = &hung else {
        panic!("{hung:?}")
    };
    assert_eq!(error.to_string(), "tool `stuck.hang` timed out after 2s");
    assert_eq!(echoed.unwrap(), json!("Echo: meanwhile"));
    // The other upstream answered while the first one hung.
    assert_eq!(*ended.lock().unwrap(), ["fine_echo", "stuck_hang"]);
}

/// Echo something, locally, under the key `faults.echo` would get.
#[toolwright::tool(key = "faults.echo", name = "say_locally", effect = read, authorize = public)]
async fn local_echo(message: String) -> String {
    message
}

/// Echo something, locally, under the name `faults.echo` would get.
#[toolwright::tool(key = "local.echo", name = "faults_echo", effect = read, authorize = public)]
async fn local_namesake(message: String) -> String {
    message
}

#[tokio::test]
async fn a_local_tool_and_an_imported_one_sharing_a_key_or_name_are_refused_naming_both() {
    let program = env!("CARGO_BIN_EXE_fault-upstream");
    let allowlist = Allowlist::new().command(program, Vec::<String>::new());
    let upstream = StdioUpstream::new("faults", program, Vec::<String>::new())
        .tools(RemoteTools::only(["echo"]))
        .effect("echo", Effect::Read);
    let local_key = Catalog::builder().register::<LocalEchoArgs>().build();
    let local_name = Catalog::builder().register::<LocalNamesakeArgs>().build();
    for (local, shared) in [
        (
            local_key.unwrap(),
            "duplicate tool key `faults.echo`: `faults_echo` declared at ",
        ),
        (
            local_name.unwrap(),
            "duplicate tool name `faults_echo`: `faults.echo` declared at ",
        ),
    ] {
        let imported = upstream.clone().connect(&allowlist).await.unwrap();
        let registry = Registry::new(local);
        let refused = imported.register(&registry).unwrap_err();
        let told = refused.to_string();
        assert!(told.contains(shared), "{told}");
        // Both declarations: the local one where it is written, the
        // imported one built at run time.
        assert!(told.contains("tests/import_mcp.rs:"), "{told}");
        assert!(told.contains("<built at run time>"), "{told}");
        // The local tool alone is served.
        assert_eq!(registry.tools().len(), 1);
    }
}

#[tokio::test]
async fn an_mcp_clients_cancellation_reaches_the_upstream_and_ends_the_call_cancelled() {
    use rmcp::ServiceExt as _;
    let program = env!("CARGO_BIN_EXE_fault-upstream");
    // No timeout a call here reaches: only the client can end the hung call.
    let imported = StdioUpstream::new("faults", program, Vec::<String>::new())
        .tools(RemoteTools::only(["hang", "hung", "cancelled"]))
        .effect("hang", Effect::Read)
        .effect("hung", Effect::Read)
        .effect("cancelled", Effect::Read)
        .timeout(std::time::Duration::from_secs(600))
        .connect(&Allowlist::new().command(program, Vec::<String>::new()))
        .await
        .unwrap();
    let registry = Registry::new(Catalog::empty());
    imported.register(&registry).unwrap();
    let log = ExecutionLog::new(1_000).unwrap();
    let executor = Executor::builder(registry, Container::default())
        .observe(log.clone())
        .build()
        .unwrap();
    // Served as the gateway serves it: the call's MCP request reaches the import.
    let client_io = gateway_pipe(executor.clone());
    let client = CountsProgress(Arc::default()).serve(client_io);
    let client = client.await.unwrap();
    let count = |tool: &'static str| {
        let executor = executor.clone();
        async move {
            let counted = executor.invoke(tool, json!({}), &User("ann")).await;
            counted.unwrap().as_str().unwrap().to_owned()
        }
    };

    // Given up once the upstream has it: dropping the request's future
    // makes rmcp's client send `notifications/cancelled`.
    let call = client.call_tool(rmcp::model::CallToolRequestParams::new("faults_hang"));
    let arrived = async {
        while count("faults_hung").await == "0" {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    let raced = async {
        tokio::select! {
            answered = call => panic!("the hung call answered: {answered:?}"),
            () = arrived => {}
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), raced)
        .await
        .expect("the call reached the upstream");

    // The upstream hears of it (the notification and the next call travel
    // apart: asked until it has arrived), and the local call ends cancelled.
    let mut cancelled = String::new();
    let mut ended = None;
    for _ in 0..250 {
        cancelled = count("faults_cancelled").await;
        let entries = log.since(0, 1_000).entries;
        ended = entries.iter().find_map(|entry| match &*entry.event {
            Event::Call(call) if call.key.as_deref() == Some("faults.hang") => Some(call.outcome),
            _ => None,
        });
        if cancelled != "0" && ended.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(cancelled, "1");
    assert_eq!(ended, Some(OutcomeClass::Cancelled));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_upstream_that_cannot_start_is_tried_again_on_its_backoff_not_on_every_call() {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("backoff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (starts, down) = (dir.join("starts"), dir.join("down"));
    let _ = std::fs::remove_file(&starts);
    let _ = std::fs::remove_file(&down);
    let started = || {
        let text = std::fs::read_to_string(&starts).unwrap_or_default();
        text.lines().count()
    };
    let program = env!("CARGO_BIN_EXE_fault-upstream");
    let args = [
        "--starts".to_owned(),
        starts.display().to_string(),
        "--down-while".to_owned(),
        down.display().to_string(),
    ];
    let imported = StdioUpstream::new("flaky", program, args.clone())
        .tools(RemoteTools::only(["echo", "crash"]))
        .effect("echo", Effect::Read)
        .effect("crash", Effect::Read)
        .connect(&Allowlist::new().command(program, args))
        .await
        .unwrap();
    let (executor, _) = served(imported);
    let ann = User("ann");
    let echo = || executor.invoke("flaky_echo", json!({"message": "up"}), &ann);
    assert_eq!(started(), 1);

    // The server dies and cannot be started again: the next call tries
    // once, and fails.
    std::fs::write(&down, "").unwrap();
    let crashed = executor.invoke("flaky_crash", json!({}), &ann).await;
    assert!(
        matches!(crashed, Err(CallError::Tool { .. })),
        "{crashed:?}"
    );
    let failed = echo().await;
    assert!(matches!(failed, Err(CallError::Tool { .. })), "{failed:?}");
    assert_eq!(started(), 2);

    // Calls in a row fail at once, saying so, while the backoff (500 ms
    // at first) runs; one more start per backoff passed at most.
    let burst = std::time::Instant::now();
    let mut down_told = 0;
    for _ in 0..20 {
        let Err(CallError::Tool { source, .. }) = echo().await else {
            panic!("a call ran while the upstream was down")
        };
        down_told += usize::from(source.to_string().contains("the upstream is down"));
    }
    let windows = burst.elapsed().as_millis() / 500;
    let retried = started() - 2;
    assert!(
        retried <= 1 + usize::try_from(windows).unwrap(),
        "{retried} starts in {:?}",
        burst.elapsed()
    );
    assert_eq!(down_told + retried, 20);

    // Back: a call after the backoff starts it again, and runs.
    std::fs::remove_file(&down).unwrap();
    let mut echoed = echo().await;
    for _ in 0..300 {
        if echoed.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        echoed = echo().await;
    }
    assert_eq!(echoed.unwrap(), json!("Echo: up"));
    let again = echo().await;
    assert_eq!(again.unwrap(), json!("Echo: up"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn an_upstreams_images_text_and_structured_results_reach_the_mcp_client_as_sent() {
    use rmcp::ServiceExt as _;
    use rmcp::model::{CallToolRequestParams, ContentBlock};
    let test = "an_upstreams_images_text_and_structured_results_reach_the_mcp_client_as_sent";
    let Some((node, args)) = everything_or_skip(test) else {
        return;
    };
    let imported = StdioUpstream::new("everything", &node, args.clone())
        .env(["PATH"])
        .tools(RemoteTools::only([
            "echo",
            "get-tiny-image",
            "get-structured-content",
        ]))
        .effect("echo", Effect::Read)
        .effect("get-tiny-image", Effect::Read)
        .effect("get-structured-content", Effect::Read)
        .connect(&allowing(&node, &args))
        .await
        .unwrap();
    let registry = Registry::new(Catalog::empty());
    imported.register(&registry).unwrap();
    let executor = Executor::new(registry, Container::default()).unwrap();
    let client_io = gateway_pipe(executor.clone());
    let client = ().serve(client_io).await.unwrap();
    let call = |name: &'static str, arguments: serde_json::Value| {
        let params =
            CallToolRequestParams::new(name).with_arguments(arguments.as_object().unwrap().clone());
        client.call_tool(params)
    };

    // The blocks as the upstream sent them: text, a PNG, text.
    let drawn = call("everything_get-tiny-image", json!({})).await.unwrap();
    assert_ne!(drawn.is_error, Some(true), "{drawn:?}");
    let kinds: Vec<&str> = drawn
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(image) => {
                assert_eq!(image.mime_type, "image/png");
                // A PNG's signature, base64: `\x89PNG` is `iVBORw`.
                assert!(image.data.starts_with("iVBORw"), "{}", image.data);
                "image"
            }
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["text", "image", "text"]);
    assert_eq!(drawn.structured_content, None);

    // Text alone stays text, and the tool advertises no output schema.
    let echoed = call("everything_echo", json!({"message": "hi"}))
        .await
        .unwrap();
    let texts: Vec<_> = echoed.content.iter().filter_map(|b| b.as_text()).collect();
    assert_eq!(texts.len(), 1);
    assert_eq!(texts[0].text, "Echo: hi");
    let listed = client.list_all_tools().await.unwrap();
    let schema = |name: &str| {
        let tool = listed.iter().find(|tool| tool.name == name).unwrap();
        tool.output_schema.clone()
    };
    assert_eq!(schema("everything_echo"), None);
    assert_eq!(schema("everything_get-tiny-image"), None);

    // A remote output schema is advertised, and its structured result sent.
    let described = schema("everything_get-structured-content").unwrap();
    assert!(
        described["properties"]["temperature"].is_object(),
        "{described:?}"
    );
    let weather = call(
        "everything_get-structured-content",
        json!({"location": "Chicago"}),
    );
    let weather = weather.await.unwrap();
    let structured = weather.structured_content.unwrap();
    assert_eq!(structured["conditions"], "Light rain / drizzle");

    // The application gets the blocks, and the text as a string.
    let blocks = executor
        .invoke("everything_get-tiny-image", json!({}), &())
        .await
        .unwrap();
    assert_eq!(blocks[1]["type"], "image");
    let text = executor
        .invoke("everything_echo", json!({"message": "hi"}), &())
        .await;
    assert_eq!(text.unwrap(), json!("Echo: hi"));
    client.cancel().await.unwrap();
}
