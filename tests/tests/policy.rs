//! The permission policy: first match wins, in addition to each tool's own
//! hooks, the same on every path.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

mod mcp_client;

use mcp_client::{call, connect, text};
use serde_json::json;
use toolwright::mcp::{McpServer, approval_request};
use toolwright::providers::{self, Format};
use toolwright::{
    CallError, Catalog, Container, Context, Effect, Executor, Invocation,
    registry::{ChangeKind, Decision, Policy, Rule, Selector},
    tool,
};

/// The caller, and counts of what ran for it (shared by its clones: a
/// `Context<Actor>` parameter gets one).
#[derive(Clone, Default)]
struct Actor {
    staff: bool,
    /// `authorize` answers, to prove the policy decides before the hooks.
    authorized: Arc<AtomicUsize>,
    /// Tool bodies run.
    runs: Arc<AtomicUsize>,
}

impl Actor {
    fn staff() -> Self {
        Actor {
            staff: true,
            ..Actor::default()
        }
    }

    fn counts(&self) -> (usize, usize) {
        (
            self.authorized.load(Ordering::SeqCst),
            self.runs.load(Ordering::SeqCst),
        )
    }
}

async fn staff<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool {
    actor.authorized.fetch_add(1, Ordering::SeqCst);
    actor.staff
}

async fn approves(_: &Actor, _: &Invocation<'_, RefundArgs>) -> bool {
    true
}

/// Look up an order.
#[tool(key = "orders.get", effect = read, authorize = staff)]
async fn get_order(id: u64, actor: Context<Actor>) -> u64 {
    actor.runs.fetch_add(1, Ordering::SeqCst);
    id
}

/// Refund an order.
#[tool(key = "orders.refund", effect = destructive, authorize = staff, approve = approves)]
async fn refund(
    id: u64,
    /// Cents to refund.
    #[default = 100]
    cents: u64,
    actor: Context<Actor>,
) -> u64 {
    actor.runs.fetch_add(1, Ordering::SeqCst);
    id + cents
}

/// Fetch a web page.
#[tool(key = "web.fetch", effect = read, authorize = staff, open_world)]
async fn fetch(url: String, actor: Context<Actor>) -> String {
    actor.runs.fetch_add(1, Ordering::SeqCst);
    url
}

fn executor(policy: Policy) -> Executor {
    let catalog = Catalog::builder()
        .register::<GetOrderArgs>()
        .register::<RefundArgs>()
        .register::<FetchArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    executor.registry().set_policy(policy);
    executor
}

#[tokio::test]
async fn the_first_matching_rule_decides_and_the_fallback_covers_the_rest() {
    let executor = executor(
        Policy::new()
            .rule(Rule::deny(
                "no refunds",
                Selector::name("refund"),
                "refunds are paused",
            ))
            .rule(Rule::allow("orders", Selector::namespace("orders")))
            .fallback(Decision::Deny {
                reason: "not in the policy".into(),
            }),
    );
    let refused = executor
        .invoke("refund", json!({"id": 1}), &Actor::staff())
        .await
        .unwrap_err();
    let CallError::PolicyDenied { key, rule, reason } = &refused else {
        panic!("expected a policy denial, got {refused:?}");
    };
    assert_eq!(
        (key.as_str(), rule.as_deref(), reason.as_str()),
        ("orders.refund", Some("no refunds"), "refunds are paused")
    );
    assert_eq!(
        refused.model_message(),
        "You are not allowed to call this tool."
    );

    let order = executor
        .invoke("get_order", json!({"id": 7}), &Actor::staff())
        .await;
    assert_eq!(order.unwrap(), json!(7));

    let fallback = executor
        .invoke(
            "fetch",
            json!({"url": "https://example.com"}),
            &Actor::staff(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&fallback, CallError::PolicyDenied { rule: None, reason, .. } if reason == "not in the policy"),
        "{fallback:?}"
    );
}

#[tokio::test]
async fn a_denied_call_never_reaches_the_hooks_or_the_body() {
    let executor =
        executor(Policy::new().rule(Rule::deny("frozen", Selector::All, "change freeze")));
    let actor = Actor::staff();
    for (name, arguments) in [
        ("get_order", json!({"id": 1})),
        ("refund", json!({"id": 1})),
        ("fetch", json!({"url": "x"})),
    ] {
        let refused = executor.invoke(name, arguments, &actor).await;
        assert!(
            matches!(refused, Err(CallError::PolicyDenied { .. })),
            "{name}"
        );
    }
    let typed = executor.call(GetOrderArgs { id: 1 }, &actor).await;
    assert!(matches!(typed, Err(CallError::PolicyDenied { .. })));
    assert_eq!(actor.counts(), (0, 0), "no hook was asked, no body ran");
}

