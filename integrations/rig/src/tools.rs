//! The executor's tools as rig tools, and the handle that runs agents over
//! them.

use std::any::Any;
use std::sync::Arc;

use rig_agent::{Agent, AgentRunner};
use rig_core::message::ToolName;
use rig_core::tool::{DynamicTool, ToolContext, ToolErrorKind, ToolExecutionError, ToolOutput};
use rig_core::wasm_compat::WasmBoxedFuture;
use serde_json::Value;
use toolwright::providers::{self, ExportError, Format, ToolCall};
use toolwright::{CallError, Executor, registry::ToolEntry};

use crate::deferred::{Deferred, Outcome, ResumeError};
use crate::hook::{ApprovalMark, RunHook};
use crate::log::CallLog;

/// A toolwright [`Executor`] (or a [view](Executor::view) of one) offered
/// to rig agents, for one caller: the application's context `C` goes with
/// every call.
///
/// Cheap to clone (`Arc`s inside). Three parts:
/// - [`tools`](Self::tools): the served tools as rig [`DynamicTool`]s, for
///   [`AgentBuilder::dynamic_tools`](rig_agent::AgentBuilder::dynamic_tools).
///   Each one calls [`Executor::run_calls`] with `C`: the executor's one
///   pipeline, nothing beside it.
/// - [`run`](Self::run): drives a rig run and tells a finished run from one
///   whose writes wait for a person ([`Outcome`]).
/// - [`resume`](Self::resume): continues a deferred run once people decided.
///
/// See the [crate docs](crate) for the whole flow.
pub struct RigTools<C> {
    executor: Executor,
    ctx: Arc<C>,
    log: Arc<CallLog>,
}

impl<C> Clone for RigTools<C> {
    fn clone(&self) -> Self {
        RigTools {
            executor: self.executor.clone(),
            ctx: self.ctx.clone(),
            log: self.log.clone(),
        }
    }
}

impl<C> std::fmt::Debug for RigTools<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RigTools")
            .field("executor", &self.executor)
            .finish_non_exhaustive()
    }
}

impl<C: Any + Send + Sync> RigTools<C> {
    /// The tools of `executor`, called with `ctx` (the actor, the session:
    /// what the tools' hooks and `Context<C>` parameters receive).
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Container, Executor};
    /// use toolwright_rig::RigTools;
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let tools = RigTools::new(executor, ());
    /// assert_eq!(tools.tools().unwrap()[0].name().as_str(), "add");
    /// ```
    pub fn new(executor: Executor, ctx: C) -> Self {
        RigTools {
            log: Arc::new(CallLog::default()),
            executor,
            ctx: Arc::new(ctx),
        }
    }

    /// Every tool the executor serves now (in catalog order), as a rig
    /// dynamic tool: its name, description and input schema as toolwright
    /// advertises them, and a handler that calls the executor.
    ///
    /// The list is taken now: a tool registered later is offered once the
    /// agent is built again; one disabled or left out of the view later is
    /// refused by the executor, whatever the agent still advertises.
    ///
    /// Fails when a tool's schema cannot be written as a plain JSON Schema.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Container, Effect, Executor, Invocation, registry::Selector};
    /// use toolwright_rig::RigTools;
    ///
    /// /// Read a note.
    /// #[tool(key = "notes.read", effect = read, authorize = public)]
    /// async fn read_note(id: u64) -> String { format!("note {id}") }
    ///
    /// /// Delete a note.
    /// #[tool(key = "notes.delete", effect = destructive, authorize = public, approve = never)]
    /// async fn delete_note(id: u64) -> bool { true }
    ///
    /// async fn never(_: &(), _: &Invocation<'_, DeleteNoteArgs>) -> bool { false }
    ///
    /// let catalog = Catalog::builder()
    ///     .register::<ReadNoteArgs>()
    ///     .register::<DeleteNoteArgs>()
    ///     .build()
    ///     .unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    ///
    /// // A guest's agent sees, and can call, only what the view holds.
    /// let guest = RigTools::new(executor.view(Selector::effect(Effect::Read)), ());
    /// let tools = guest.tools().unwrap();
    /// let read = tools[0].definition();
    /// assert_eq!(tools.len(), 1);
    /// assert_eq!((read.name.as_str(), read.description.as_str()), ("read_note", "Read a note."));
    /// assert_eq!(read.parameters["required"], serde_json::json!(["id"]));
    /// ```
    pub fn tools(&self) -> Result<Vec<DynamicTool>, ExportError> {
        self.executor
            .tools()
            .iter()
            .map(|entry| self.tool(entry))
            .collect()
    }

    fn tool(&self, entry: &ToolEntry) -> Result<DynamicTool, ExportError> {
        let definition = providers::tool_definition(entry, Format::OpenAiChat { strict: false })?;
        let function = &definition["function"];
        let description = function["description"].as_str().unwrap_or_default();
        // Catalog names are never empty (`#[tool]` and `DynamicTool` check
        // them); rig's type says so again.
        let name = ToolName::new(entry.name()).map_err(|_| ExportError {
            tool: String::new(),
            provider: "rig",
            path: "(name)".into(),
            construct: "empty".into(),
        })?;
        Ok(DynamicTool::new_with_context(
            name,
            description,
            function["parameters"].clone(),
            handler(
                self.executor.clone(),
                self.ctx.clone(),
                entry.name().to_owned(),
            ),
        ))
    }

    /// Drives `runner` (a run of an agent built with [`tools`](Self::tools),
    /// configured as you like: history, turn budget, hooks) to its end.
    ///
    /// Adds one hook to the run, which notes every call that waits for
    /// approval, and ends the run before its next model call when the tool
    /// batch had one.
    ///
    /// Returns [`Outcome::Done`] with rig's response, or
    /// [`Outcome::Deferred`] with the approval requests. Every other run
    /// error is rig's own, unchanged.
    pub async fn run(
        &self,
        runner: AgentRunner,
    ) -> Result<Outcome, rig_agent::completion::PromptError> {
        let (hook, deferred) = RunHook::new();
        let result = runner.add_hook(hook).await;
        let calls = deferred.take();
        match result {
            Ok(response) => Ok(Outcome::Done(response)),
            Err(error) if calls.is_empty() => Err(error),
            Err(error) => match Deferred::from_stopped(&error, calls) {
                Some(deferred) => Ok(Outcome::Deferred(deferred)),
                None => Err(error),
            },
        }
    }

    /// A run that continues `deferred` under `agent` once people decided
    /// its requests, allowed `max_turns` model calls after the deferred
    /// calls; drive it with [`run`](Self::run).
    ///
    /// The run is rig's own resume ([`Agent::resume`]): it starts at the
    /// model turn whose calls waited, and rig executes that turn's calls
    /// again. A hook added here answers them: a call answered before (when
    /// the run deferred, or by an earlier resume of the same turn through
    /// this handle) gets that answer back without reaching the executor;
    /// the waiting ones go through the executor again, so an approved one
    /// runs (once: the ledger consumes its approval), a rejected one tells
    /// the model the person's reason, and one still undecided defers the
    /// run again.
    pub async fn resume(
        &self,
        agent: &Agent,
        deferred: Deferred,
        max_turns: usize,
    ) -> Result<AgentRunner, ResumeError> {
        let advertised = agent
            .tool_definitions(None)
            .await
            .map_err(|error| ResumeError::Tools(Box::new(error)))?;
        let approvals = self.executor.approvals().cloned();
        let (run, replay) =
            deferred.into_run(self.log.clone(), approvals, advertised, max_turns)?;
        Ok(agent.resume(run).add_hook(replay))
    }
}

