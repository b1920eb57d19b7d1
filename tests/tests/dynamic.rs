//! Tools built at run time go through the same pipeline as `#[tool]`s:
//! schema enforcement, policy, hooks, approvals bound to their digest, a
//! per-call scope, and every front end.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

mod mcp_client;

use mcp_client::{call, connect};
use serde_json::json;
use toolwright::mcp::{McpServer, approval_request};
use toolwright::providers::{self, Format};
use toolwright::{
    CallError, Catalog, Container, Effect, Executor, Invocation,
    approval::Digest,
    executor::{BoxFuture, Verdict},
    registry::{Arguments, DynamicTool, DynamicToolProblem, Policy, Registry, Rule, Selector},
    scope::{Outcome, ResolveError, Scope},
};

/// The caller: its name, and the digests a person approved for it.
#[derive(Clone, Default)]
struct Actor {
    name: &'static str,
    approved: Arc<Mutex<Vec<Digest>>>,
}

fn named(name: &'static str) -> Actor {
    Actor {
        name,
        ..Actor::default()
    }
}

fn not_bob<'a>(actor: &'a Actor, _: &'a Invocation<'a, Arguments>) -> BoxFuture<'a, bool> {
    Box::pin(async move { actor.name != "bob" })
}

fn person_approved<'a>(
    actor: &'a Actor,
    call: &'a Invocation<'a, Arguments>,
) -> BoxFuture<'a, Verdict> {
    Box::pin(async move {
        let mut approved = actor.approved.lock().unwrap();
        match approved.iter().position(|d| *d == call.digest()) {
            Some(at) => {
                approved.remove(at);
                Verdict::Allow
            }
            None => Verdict::Pending,
        }
    })
}

/// A per-call unit of work whose finalizer records how the call ended.
struct Work;

fn transfer(runs: Arc<AtomicUsize>) -> DynamicTool {
    DynamicTool::builder("bank.transfer", "transfer")
        .description("Move money between accounts.")
        .effect(Effect::Write)
        .tags(["money"])
        .input_schema(json!({
            "type": "object",
            "properties": {
                "to": {"type": "string", "minLength": 1},
                "cents": {"type": "integer", "minimum": 1, "maximum": 100000},
            },
            "required": ["to", "cents"],
            "additionalProperties": false,
        }))
        .output_schema(json!({"type": "object", "properties": {"sent": {"type": "integer"}}}))
        .authorize(not_bob)
        .approve(person_approved)
        .handler(move |call| {
            let runs = runs.clone();
            Box::pin(async move {
                call.scope().resolve::<Work>().await?;
                runs.fetch_add(1, Ordering::SeqCst);
                Ok(json!({"sent": call.arguments()["cents"]}))
            })
        })
        .build()
        .unwrap()
}

fn echo() -> DynamicTool {
    DynamicTool::builder("util.echo", "echo")
        .description("Say it back.")
        .effect(Effect::Read)
        .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
        .handler(|call| {
            Box::pin(async move {
                match call.arguments()["text"].as_str() {
                    Some("fail") => Err("asked to fail".into()),
                    _ => Ok(call.into_arguments()),
                }
            })
        })
        .build()
        .unwrap()
}

struct Setup {
    executor: Executor,
    runs: Arc<AtomicUsize>,
    closed: Arc<Mutex<Vec<Outcome>>>,
}

fn setup() -> Setup {
    let runs = Arc::new(AtomicUsize::new(0));
    let closed: Arc<Mutex<Vec<Outcome>>> = Arc::default();
    let registry = Registry::new(Catalog::builder().build().unwrap());
    registry.register(transfer(runs.clone())).unwrap();
    registry.register(echo()).unwrap();
    let seen = closed.clone();
    let container = Container::builder()
        .request::<Work>(move |scope: Scope| {
            let seen = seen.clone();
            async move {
                scope.on_close(move |outcome| async move { seen.lock().unwrap().push(outcome) });
                Ok::<_, ResolveError>(Work)
            }
        })
        .build();
    Setup {
        executor: Executor::new(registry, container).unwrap(),
        runs,
        closed,
    }
}

#[tokio::test]
async fn arguments_are_validated_against_the_tools_own_schema() {
    let Setup { executor, runs, .. } = setup();
    let alice = named("alice");
    for bad in [
        json!({"to": "", "cents": 5}),
        json!({"to": "carol", "cents": 0}),
        json!({"to": "carol"}),
        json!({"to": "carol", "cents": 5, "memo": "x"}),
        json!("not an object"),
    ] {
        let refused = executor.invoke("transfer", bad.clone(), &alice).await;
        assert!(
            matches!(
                &refused,
                Err(CallError::InvalidArguments { key, .. }) if key == "bank.transfer"
            ),
            "{bad}: {refused:?}"
        );
    }
    // Every violation at once.
    let both = executor
        .invoke("transfer", json!({"to": "", "cents": 0}), &alice)
        .await;
    let Err(CallError::InvalidArguments { violations, .. }) = both else {
        panic!("{both:?}");
    };
    assert_eq!(violations.0.len(), 2);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn hooks_decide_and_approvals_bind_the_exact_arguments() {
    let Setup {
        executor,
        runs,
        closed,
    } = setup();
    let arguments = json!({"to": "carol", "cents": 250});

    let bob = executor
        .invoke("transfer", arguments.clone(), &named("bob"))
        .await;
    assert!(
        matches!(
            &bob,
            Err(CallError::Denied { key }) if key == "bank.transfer"
        ),
        "{bob:?}"
    );

    let alice = named("alice");
    let pending = executor
        .invoke("transfer", arguments.clone(), &alice)
        .await
        .unwrap_err();
    let CallError::ApprovalRequired(request) = pending else {
        panic!("expected an approval request, got {pending:?}");
    };
    assert_eq!(request.key, "bank.transfer");
    assert_eq!(request.digest, Digest::of("bank.transfer", &arguments));
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    // Approved for 250 cents: 251 is another call.
    alice.approved.lock().unwrap().push(request.digest);
    let other = executor
        .invoke("transfer", json!({"to": "carol", "cents": 251}), &alice)
        .await;
    assert!(matches!(other, Err(CallError::ApprovalRequired(_))));
    let sent = executor
        .invoke("transfer", arguments, &alice)
        .await
        .unwrap();
    assert_eq!(sent, json!({"sent": 250}));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        *closed.lock().unwrap(),
        [Outcome::Ok],
        "its scope closed once"
    );

    let context = executor
        .invoke("transfer", json!({"to": "c", "cents": 1}), &"a str")
        .await;
    assert!(matches!(
        context,
        Err(CallError::ContextMismatch { ref key, .. }) if key == "bank.transfer"
    ));
}

