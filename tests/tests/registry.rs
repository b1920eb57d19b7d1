//! The live registry: tools switched off at run time and views per caller,
//! enforced the same way on every path (direct, typed, provider, MCP).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
mod mcp_client;

use mcp_client::{call, connect, tool_names};
use toolwright::mcp::McpServer;
use toolwright::providers::{self, Format};
use toolwright::{
    CallError, Catalog, Container, Effect, Executor, Invocation,
    registry::{ChangeKind, Reason, Registry, RegistryError, Selector, View},
    tool,
};

/// How many times any tool body ran.
static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Read a note.
#[tool(key = "notes.read", effect = read, authorize = public)]
async fn read_note(id: u64) -> String {
    RUNS.fetch_add(1, Ordering::SeqCst);
    format!("note {id}")
}

/// Delete a note.
#[tool(key = "notes.delete", effect = destructive, authorize = public, approve = approved)]
async fn delete_note(id: u64) -> bool {
    RUNS.fetch_add(1, Ordering::SeqCst);
    id > 0
}

/// Look up the weather.
#[tool(key = "weather.get", effect = read, authorize = public)]
async fn weather(city: String) -> String {
    format!("sunny in {city}")
}

async fn approved(_: &(), _: &Invocation<'_, DeleteNoteArgs>) -> bool {
    true
}

fn executor() -> Executor {
    let catalog = Catalog::builder()
        .register::<ReadNoteArgs>()
        .register::<DeleteNoteArgs>()
        .register::<WeatherArgs>()
        .build()
        .unwrap();
    Executor::new(catalog, Container::default()).unwrap()
}

fn names(executor: &Executor) -> Vec<String> {
    executor
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}

fn openai_call(name: &str, arguments: Value) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": name, "arguments": arguments.to_string()}}
    ]}}]})
}

async fn run_one(executor: &Executor, name: &str, arguments: Value) -> providers::CallOutcome {
    let format = Format::OpenAiChat { strict: true };
    let calls = providers::parse_calls(&openai_call(name, arguments), format).unwrap();
    executor.run_calls(calls, &()).await.remove(0)
}

#[tokio::test]
async fn a_disabled_tool_is_refused_on_every_path_with_its_reason() {
    let executor = executor();
    let change = executor
        .registry()
        .disable(
            &Selector::name("read_note"),
            Reason::new("leaks drafts").by("ops"),
        )
        .unwrap();
    assert_eq!(change.keys, ["notes.read"]);
    let before = RUNS.load(Ordering::SeqCst);

    let direct = executor
        .invoke("read_note", json!({"id": 1}), &())
        .await
        .unwrap_err();
    let CallError::Disabled { key, disabled } = &direct else {
        panic!("expected a disabled tool, got {direct:?}");
    };
    assert_eq!(*key, "notes.read");
    assert_eq!(
        (disabled.reason.as_str(), disabled.by.as_deref()),
        ("leaks drafts", Some("ops"))
    );
    assert_eq!(direct.model_message(), "This tool is unavailable.");

    let typed = executor
        .call(ReadNoteArgs { id: 1 }, &())
        .await
        .unwrap_err();
    assert!(matches!(typed, CallError::Disabled { .. }), "{typed:?}");

    let outcome = run_one(&executor, "read_note", json!({"id": 1})).await;
    assert!(matches!(outcome.result, Err(CallError::Disabled { .. })));
    assert_eq!(outcome.model_text(), "This tool is unavailable.");

    assert_eq!(RUNS.load(Ordering::SeqCst), before, "no body ran");
    assert_eq!(names(&executor), ["delete_note", "weather"]);
    let exported = providers::export(&executor.tools(), Format::Anthropic).unwrap();
    assert!(!exported.to_string().contains("read_note"));
    // The application still lists it, with why.
    let tools = executor.tools();
    let listing: Vec<_> = tools
        .with_disabled()
        .map(|(tool, disabled)| (tool.name(), disabled.map(|d| d.reason.clone())))
        .collect();
    assert_eq!(
        listing,
        [
            ("delete_note", None),
            ("read_note", Some("leaks drafts".to_owned())),
            ("weather", None)
        ]
    );

    executor
        .registry()
        .enable(&Selector::key("notes.read"))
        .unwrap();
    let read = executor.invoke("read_note", json!({"id": 1}), &()).await;
    assert_eq!(read.unwrap(), "note 1");
}

