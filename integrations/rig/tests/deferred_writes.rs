//! A real rig agent, with rig's real OpenAI client, against a scripted
//! OpenAI-compatible server on 127.0.0.1: reads run, writes wait for a
//! person, approved writes run once on resume, replays run nothing again,
//! and a rejection's reason reaches the model.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use rig_agent::{Agent, AgentBuilder};
use rig_core::providers::openai::OpenAIConfig;
use serde_json::{Value, json};
use toolwright::approval::{LedgerError, MemoryLedger, Status};
use toolwright::{Catalog, Container, Executor, Inject, Principal, approval::Approvals, tool};
use toolwright_rig::{Deferred, Outcome, RigTools};

struct Caller(&'static str);

impl Principal for Caller {
    fn id(&self) -> &str {
        self.0
    }
}

const ALICE: Caller = Caller("alice");
const BOB: Caller = Caller("bob");

/// How often each tool body ran.
#[derive(Default)]
struct Runs {
    reads: AtomicUsize,
    payments: AtomicUsize,
}

/// Read an account's balance in cents.
#[tool(key = "accounts.balance", effect = read, authorize = public)]
async fn get_balance(
    /// The account.
    account: String,
    runs: Inject<Runs>,
) -> u64 {
    runs.reads.fetch_add(1, Ordering::SeqCst);
    if account == "ops" { 120_000 } else { 0 }
}

/// Pay a supplier.
#[tool(key = "payments.pay", effect = destructive, authorize = public,
       approve = Caller::approval_ledger)]
async fn pay(
    /// Who is paid.
    supplier: String,
    /// How much, in cents.
    cents: u64,
    runs: Inject<Runs>,
) -> String {
    runs.payments.fetch_add(1, Ordering::SeqCst);
    format!("paid {supplier} {cents} cents")
}

/// The scripted model: answers each chat completion with the next reply,
/// and keeps every request it received.
#[derive(Clone, Default)]
struct Script {
    replies: Arc<Mutex<VecDeque<Value>>>,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl Script {
    fn reply(&self, reply: Value) {
        self.replies.lock().unwrap().push_back(reply);
    }

    fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    /// The `tool` messages of the latest request, by call id.
    fn tool_results(&self) -> Vec<(String, String)> {
        let requests = self.requests();
        let last = requests.last().expect("the model was asked");
        last["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|message| message["role"] == "tool")
            .map(|message| {
                let text = match &message["content"] {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                (message["tool_call_id"].as_str().unwrap().to_owned(), text)
            })
            .collect()
    }
}

async fn complete(
    State(script): State<Script>,
    Json(request): Json<Value>,
) -> Result<Json<Value>, (StatusCode, String)> {
    script.requests.lock().unwrap().push(request);
    let reply = script.replies.lock().unwrap().pop_front();
    reply.map(Json).ok_or((
        StatusCode::INTERNAL_SERVER_ERROR,
        "the script has no reply left".to_owned(),
    ))
}

/// A model reply that calls tools: `(id, name, arguments)`.
fn calls(calls: &[(&str, &str, Value)]) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()},
            })
        })
        .collect();
    completion(
        json!({"role": "assistant", "content": null, "tool_calls": tool_calls}),
        "tool_calls",
    )
}

/// A model reply that answers in text.
fn says(text: &str) -> Value {
    completion(json!({"role": "assistant", "content": text}), "stop")
}

fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })
}

struct Setup {
    script: Script,
    agent: Agent,
    executor: Executor,
    tools: RigTools<Caller>,
    approvals: Approvals,
    runs: Arc<Runs>,
}

