//! Running the calls of one model turn ([`Executor::run_calls`]): writes
//! alone and in order, reads side by side.

use futures_util::StreamExt as _;

use crate::content;
use crate::effect::Effect;
use crate::error::CallError;
use crate::executor::{Executor, Found};

use super::schema::strip_absent_nulls;
use super::{CallOutcome, Format, ToolCall};

/// How many `read` calls of one batch run at once, unless told otherwise.
pub const DEFAULT_CONCURRENCY: usize = 8;

impl Executor {
    /// Runs the calls of one model turn through the pipeline, reads at most
    /// [`DEFAULT_CONCURRENCY`] at a time, and returns their outcomes in the
    /// calls' order. One call failing (even panicking) never cancels
    /// another, nor keeps a later one from running.
    ///
    /// # Order
    ///
    /// Every name is looked up when the returned future is first polled;
    /// the calls then run in the order the model gave them, in steps:
    ///
    /// - a call of a `write` or `destructive` tool runs alone: it starts
    ///   only after every earlier call of the batch has finished, and no
    ///   later call starts before it has finished. Writes therefore happen
    ///   one at a time, in the model's order, and a call the model put after
    ///   a write sees what the write did;
    /// - consecutive calls of `read` tools run concurrently, at most
    ///   [`DEFAULT_CONCURRENCY`] (or
    ///   [`run_calls_with_limit`](Self::run_calls_with_limit)'s `limit`) at
    ///   once, started in order. A call refused at lookup
    ///   (unknown, disabled, outside the view) runs nothing and counts as
    ///   a read.
    ///
    /// The order holds within one batch. Calls of other batches and other
    /// callers are not ordered with it; a tool's `concurrency` and
    /// `exclusive` limits hold across all of them.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use serde_json::json;
    /// use toolwright::providers::ToolCall;
    /// use toolwright::{tool, Catalog, Container, Context, Executor, Invocation};
    ///
    /// #[derive(Clone, Default)]
    /// struct Session { log: Arc<Mutex<Vec<String>>> }
    ///
    /// /// Read the balance.
    /// #[tool(key = "bank.balance", effect = read, authorize = public)]
    /// async fn balance(session: Context<Session>) -> u64 {
    ///     session.log.lock().unwrap().push("balance".into());
    ///     100
    /// }
    ///
    /// /// Move money.
    /// #[tool(key = "bank.transfer", effect = write, authorize = public, approve = yes)]
    /// async fn transfer(cents: u64, session: Context<Session>) -> bool {
    ///     session.log.lock().unwrap().push(format!("transfer {cents}"));
    ///     true
    /// }
    ///
    /// async fn yes(_: &Session, _: &Invocation<'_, TransferArgs>) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder()
    ///     .register::<BalanceArgs>()
    ///     .register::<TransferArgs>()
    ///     .build()
    ///     .unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let session = Session::default();
    /// let calls = vec![
    ///     ToolCall::new("c1", "transfer", json!({"cents": 5})),
    ///     ToolCall::new("c2", "transfer", json!({"cents": 7})),
    ///     ToolCall::new("c3", "balance", json!({})),
    /// ];
    /// let outcomes = executor.run_calls(calls, &session).await;
    /// assert!(outcomes.iter().all(|outcome| !outcome.is_error()));
    /// // The writes in the model's order, each finished before the next call.
    /// assert_eq!(*session.log.lock().unwrap(), ["transfer 5", "transfer 7", "balance"]);
    /// # }
    /// ```
    pub async fn run_calls<C: std::any::Any + Send + Sync>(
        &self,
        calls: Vec<ToolCall>,
        ctx: &C,
    ) -> Vec<CallOutcome> {
        self.run_calls_with_limit(calls, ctx, DEFAULT_CONCURRENCY)
            .await
    }

    /// [`Executor::run_calls`] with another bound on the `read` calls
    /// running at once (at least 1; 1 runs every call alone, in order).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::providers::ToolCall;
    /// use toolwright::{tool, Catalog, Container, Executor};
    ///
    /// /// Look up a city's weather.
    /// #[tool(key = "weather.get", effect = read, authorize = public)]
    /// async fn weather(city: String) -> String { format!("sunny in {city}") }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<WeatherArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let calls = ["Oslo", "Lima", "Pune"]
    ///     .iter()
    ///     .enumerate()
    ///     .map(|(i, city)| ToolCall::new(format!("c{i}"), "weather", json!({ "city": city })))
    ///     .collect();
    /// let outcomes = executor.run_calls_with_limit(calls, &(), 2).await;
    /// assert_eq!(outcomes[2].model_text(), "sunny in Pune");
    /// # }
    /// ```
    pub async fn run_calls_with_limit<C: std::any::Any + Send + Sync>(
        &self,
        calls: Vec<ToolCall>,
        ctx: &C,
        limit: usize,
    ) -> Vec<CallOutcome> {
        let limit = limit.max(1);
        let total = calls.len();
        let mut planned = calls
            .into_iter()
            .map(|call| {
                let found = self.find_call(&call.name, ctx);
                (call, found)
            })
            .peekable();
        let mut outcomes = Vec::with_capacity(total);
        while let Some((call, found)) = planned.next() {
            if writes(&found) {
                outcomes.push(self.run_call(call, found, ctx).await);
                continue;
            }
            let mut reads = vec![self.run_call(call, found, ctx)];
            while let Some((call, found)) = planned.next_if(|(_, found)| !writes(found)) {
                reads.push(self.run_call(call, found, ctx));
            }
            // At most `limit` in flight, outcomes in the calls' order.
            let reads = futures_util::stream::iter(reads).buffered(limit);
            outcomes.extend(reads.collect::<Vec<_>>().await);
        }
        outcomes
    }

    async fn run_call<C: std::any::Any + Send + Sync>(
        &self,
        call: ToolCall,
        found: Result<Found, CallError>,
        ctx: &C,
    ) -> CallOutcome {
        let max_result = self.max_result(found.as_ref().ok().map(Found::tool));
        let contents = found
            .as_ref()
            .is_ok_and(|found| content::is_contents(found.tool().output_schema()));
        let result = match (found, call.arguments) {
            (Err(refused), _) => Err(refused),
            (Ok(found), Ok(mut arguments)) => {
                if call.format.is_some_and(Format::is_openai) {
                    strip_absent_nulls(found.tool().input_schema(), &mut arguments);
                }
                self.invoke_found(found, arguments, ctx, None).await
            }
            (Ok(found), Err(malformed)) => {
                let error = CallError::InvalidArguments {
                    key: found.tool().served().key.clone(),
                    violations: crate::error::Violations(vec![crate::error::Violation {
                        path: String::new(),
                        message: malformed.to_string(),
                    }]),
                };
                self.refused(Some(&found), &call.name, ctx, &error);
                Err(error)
            }
        };
        let mut outcome = CallOutcome::new(call.id, call.name, result).with_max_result(max_result);
        outcome.contents = contents;
        outcome
    }
}

/// Whether a call found `found` must run alone in its batch: a call of a
/// tool that changes something.
fn writes(found: &Result<Found, CallError>) -> bool {
    found
        .as_ref()
        .is_ok_and(|found| found.tool().effect() != Effect::Read)
}