#[tokio::test]
async fn a_failing_handler_is_a_tool_error_with_its_source() {
    let Setup { executor, .. } = setup();
    let failed = executor
        .invoke("echo", json!({"text": "fail"}), &named("alice"))
        .await
        .unwrap_err();
    let CallError::Tool { key, source } = &failed else {
        panic!("{failed:?}");
    };
    assert_eq!(
        (key.as_str(), source.to_string()),
        ("util.echo", "asked to fail".to_owned())
    );
    assert_eq!(failed.model_message(), "The tool failed.");
}

#[tokio::test]
async fn dynamic_tools_meet_the_policy_and_selectors() {
    let Setup { executor, .. } = setup();
    let registry = executor.registry();
    registry.set_policy(Policy::new().rule(Rule::deny_tag("money")));
    let refused = executor
        .invoke(
            "transfer",
            json!({"to": "carol", "cents": 1}),
            &named("alice"),
        )
        .await;
    assert!(
        matches!(refused, Err(CallError::PolicyDenied { .. })),
        "{refused:?}"
    );
    registry.disable(&Selector::tag("money"), "audit").unwrap();
    let tools = executor.tools();
    let names: Vec<_> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["echo"]);
}

#[tokio::test]
async fn dynamic_tools_are_served_on_every_front_end() {
    let Setup { executor, .. } = setup();
    let alice = named("alice");
    let exported =
        providers::export(&executor.tools(), Format::OpenAiChat { strict: false }).unwrap();
    let names: Vec<_> = exported
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["transfer", "echo"]);

    let response = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "echo", "arguments": "{\"text\": \"hi\"}"}},
        {"id": "c2", "type": "function",
         "function": {"name": "transfer", "arguments": "{\"to\": \"carol\", \"cents\": 9}"}}
    ]}}]});
    let calls = providers::parse_calls(&response, Format::OpenAiChat { strict: false }).unwrap();
    let outcomes = executor.run_calls(calls, &alice).await;
    assert_eq!(outcomes[0].result.as_ref().unwrap(), &json!({"text": "hi"}));
    assert!(matches!(
        outcomes[1].result,
        Err(CallError::ApprovalRequired(_))
    ));

    let server = McpServer::new(executor, "dynamic-test", "0.1.0");
    let client = connect(&server, alice).await;
    let listed = client.list_all_tools().await.unwrap();
    let transfer = listed.iter().find(|t| t.name == "transfer").unwrap();
    assert_eq!(
        transfer.annotations.as_ref().unwrap().read_only_hint,
        Some(false)
    );
    assert!(transfer.output_schema.is_some());
    let echoed = call(&client, "echo", json!({"text": "hi"})).await;
    assert_eq!(echoed.is_error, Some(false));
    let pending = call(&client, "transfer", json!({"to": "carol", "cents": 9})).await;
    assert_eq!(
        approval_request(&pending).unwrap().unwrap().key,
        "bank.transfer"
    );
    client.cancel().await.unwrap();
}

#[test]
fn a_tool_that_is_not_well_declared_is_refused_with_every_problem() {
    let error = DynamicTool::builder("Bank.Transfer", "move money")
        .effect(Effect::Destructive)
        .tags(["Money"])
        .input_schema(json!({"type": "array"}))
        .output_schema(json!({"type": 7}))
        .build()
        .unwrap_err();
    assert!(
        matches!(
            &error.problems[..],
            [
                DynamicToolProblem::InvalidKey { .. },
                DynamicToolProblem::InvalidName { .. },
                DynamicToolProblem::InvalidTag { .. },
                DynamicToolProblem::MissingDescription,
                DynamicToolProblem::InvalidSchema { which: "input", .. },
                DynamicToolProblem::InvalidSchema {
                    which: "output",
                    ..
                },
                DynamicToolProblem::MissingApprove {
                    effect: Effect::Destructive
                },
                DynamicToolProblem::MissingHandler,
            ]
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("the key `Bank.Transfer` is not"));

    let unexpected = DynamicTool::builder("util.ping", "ping")
        .description("Ping.")
        .effect(Effect::Read)
        .input_schema(json!({"type": "object", "properties": {"n": {"pattern": "[a-"}}}))
        .approve(person_approved)
        .handler(|_| Box::pin(async { Ok(json!(null)) }))
        .build()
        .unwrap_err();
    assert!(
        matches!(
            &unexpected.problems[..],
            [
                DynamicToolProblem::InvalidSchema { which: "input", .. },
                DynamicToolProblem::UnexpectedApprove,
            ]
        ),
        "{unexpected:?}"
    );
}