async fn setup() -> Setup {
    let script = Script::default();
    let app = Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(script.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let runs = Arc::new(Runs::default());
    let approvals = Approvals::new(MemoryLedger::new());
    let catalog = Catalog::builder()
        .register::<GetBalanceArgs>()
        .register::<PayArgs>()
        .build()
        .unwrap();
    let container = Container::builder().app::<Runs>(runs.clone()).build();
    let executor = Executor::builder(catalog, container)
        .approvals(approvals.clone())
        .build()
        .unwrap();
    let tools = RigTools::new(executor.clone(), ALICE);

    // rig's own OpenAI client, on Chat Completions (`OpenAI::completion`
    // would take the Responses API for the official dialect).
    let openai = OpenAIConfig::new("sk-test")
        .with_base_url(format!("http://{address}/v1"))
        .client();
    let agent = AgentBuilder::new(openai.chat("gpt-test"))
        .preamble("You pay suppliers.")
        .dynamic_tools(tools.tools().unwrap())
        .build();
    Setup {
        script,
        agent,
        executor,
        tools,
        approvals,
        runs,
    }
}

impl Setup {
    fn reads(&self) -> usize {
        self.runs.reads.load(Ordering::SeqCst)
    }

    fn payments(&self) -> usize {
        self.runs.payments.load(Ordering::SeqCst)
    }

    async fn ask(&self, prompt: &str) -> Outcome {
        self.tools
            .run(self.agent.prompt(prompt).max_turns(4))
            .await
            .unwrap()
    }

    async fn resume(&self, deferred: Deferred) -> Outcome {
        let runner = self.tools.resume(&self.agent, deferred, 3).await.unwrap();
        self.tools.run(runner).await.unwrap()
    }

    /// A turn that reads the balance and pays ACME, deferred.
    async fn deferred_payment(&self) -> Deferred {
        self.script.reply(calls(&[
            ("call_read", "get_balance", json!({"account": "ops"})),
            (
                "call_pay",
                "pay",
                json!({"supplier": "ACME", "cents": 1200}),
            ),
        ]));
        match self.ask("Pay ACME their 12 euros if we can.").await {
            Outcome::Deferred(deferred) => deferred,
            other => panic!("expected the payment to wait, got {other:?}"),
        }
    }
}

fn done(outcome: Outcome) -> String {
    match outcome {
        Outcome::Done(response) => response.output(),
        other => panic!("expected a finished run, got {other:?}"),
    }
}

#[tokio::test]
async fn a_read_runs_through_the_executor_and_the_model_reads_its_result() {
    let setup = setup().await;
    setup.script.reply(calls(&[(
        "call_1",
        "get_balance",
        json!({"account": "ops"}),
    )]));
    setup.script.reply(says("Ops holds 1200 euros."));

    let answer = done(setup.ask("How much is in ops?").await);
    assert_eq!(answer, "Ops holds 1200 euros.");
    assert_eq!(setup.reads(), 1);
    assert_eq!(
        setup.script.tool_results(),
        [("call_1".to_owned(), "120000".to_owned())]
    );
    // The tools rig advertised are toolwright's, schema and all.
    let tools = &setup.script.requests()[0]["tools"];
    let pay = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "pay")
        .unwrap();
    assert_eq!(pay["function"]["description"], "Pay a supplier.");
    assert_eq!(
        pay["function"]["parameters"]["required"],
        json!(["supplier", "cents"])
    );
}

#[tokio::test]
async fn a_write_that_needs_approval_ends_the_turn_deferred_and_does_not_run() {
    let setup = setup().await;
    let deferred = setup.deferred_payment().await;

    assert_eq!(setup.payments(), 0);
    // The read of the same turn ran; the model heard nothing yet.
    assert_eq!(setup.reads(), 1);
    assert_eq!(setup.script.requests().len(), 1);

    let [call] = deferred.calls() else {
        panic!("expected one waiting call: {:?}", deferred.calls())
    };
    assert_eq!(call.call_id.to_string(), "call_pay");
    let request = &call.request;
    assert_eq!(
        (request.key.as_str(), request.name.as_str()),
        ("payments.pay", "pay")
    );
    assert_eq!(
        request.arguments,
        json!({"supplier": "ACME", "cents": 1200})
    );
    assert_eq!(request.requested_by.as_deref(), Some("alice"));
    let pending = setup.approvals.pending().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(Some(pending[0].id), request.id);
    // The conversation before the turn: the prompt.
    assert_eq!(deferred.history().len(), 1);
    assert_eq!(deferred.turn().tool_calls().count(), 2);
}

#[tokio::test]
async fn an_approved_write_runs_exactly_once_on_resume() {
    let setup = setup().await;
    let deferred = setup.deferred_payment().await;
    let id = deferred.calls()[0].request.id.unwrap();

    // Four eyes: Alice asked, so Alice cannot approve; Bob can.
    let own = setup
        .approvals
        .approve(id, &ALICE, "mine")
        .await
        .unwrap_err();
    assert!(matches!(own, LedgerError::OwnRequest { .. }));
    setup
        .approvals
        .approve(id, &BOB, "invoice checked")
        .await
        .unwrap();

    setup.script.reply(says("Paid ACME 12 euros."));
    let answer = done(setup.resume(deferred).await);
    assert_eq!(answer, "Paid ACME 12 euros.");
    assert_eq!(setup.payments(), 1);
    // rig executed the whole turn again; the read was answered from before.
    assert_eq!(setup.reads(), 1);
    assert_eq!(
        setup.script.tool_results(),
        [
            ("call_read".to_owned(), "120000".to_owned()),
            ("call_pay".to_owned(), "paid ACME 1200 cents".to_owned()),
        ]
    );
    let approval = setup.approvals.get(id).await.unwrap();
    assert_eq!(approval.status, Status::Settled);
}