/// The callback of the rig tool `name`: one call through the executor.
fn handler<C: Any + Send + Sync>(
    executor: Executor,
    ctx: Arc<C>,
    name: String,
) -> impl for<'a> Fn(
    &'a mut ToolContext,
    Value,
) -> WasmBoxedFuture<'a, Result<ToolOutput, ToolExecutionError>>
+ Send
+ Sync
+ 'static {
    move |context, arguments| {
        let (executor, ctx, name) = (executor.clone(), ctx.clone(), name.clone());
        Box::pin(async move { call(&executor, &*ctx, &name, arguments, context).await })
    }
}

/// Calls `name` through the executor and shapes the outcome for rig: the
/// text the executor shows models, and, for a call waiting for approval or
/// rejected, a mark in the result's host-only context for the run's hook.
async fn call<C: Any + Send + Sync>(
    executor: &Executor,
    ctx: &C,
    name: &str,
    arguments: Value,
    context: &mut ToolContext,
) -> Result<ToolOutput, ToolExecutionError> {
    // `run_calls` rather than `invoke`: the same pipeline, and the text a
    // model is shown, cut at the tool's result bound.
    let call = ToolCall::new("rig", name, arguments);
    let Some(outcome) = executor.run_calls(vec![call], ctx).await.pop() else {
        return Err(ToolExecutionError::other("the executor answered no call"));
    };
    let text = outcome.model_text();
    let error = match outcome.result {
        Ok(_) => return Ok(ToolOutput::text(text)),
        Err(error) => error,
    };
    let mark = match &error {
        CallError::ApprovalRequired(request) => Some(ApprovalMark::Required((**request).clone())),
        CallError::NotApproved { .. } => Some(ApprovalMark::Rejected),
        _ => None,
    };
    if let Some(mark) = mark {
        context.insert_result(mark).map_err(|error| {
            ToolExecutionError::other("could not mark the call's approval").with_source(error)
        })?;
    }
    Err(ToolExecutionError::new(kind(&error), error.to_string())
        .with_model_feedback(text)
        .with_source(error))
}

/// rig's kind for a failed call.
fn kind(error: &CallError) -> ToolErrorKind {
    match error {
        CallError::UnknownTool { .. } | CallError::Disabled { .. } => ToolErrorKind::NotFound,
        CallError::InvalidArguments { .. } => ToolErrorKind::InvalidArgs,
        CallError::Denied { .. }
        | CallError::PolicyDenied { .. }
        | CallError::NotApproved { .. }
        | CallError::ApprovalRequired(_) => ToolErrorKind::PermissionDenied,
        CallError::Timeout { .. } => ToolErrorKind::Timeout,
        _ => ToolErrorKind::Other,
    }
}
