//! The narrated demo `cargo run -p quickstart` runs: calls that are
//! allowed, denied, waiting for approval and approved, as a caller sees
//! them.

use serde_json::{Value, json};
use toolwright::approval::ApprovalId;
use toolwright::{
    CallError, Executor,
    approval::{ApprovalRequest, Approvals},
    executor::Preflight,
};

use crate::Actor;

/// Runs the demo on `executor`, whose writes `approvals` decides.
pub(crate) async fn run(executor: &Executor, approvals: &Approvals) {
    let (ada, bob) = (&Actor::new("ada", true), &Actor::new("bob", false));
    print_tools(executor);

    println!("\n== A write waits for someone else's approval, then runs once");
    let add = json!({"title": "water the plants"});
    if let Some(id) = show(executor, bob, "add_task", add.clone()).await {
        // Asking again, or asking first, finds the same request.
        preflight(executor, bob, "add_task", add.clone()).await;
        approve(approvals, id, bob).await;
        approve(approvals, id, ada).await;
        show(executor, bob, "add_task", add.clone()).await;
        show(executor, bob, "add_task", add).await;
        audit(approvals, id).await;
    }

    println!("\n== Reads, and what the model may not do");
    show(executor, bob, "list_tasks", json!({})).await;
    show(executor, bob, "add_task", json!({"title": ""})).await;
    show(executor, bob, "list_tasks", json!({"store": "mine"})).await;
    show(executor, bob, "delete_task", json!({"id": 1})).await;

    println!("\n== Each actor is shown only their tools, and can call no other");
    for actor in [ada, bob] {
        let tools = executor.view(actor.view.clone()).tools();
        let names: Vec<_> = tools.iter().map(|tool| tool.name()).collect();
        println!("  {} sees {}", actor.name, names.join(", "));
    }
    show(executor, bob, "clear_tasks", json!({})).await;

    println!("\n== A destructive call that fails rolls its unit of work back");
    let missing = json!({"id": 99});
    if let Some(id) = show(executor, ada, "delete_task", missing.clone()).await {
        approve(approvals, id, bob).await;
        show(executor, ada, "delete_task", missing).await;
        audit(approvals, id).await;
    }

    println!("\n== The same tool with the right arguments");
    let first = json!({"id": 1});
    if let Some(id) = show(executor, ada, "delete_task", first.clone()).await {
        approve(approvals, id, bob).await;
        show(executor, ada, "delete_task", first).await;
    }
    show(executor, ada, "list_tasks", json!({})).await;
}

/// The tools as a table: what a model is offered, and how each is called.
fn print_tools(executor: &Executor) {
    let tools = executor.tools();
    println!("toolwright quickstart: {} tools\n", tools.len());
    let header = ("name", "key", "effect", "inputs");
    println!(
        "{:<12} {:<14} {:<12} {:<24} description",
        header.0, header.1, header.2, header.3
    );
    println!("{}", "-".repeat(96));
    for tool in &tools {
        let inputs = tool.input_schema()["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
            .unwrap_or_default();
        let (name, key, effect) = (tool.name(), tool.key(), tool.effect());
        let description = tool.description();
        println!("{name:<12} {key:<14} {effect:<12} {inputs:<24} {description}");
    }
}

/// Calls `name` as `who`, through their view, and prints what happened:
/// the id of the request to decide when the call needs approval.
async fn show(executor: &Executor, who: &Actor, name: &str, args: Value) -> Option<ApprovalId> {
    println!("\n> {} calls {name} {args}", who.name);
    // The actor's view: what they are not shown, they cannot call.
    match executor
        .view(who.view.clone())
        .invoke(name, args, who)
        .await
    {
        Ok(result) => println!("  ok: {result}"),
        Err(CallError::ApprovalRequired(request)) => {
            print_request(&request);
            return request.id;
        }
        Err(error @ CallError::InvalidArguments { .. }) => println!("  invalid: {error}"),
        Err(error @ CallError::Tool { .. }) => {
            let cause = std::error::Error::source(&error).map(ToString::to_string);
            println!("  failed: {error}: {}", cause.unwrap_or_default());
        }
        Err(error) => println!("  refused: {error}"),
    }
    None
}

/// Asks whether `who`'s call would run, running nothing: what an agent
/// loop or a UI does before it acts.
async fn preflight(executor: &Executor, who: &Actor, name: &str, args: Value) {
    println!("\n> {} preflights {name} {args}", who.name);
    match executor
        .view(who.view.clone())
        .preflight(name, args, who)
        .await
    {
        Ok(Preflight::WouldRun) => println!("  would run"),
        Ok(Preflight::NeedsApproval(request)) => print_request(&request),
        Ok(Preflight::Denied(error)) | Err(error) => println!("  refused: {error}"),
        Ok(other) => println!("  {other:?}"),
    }
}

fn print_request(request: &ApprovalRequest) {
    let id = request.id.map_or("?".into(), |id| id.to_string());
    let (key, arguments) = (&request.key, &request.arguments);
    println!("  needs approval: request {id} ({key} {arguments})");
}

/// `by` approves request `id`, under the approvals' rules.
async fn approve(approvals: &Approvals, id: ApprovalId, by: &Actor) {
    println!("\n> {} approves request {id}", by.name);
    match approvals.approve(id, by, "looks right").await {
        Ok(approval) => println!("  {}", approval.status),
        Err(error) => println!("  refused: {error}"),
    }
}

/// What the ledger keeps of request `id`: the audit trail.
async fn audit(approvals: &Approvals, id: ApprovalId) {
    println!("\n> the ledger on request {id}");
    match approvals.get(id).await {
        Ok(approval) => println!(
            "  {} ({}): asked by {}, decided by {}",
            approval.status,
            approval.settlement.map_or("no outcome yet", |s| s.as_str()),
            approval.requested_by,
            approval.decided_by.as_deref().unwrap_or("nobody"),
        ),
        Err(error) => println!("  unavailable: {error}"),
    }
}