#[tokio::test]
async fn an_allowed_call_still_meets_the_tools_own_hooks() {
    let executor = executor(Policy::new().rule(Rule::allow_read_only()));
    let guest = Actor::default();
    let denied = executor.invoke("get_order", json!({"id": 1}), &guest).await;
    assert!(
        matches!(denied, Err(CallError::Denied { .. })),
        "{denied:?}"
    );
}

#[tokio::test]
async fn ask_sends_even_a_read_tool_down_the_approval_path() {
    let executor = executor(
        Policy::new()
            .rule(Rule::ask_open_world())
            .rule(Rule::ask_destructive())
            .rule(Rule::allow_read_only()),
    );
    let actor = Actor::staff();
    let asked = executor
        .invoke("fetch", json!({"url": "https://example.com"}), &actor)
        .await
        .unwrap_err();
    let CallError::ApprovalRequired(request) = &asked else {
        panic!("expected an approval request, got {asked:?}");
    };
    assert_eq!(request.key, "web.fetch");
    assert_eq!(request.arguments, json!({"url": "https://example.com"}));
    let typed = executor
        .call(
            FetchArgs {
                url: "https://example.com".into(),
            },
            &actor,
        )
        .await;
    assert!(matches!(typed, Err(CallError::ApprovalRequired(_))));
    // An unauthorized caller is told so, not asked to wait for approval.
    let guest = Actor::default();
    let denied = executor.invoke("fetch", json!({"url": "x"}), &guest).await;
    assert!(
        matches!(denied, Err(CallError::Denied { .. })),
        "{denied:?}"
    );
    assert_eq!((actor.counts().1, guest.counts().1), (0, 0), "no body ran");

    // A destructive tool asks its own `approve` hook, as it always does.
    let refund = executor
        .invoke("refund", json!({"id": 1}), &Actor::staff())
        .await;
    assert_eq!(refund.unwrap(), json!(101));
}

#[tokio::test]
async fn rules_on_arguments_see_the_validated_arguments_with_defaults() {
    let executor = executor(
        Policy::new().rule(
            Rule::ask("big refunds", Selector::name("refund"))
                .when_arguments(|args| args["cents"].as_u64() >= Some(100)),
        ),
    );
    // `cents` defaults to 100: the rule sees it, though the caller left it out.
    let asked = executor
        .invoke("refund", json!({"id": 1}), &Actor::staff())
        .await;
    assert_eq!(asked.unwrap(), json!(101), "the refund's own hook approved");
    let policy = executor.registry().policy().unwrap();
    let tools = executor.tools();
    let refund = tools.get("refund").unwrap();
    assert_eq!(
        policy.decide(refund, &json!({"id": 1, "cents": 100})),
        (&Decision::Ask, Some("big refunds"))
    );
    assert_eq!(
        policy.decide(refund, &json!({"id": 1, "cents": 5})),
        (&Decision::Allow, None)
    );
}

#[tokio::test]
async fn the_policy_holds_on_the_provider_and_mcp_paths() {
    let executor = executor(Policy::new().rule(Rule::ask_open_world()).rule(Rule::deny(
        "no refunds",
        Selector::effect(Effect::Destructive),
        "paused",
    )));
    let response = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "fetch", "arguments": "{\"url\": \"x\"}"}},
        {"id": "c2", "type": "function",
         "function": {"name": "refund", "arguments": "{\"id\": 1}"}}
    ]}}]});
    let format = Format::OpenAiChat { strict: false };
    let calls = providers::parse_calls(&response, format).unwrap();
    let outcomes = executor.run_calls(calls, &Actor::staff()).await;
    assert!(matches!(
        outcomes[0].result,
        Err(CallError::ApprovalRequired(_))
    ));
    assert!(matches!(
        outcomes[1].result,
        Err(CallError::PolicyDenied { .. })
    ));
    assert_eq!(
        outcomes[1].model_text(),
        "You are not allowed to call this tool."
    );

    let server = McpServer::new(executor, "policy-test", "0.1.0");
    let client = connect(&server, Actor::staff()).await;
    let asked = call(&client, "fetch", json!({"url": "x"})).await;
    assert_eq!(asked.is_error, Some(true));
    assert_eq!(approval_request(&asked).unwrap().unwrap().key, "web.fetch");
    let denied = call(&client, "refund", json!({"id": 1})).await;
    assert_eq!(denied.is_error, Some(true));
    assert_eq!(text(&denied), "You are not allowed to call this tool.");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn setting_a_policy_is_a_change_subscribers_hear() {
    let executor = executor(Policy::new());
    let mut changes = executor.registry().subscribe();
    let change = executor
        .registry()
        .set_policy(Policy::new().rule(Rule::deny_tag("privileged")));
    assert_eq!(change.kind, ChangeKind::Policy);
    let heard = changes.next().await.unwrap().unwrap();
    assert_eq!((heard.generation, heard.kind), (2, ChangeKind::Policy));
}
