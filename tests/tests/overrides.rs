//! Run-time overrides: an operator's new description, title, timeout and
//! result bound reach every front end and every later call, go back to the
//! declared values when cleared, travel in the registry's state, and a bad
//! one changes nothing. Tools built at run time declare their own
//! concurrency and result bound.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

mod mcp_client;

use serde_json::json;
use tokio::sync::Semaphore;
use toolwright::mcp::McpServer;
use toolwright::providers::{self, Format, ToolCall};
use toolwright::{
    CallError, Catalog, Container, Effect, Executor,
    executor::Concurrency,
    registry::{
        ChangeKind, DynamicTool, DynamicToolProblem, Override, Registry, RegistryError,
        RegistryState, Selector,
    },
    tool,
};

/// Print the report.
#[tool(key = "reports.print", effect = read, authorize = public)]
async fn print_report(lines: usize, wait_ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(wait_ms)).await;
    "line\n".repeat(lines)
}

/// Look up an order.
#[tool(key = "orders.get", effect = read, authorize = public)]
async fn get_order(id: u64) -> u64 {
    id
}

fn catalog() -> Catalog {
    Catalog::builder()
        .register::<PrintReportArgs>()
        .register::<GetOrderArgs>()
        .build()
        .unwrap()
}

const CLEARER: &str = "Print the monthly sales report; `lines` is how many lines to print.";

fn tuned() -> Override {
    Override::new()
        .title("Sales report")
        .description(CLEARER)
        .timeout(Duration::from_millis(50))
        .max_result(10)
}

/// The description `tools/list` gives `name` over MCP.
async fn mcp_description(server: &McpServer<()>, name: &str) -> String {
    let client = mcp_client::connect(server, ()).await;
    let tools = client.list_all_tools().await.unwrap();
    let tool = tools.iter().find(|tool| tool.name == name).unwrap();
    let description = tool.description.as_deref().unwrap_or_default().to_owned();
    client.cancel().await.unwrap();
    description
}

#[tokio::test]
async fn an_override_reaches_every_front_end_and_every_later_call() {
    let executor = Executor::new(catalog(), Container::default()).unwrap();
    let registry = executor.registry().clone();
    let server = McpServer::new(executor.clone(), "overrides-test", "0.1.0");

    let change = registry
        .set_override(&Selector::name("print_report"), tuned())
        .unwrap();
    assert_eq!(change.kind, ChangeKind::Overridden);
    assert_eq!(change.keys, ["reports.print"]);

    // What people and models are shown.
    let tools = executor.tools();
    let tool = tools.get("print_report").unwrap();
    assert_eq!(tool.title(), Some("Sales report"));
    assert_eq!(tool.description(), CLEARER);
    assert_eq!(tool.overridden(), Some(&tuned()));
    let openai = providers::export(&tools, Format::OpenAiChat { strict: true }).unwrap();
    assert_eq!(openai[1]["function"]["name"], "print_report");
    assert_eq!(
        openai[1]["function"]["description"],
        format!("Sales report. {CLEARER}")
    );
    assert_eq!(mcp_description(&server, "print_report").await, CLEARER);
    // The tool it did not pick keeps what it declared.
    assert_eq!(
        tools.get("get_order").unwrap().description(),
        "Look up an order."
    );

    // How calls run: the model's text cut at the new bound, the
    // application's value whole, the new timeout.
    let calls = vec![ToolCall::new(
        "c1",
        "print_report",
        json!({"lines": 4, "wait_ms": 0}),
    )];
    let outcomes = executor.run_calls(calls, &()).await;
    assert_eq!(
        outcomes[0].model_text(),
        "line\nline\n…[10 more characters]"
    );
    let whole = executor
        .invoke("print_report", json!({"lines": 4, "wait_ms": 0}), &())
        .await
        .unwrap();
    assert_eq!(whole, "line\n".repeat(4));
    let slow = executor
        .invoke("print_report", json!({"lines": 1, "wait_ms": 5_000}), &())
        .await;
    assert!(
        matches!(&slow, Err(CallError::Timeout { key, after }) if key == "reports.print" && *after == Duration::from_millis(50)),
        "{slow:?}"
    );

    // Cleared: back to what the tool declared (no timeout of its own).
    registry
        .set_override(&Selector::name("print_report"), Override::new())
        .unwrap();
    let tools = executor.tools();
    let tool = tools.get("print_report").unwrap();
    assert_eq!(
        (tool.title(), tool.description()),
        (None, "Print the report.")
    );
    assert!(tool.overridden().is_none());
    assert_eq!(
        mcp_description(&server, "print_report").await,
        "Print the report."
    );
    let waited = executor
        .invoke("print_report", json!({"lines": 1, "wait_ms": 60}), &())
        .await
        .unwrap();
    assert_eq!(waited, "line\n");
}