#[tokio::test]
async fn selectors_pick_by_namespace_tag_and_effect() {
    let executor = executor();
    let registry = executor.registry();
    let change = registry
        .disable(&Selector::namespace("notes"), "migration")
        .unwrap();
    assert_eq!(change.keys, ["notes.delete", "notes.read"]);
    registry.enable(&Selector::All).unwrap();

    let change = registry
        .disable(&Selector::effect(Effect::Destructive), "freeze")
        .unwrap();
    assert_eq!(change.keys, ["notes.delete"]);
    assert_eq!(registry.is_enabled("delete_note"), Some(false));
    assert_eq!(registry.is_enabled("read_note"), Some(true));

    let reads_outside_notes = Selector::effect(Effect::Read).and(!Selector::namespace("notes"));
    let change = registry.disable(&reads_outside_notes, "freeze").unwrap();
    assert_eq!(change.keys, ["weather.get"]);
}

#[tokio::test]
async fn a_selector_that_matches_nothing_is_an_error_and_changes_nothing() {
    let executor = executor();
    let registry = executor.registry();
    for selector in [
        Selector::name("readnote"),
        Selector::namespace("note"),
        Selector::tag("pii"),
        Selector::key("notes.read").and(Selector::effect(Effect::Write)),
    ] {
        let error = registry.disable(&selector, "typo").unwrap_err();
        assert_eq!(error, RegistryError::NoMatch { selector });
        assert!(registry.enable(&Selector::name("nothing")).is_err());
    }
    assert_eq!(registry.generation(), 0);
    assert_eq!(names(&executor).len(), 3);
}

