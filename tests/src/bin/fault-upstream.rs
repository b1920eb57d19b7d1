//! An MCP server over stdio for the import tests' faults, on toolwright's
//! own server: a tool that answers, one that never does, one that kills
//! the process mid-call, and one whose result is as large as asked.

use toolwright::mcp::McpServer;
use toolwright::{Catalog, Container, Executor, tool};

/// Say it back.
#[tool(key = "faults.echo", effect = read, authorize = public)]
async fn echo(message: String) -> String {
    format!("Echo: {message}")
}

/// Never answer.
#[tool(key = "faults.hang", effect = read, authorize = public)]
async fn hang() -> String {
    std::future::pending().await
}

/// End the server in the middle of the call.
#[tool(key = "faults.crash", effect = read, authorize = public)]
async fn crash() -> String {
    std::process::exit(3)
}

/// A text of `chars` characters.
#[tool(key = "faults.big", effect = read, authorize = public)]
async fn big(chars: usize) -> String {
    "x".repeat(chars)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let catalog = Catalog::builder()
        .register::<EchoArgs>()
        .register::<HangArgs>()
        .register::<CrashArgs>()
        .register::<BigArgs>()
        .build()?;
    let executor = Executor::builder(catalog, Container::default())
        // Results as large as asked: the importing side sets the bound.
        .max_result(usize::MAX)
        .build()?;
    McpServer::<()>::builder(executor, "fault-upstream", "0.1.0")
        .build()
        .serve_stdio(())
        .await?;
    Ok(())
}