#[tokio::test]
async fn the_typed_path_runs_under_the_overridden_timeout() {
    let executor = Executor::new(catalog(), Container::default()).unwrap();
    executor
        .registry()
        .set_override(
            &Selector::All,
            Override::new().timeout(Duration::from_millis(20)),
        )
        .unwrap();
    let slow = executor
        .call(
            PrintReportArgs {
                lines: 1,
                wait_ms: 5_000,
            },
            &(),
        )
        .await;
    assert!(
        matches!(slow, Err(CallError::Timeout { after, .. }) if after == Duration::from_millis(20)),
        "{slow:?}"
    );
}

#[test]
fn a_bad_override_or_one_that_picks_nothing_changes_nothing() {
    let registry = Registry::new(catalog());
    let bad = [
        (
            Override::new().description("  "),
            "an overriding description is empty",
        ),
        (Override::new().title(""), "an overriding title is empty"),
        (
            Override::new().timeout(Duration::from_micros(10)),
            "an overriding timeout is shorter than a millisecond",
        ),
        (
            Override::new().description(CLEARER).max_result(0),
            "an overriding result bound is zero characters",
        ),
    ];
    for (overrides, problem) in bad {
        let error = registry
            .set_override(&Selector::All, overrides)
            .unwrap_err();
        assert!(matches!(error, RegistryError::InvalidOverride { .. }));
        assert_eq!(error.to_string(), problem);
    }
    let none = registry
        .set_override(&Selector::tag("billing"), tuned())
        .unwrap_err();
    assert!(matches!(none, RegistryError::NoMatch { .. }));
    assert_eq!(registry.generation(), 0);
    assert!(
        registry
            .tools()
            .iter()
            .all(|tool| tool.overridden().is_none())
    );

    // The same override again: no change, no new generation.
    let first = registry
        .set_override(&Selector::name("get_order"), tuned())
        .unwrap();
    let again = registry
        .set_override(&Selector::name("get_order"), tuned())
        .unwrap();
    assert_eq!((first.generation, again.generation), (1, 1));
    assert!(again.keys.is_empty());
}

#[test]
fn the_state_carries_overrides_and_namespaces_across_a_restart() {
    let registry = Registry::new(catalog());
    registry.mount("eu", catalog()).unwrap();
    registry
        .set_override(&Selector::name("eu_print_report"), tuned())
        .unwrap();
    registry
        .disable(&Selector::name("get_order"), "migrating")
        .unwrap();
    let saved = serde_json::to_value(registry.state()).unwrap();
    assert_eq!(
        saved["namespaces"],
        json!({"eu": {"tools": ["eu.orders.get", "eu.reports.print"]}})
    );
    assert_eq!(
        saved["tools"]["eu.reports.print"]["override"],
        json!({"title": "Sales report", "description": CLEARER, "timeout_ms": 50, "max_result": 10})
    );
    assert_eq!(
        saved["tools"]["orders.get"]["disabled"]["reason"],
        "migrating"
    );
    assert_eq!(saved["tools"]["reports.print"], json!({}));

    // The restarted process mounts its namespaces in code, as before, but
    // not `us`, which the saved state never had either.
    let restarted = Registry::new(catalog());
    restarted.mount("eu", catalog()).unwrap();
    let mut state: RegistryState = serde_json::from_value(saved).unwrap();
    state
        .namespaces
        .insert("us".to_owned(), state.namespaces["eu"].clone());
    let restored = restarted.restore(&state).unwrap();
    assert_eq!(restored.unknown_namespaces, ["us"]);
    assert!(restored.unknown.is_empty());
    assert_eq!(restored.change.keys, ["eu.reports.print", "orders.get"]);
    let tools = restarted.tools();
    let tool = tools.get("eu_print_report").unwrap();
    assert_eq!(tool.description(), CLEARER);
    assert_eq!(tool.timeout(), Some(Duration::from_millis(50)));
    assert_eq!(restarted.is_enabled("get_order"), Some(false));
    assert_eq!(
        serde_json::to_value(restarted.state().tools).unwrap(),
        serde_json::to_value(registry.state().tools).unwrap()
    );
}