#[tokio::test]
async fn a_tool_outside_the_view_cannot_be_called_on_any_path() {
    let executor = executor();
    let guest = executor.view(Selector::effect(Effect::Read));
    assert_eq!(names(&guest), ["read_note", "weather"]);
    let before = RUNS.load(Ordering::SeqCst);

    let direct = guest.invoke("delete_note", json!({"id": 1}), &()).await;
    assert!(matches!(direct, Err(CallError::UnknownTool { .. })));
    let typed = guest.call(DeleteNoteArgs { id: 1 }, &()).await;
    assert!(matches!(typed, Err(CallError::UnknownTool { .. })));
    let outcome = run_one(&guest, "delete_note", json!({"id": 1})).await;
    assert!(matches!(outcome.result, Err(CallError::UnknownTool { .. })));
    // Even malformed arguments do not tell a guest the tool exists.
    let format = Format::OpenAiChat { strict: true };
    let malformed = openai_call("delete_note", json!(null))
        .to_string()
        .replace(r#""null""#, r#""{""#);
    let calls = providers::parse_calls(&serde_json::from_str(&malformed).unwrap(), format).unwrap();
    let outcome = guest.run_calls(calls, &()).await.remove(0);
    assert!(matches!(outcome.result, Err(CallError::UnknownTool { .. })));
    assert!(providers::select(&guest.tools(), ["delete_note"]).is_err());
    assert_eq!(RUNS.load(Ordering::SeqCst), before, "no body ran");

    // A view narrows a view: both must agree.
    let weather_only = guest.view(View::filter(|tool| tool.key().starts_with("weather.")));
    assert_eq!(names(&weather_only), ["weather"]);
    let refused = weather_only
        .invoke("read_note", json!({"id": 1}), &())
        .await;
    assert!(matches!(refused, Err(CallError::UnknownTool { .. })));
    // The full executor is untouched by its views.
    assert_eq!(names(&executor).len(), 3);
}

#[tokio::test]
async fn a_view_follows_the_registry() {
    let executor = executor();
    let guest = executor.view(Selector::effect(Effect::Read));
    executor
        .registry()
        .disable(&Selector::name("weather"), "upstream down")
        .unwrap();
    assert_eq!(names(&guest), ["read_note"]);
    let refused = guest.invoke("weather", json!({"city": "Oslo"}), &()).await;
    assert!(matches!(refused, Err(CallError::Disabled { .. })));
}

#[tokio::test]
async fn subscribers_hear_every_change_in_order() {
    let registry = Registry::new(
        Catalog::builder()
            .register::<ReadNoteArgs>()
            .register::<WeatherArgs>()
            .build()
            .unwrap(),
    );
    let mut changes = registry.subscribe();
    registry.disable(&Selector::All, "maintenance").unwrap();
    registry.enable(&Selector::name("weather")).unwrap();
    // Nothing to change: no generation, no event.
    registry.enable(&Selector::name("weather")).unwrap();
    registry.enable(&Selector::All).unwrap();

    let first = changes.next().await.unwrap().unwrap();
    assert_eq!(first.generation, 1);
    assert!(matches!(first.kind, ChangeKind::Disabled(ref d) if d.reason == "maintenance"));
    assert_eq!(first.keys, ["notes.read", "weather.get"]);
    let second = changes.next().await.unwrap().unwrap();
    assert_eq!(
        (second.generation, second.kind, second.keys),
        (2, ChangeKind::Enabled, vec!["weather.get".to_owned()])
    );
    let third = changes.next().await.unwrap().unwrap();
    assert_eq!(
        (third.generation, third.keys),
        (3, vec!["notes.read".to_owned()])
    );
    assert_eq!(registry.generation(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_never_runs_a_tool_disabled_before_it_looked_it_up() {
    let executor = executor();
    // Bumped before each enable and after each disable returns: even while
    // the tool is surely off, odd while it may be on.
    let epoch = Arc::new(AtomicU64::new(1));
    // Calls made wholly while the tool was surely off: the checked case.
    let checked = Arc::new(AtomicUsize::new(0));
    let writer = {
        let registry = executor.registry().clone();
        let (epoch, checked) = (epoch.clone(), checked.clone());
        tokio::spawn(async move {
            for _ in 0..300 {
                registry
                    .disable(&Selector::name("weather"), "flapping")
                    .unwrap();
                epoch.fetch_add(1, Ordering::SeqCst);
                // Stay off until a caller has called in this window (or
                // the callers are done), so that the check is exercised.
                let before = checked.load(Ordering::SeqCst);
                for _ in 0..1_000 {
                    if checked.load(Ordering::SeqCst) > before {
                        break;
                    }
                    tokio::task::yield_now().await;
                }
                epoch.fetch_add(1, Ordering::SeqCst);
                registry.enable(&Selector::name("weather")).unwrap();
                tokio::task::yield_now().await;
            }
        })
    };
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let executor = executor.clone();
            let (epoch, checked) = (epoch.clone(), checked.clone());
            tokio::spawn(async move {
                for _ in 0..500 {
                    let before = epoch.load(Ordering::SeqCst);
                    let result = executor
                        .invoke("weather", json!({"city": "Oslo"}), &())
                        .await;
                    let after = epoch.load(Ordering::SeqCst);
                    if before.is_multiple_of(2) && before == after {
                        assert!(
                            matches!(result, Err(CallError::Disabled { .. })),
                            "ran while disabled: {result:?}"
                        );
                        checked.fetch_add(1, Ordering::SeqCst);
                    } else {
                        assert!(matches!(result, Ok(_) | Err(CallError::Disabled { .. })));
                    }
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    writer.await.unwrap();
    for caller in callers {
        caller.await.unwrap();
    }
    assert_eq!(executor.registry().generation(), 600);
    assert!(
        checked.load(Ordering::SeqCst) > 0,
        "no call fell wholly in a window"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_never_lose_an_update() {
    let executor = executor();
    let writers: Vec<_> = ["read_note", "delete_note", "weather"]
        .into_iter()
        .map(|name| {
            let registry = executor.registry().clone();
            tokio::spawn(async move {
                for round in 0..100 {
                    registry
                        .disable(&Selector::name(name), format!("{name} {round}"))
                        .unwrap();
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    let tools = executor.tools();
    for name in ["read_note", "delete_note", "weather"] {
        assert_eq!(tools.disabled(name).unwrap().reason, format!("{name} 99"));
    }
    assert_eq!(tools.generation(), 300);
}

#[tokio::test]
async fn mcp_serves_the_registry_as_it_is_now() {
    let executor = executor();
    let server = McpServer::new(executor.clone(), "registry-test", "0.1.0");
    let client = connect(&server, ()).await;
    assert_eq!(
        tool_names(&client).await,
        ["delete_note", "read_note", "weather"]
    );

    executor
        .registry()
        .disable(&Selector::name("weather"), "upstream down")
        .unwrap();
    assert_eq!(tool_names(&client).await, ["delete_note", "read_note"]);
    let refused = call(&client, "weather", json!({"city": "Oslo"})).await;
    assert_eq!(refused.is_error, Some(true));
    let text = serde_json::to_value(&refused.content).unwrap()[0]["text"].clone();
    assert_eq!(text, "This tool is unavailable.");

    executor
        .registry()
        .enable(&Selector::name("weather"))
        .unwrap();
    let answer = call(&client, "weather", json!({"city": "Oslo"})).await;
    assert_eq!(answer.is_error, Some(false));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn mcp_views_hide_and_refuse_alike() {
    let reads = View::new(Selector::effect(Effect::Read));
    let server = McpServer::builder(executor(), "registry-test", "0.1.0")
        .views(move |_: &()| reads.clone())
        .build();
    let client = connect(&server, ()).await;
    assert_eq!(tool_names(&client).await, ["read_note", "weather"]);
    let before = RUNS.load(Ordering::SeqCst);
    let error = client
        .call_tool(
            CallToolRequestParams::new("delete_note")
                .with_arguments(json!({"id": 1}).as_object().unwrap().clone()),
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("unknown tool"), "{error}");
    assert_eq!(RUNS.load(Ordering::SeqCst), before, "no body ran");
    client.cancel().await.unwrap();
}