#[tokio::test]
async fn a_replayed_call_gets_its_earlier_result_and_runs_nothing_again() {
    let setup = setup().await;
    let deferred = setup.deferred_payment().await;
    let id = deferred.calls()[0].request.id.unwrap();
    setup.approvals.approve(id, &BOB, "ok").await.unwrap();

    setup.script.reply(says("Paid."));
    assert_eq!(done(setup.resume(deferred.clone()).await), "Paid.");
    let first = setup.script.tool_results();

    // The same deferred turn again (a retried resume, say): rig replays
    // both calls; neither body runs, and no new approval is asked for.
    setup.script.reply(says("Paid, as I said."));
    assert_eq!(done(setup.resume(deferred).await), "Paid, as I said.");
    assert_eq!(setup.payments(), 1);
    assert_eq!(setup.reads(), 1);
    assert_eq!(setup.script.tool_results(), first);
    assert!(setup.approvals.pending().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_rejected_write_tells_the_model_the_reason_and_never_runs() {
    let setup = setup().await;
    let deferred = setup.deferred_payment().await;
    let id = deferred.calls()[0].request.id.unwrap();
    setup
        .approvals
        .reject(id, &BOB, "ACME was paid last week")
        .await
        .unwrap();

    setup
        .script
        .reply(says("I did not pay ACME: they were paid last week."));
    let answer = done(setup.resume(deferred).await);
    assert_eq!(answer, "I did not pay ACME: they were paid last week.");
    assert_eq!(setup.payments(), 0);
    let results = setup.script.tool_results();
    assert_eq!(results[1].0, "call_pay");
    assert_eq!(
        results[1].1,
        "A person rejected this call: ACME was paid last week"
    );
}

#[tokio::test]
async fn a_write_still_undecided_defers_the_resumed_run_again() {
    let setup = setup().await;
    let deferred = setup.deferred_payment().await;
    let again = match setup.resume(deferred.clone()).await {
        Outcome::Deferred(again) => again,
        other => panic!("expected the payment to wait still, got {other:?}"),
    };
    // The same turn, waiting for the same request.
    assert_eq!(again, deferred);
    assert_eq!(setup.payments(), 0);
    assert_eq!(setup.approvals.pending().await.unwrap().len(), 1);
    // The model was asked once, for the original turn.
    assert_eq!(setup.script.requests().len(), 1);
}

#[tokio::test]
async fn a_deferred_run_stored_as_json_resumes_in_a_new_handle() {
    let setup = setup().await;
    let stored = serde_json::to_string(&setup.deferred_payment().await).unwrap();
    let id = setup.approvals.pending().await.unwrap()[0].id;
    setup.approvals.approve(id, &BOB, "ok").await.unwrap();

    // As in another process: a new handle that remembers no call.
    let deferred: Deferred = serde_json::from_str(&stored).unwrap();
    let tools = RigTools::new(setup.executor.clone(), ALICE);
    setup.script.reply(says("Paid."));
    let runner = tools.resume(&setup.agent, deferred, 3).await.unwrap();
    assert_eq!(done(tools.run(runner).await.unwrap()), "Paid.");
    assert_eq!(setup.payments(), 1);
    // The read's result travelled with the deferred run.
    assert_eq!(setup.reads(), 1);
    assert_eq!(setup.script.tool_results()[0].1, "120000");
}

#[tokio::test]
async fn a_call_id_used_again_in_a_new_conversation_runs_again() {
    // Some servers number calls afresh in every reply: `call_0` each time.
    let setup = setup().await;
    for answer in ["Ops holds 1200 euros.", "Still 1200 euros."] {
        setup.script.reply(calls(&[(
            "call_0",
            "get_balance",
            json!({"account": "ops"}),
        )]));
        setup.script.reply(says(answer));
        assert_eq!(done(setup.ask("How much is in ops?").await), answer);
    }
    assert_eq!(setup.reads(), 2);
}