#[test]
fn a_state_with_an_unusable_override_is_refused_whole() {
    let registry = Registry::new(catalog());
    let parsed = serde_json::from_value::<RegistryState>(json!({
        "generation": 1,
        "tools": {"orders.get": {"override": {"max_result": 0}}},
    }));
    let error = parsed.unwrap_err().to_string();
    assert!(
        error.contains("an overriding result bound is zero characters"),
        "{error}"
    );
    let typo = serde_json::from_value::<RegistryState>(json!({
        "generation": 1,
        "tools": {"orders.get": {"override": {"descripton": "typo"}}},
    }));
    assert!(
        typo.unwrap_err()
            .to_string()
            .contains("unknown field `descripton`")
    );

    // Built in code: refused by the restore, nothing applied.
    let mut state: RegistryState = serde_json::from_value(json!({
        "generation": 1,
        "tools": {"reports.print": {"disabled": {"reason": "x", "by": null, "at": 0}}},
    }))
    .unwrap();
    state.tools.get_mut("reports.print").unwrap().overridden = Some(Override::new().max_result(0));
    let generation = registry.generation();
    let refused = registry.restore(&state).unwrap_err();
    assert!(matches!(refused, RegistryError::InvalidOverride { .. }));
    assert_eq!(registry.generation(), generation);
    assert_eq!(registry.is_enabled("print_report"), Some(true));
}

/// A tool built at run time whose handler waits for `gate` before it
/// answers, counting the calls inside it.
fn render_tool(
    gate: Arc<Semaphore>,
    inside: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
) -> DynamicTool {
    DynamicTool::builder("reports.render", "render_report")
        .description("Render a report on the one rendering server.")
        .effect(Effect::Read)
        .concurrency(Concurrency::Limit(NonZeroU32::new(1).unwrap()))
        .max_result(12)
        .input_schema(json!({"type": "object"}))
        .handler(move |_| {
            let (gate, inside, most) = (gate.clone(), inside.clone(), most.clone());
            Box::pin(async move {
                let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                gate.acquire().await.unwrap().forget();
                inside.fetch_sub(1, Ordering::SeqCst);
                Ok(json!("a".repeat(100)))
            })
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_tool_built_at_run_time_declares_its_concurrency_and_result_bound() {
    let gate = Arc::new(Semaphore::new(0));
    let (inside, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let registry = Registry::new(Catalog::builder().build().unwrap());
    registry
        .register(render_tool(gate.clone(), inside.clone(), most.clone()))
        .unwrap();
    let executor = Executor::new(registry, Container::default()).unwrap();
    let tools = executor.tools();
    let tool = tools.get("render_report").unwrap();
    assert_eq!(tool.concurrency().to_string(), "at most 1 at once");
    assert_eq!(tool.max_result(), Some(12));

    let calls: Vec<_> = (0..3)
        .map(|_| {
            let executor = executor.clone();
            tokio::spawn(async move { executor.invoke("render_report", json!({}), &()).await })
        })
        .collect();
    // One call inside at a time, however long the others wait.
    for _ in 0..1_000 {
        tokio::task::yield_now().await;
    }
    assert_eq!(inside.load(Ordering::SeqCst), 1);
    gate.add_permits(4);
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap(), "a".repeat(100));
    }
    assert_eq!(most.load(Ordering::SeqCst), 1);

    // The model's text cut at the tool's bound.
    let outcomes = executor
        .run_calls(vec![ToolCall::new("c1", "render_report", json!({}))], &())
        .await;
    assert_eq!(
        outcomes[0].model_text(),
        format!("{}…[88 more characters]", "a".repeat(12))
    );

    let zero = DynamicTool::builder("reports.render", "render_report")
        .description("Render.")
        .effect(Effect::Read)
        .max_result(0)
        .input_schema(json!({"type": "object"}))
        .handler(|_| Box::pin(async { Ok(json!(1)) }))
        .build()
        .unwrap_err();
    assert_eq!(zero.problems, [DynamicToolProblem::ZeroMaxResult]);
}
