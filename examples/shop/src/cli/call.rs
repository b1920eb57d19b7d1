//! `shop call NAME ARGUMENTS --as ACTOR`: one call, through the actor's view.

use std::process::ExitCode;

use serde_json::Value;
use toolwright::{BoxError, CallError};

use super::open;
use crate::table::sorted;

/// Calls `name` with `arguments` (JSON) as `actor` and prints the outcome;
/// fails unless the call succeeded.
pub(super) async fn run(
    database: &str,
    name: &str,
    arguments: &str,
    actor: &str,
) -> Result<ExitCode, BoxError> {
    let shop = open(database).await?;
    let caller = shop.caller(actor).await?;
    let arguments: Value =
        serde_json::from_str(arguments).map_err(|e| format!("the arguments are not JSON: {e}"))?;
    let executor = shop.executor_for(&caller.actor);
    let result = executor.invoke(name, arguments, &caller).await;
    print_result(&result);
    Ok(match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    })
}

fn print_result(result: &Result<Value, CallError>) {
    match result {
        Ok(value) => println!("ok: {}", sorted(value)),
        Err(CallError::ApprovalRequired(request)) => {
            println!(
                "needs approval: {} {}",
                request.key,
                sorted(&request.arguments)
            );
            if let Some(id) = request.id {
                println!("  approve with: shop approve {id} --as <manager>");
            }
        }
        Err(error @ CallError::Tool { .. }) => {
            let cause = std::error::Error::source(error).map(ToString::to_string);
            println!("failed, nothing was written: {}", cause.unwrap_or_default());
        }
        Err(error) => println!("refused: {error}"),
    }
}
