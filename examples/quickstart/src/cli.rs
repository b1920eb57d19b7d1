//! The quickstart's command line.

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Parser;
use toolwright::approval::MemoryLedger;
use toolwright::mcp::{self, HttpOptions, Rejection};
use toolwright::providers::{self, Format};
use toolwright::{BoxError, Catalog, approval::Approvals};

use crate::{Actor, executor, mcp_server, serve_anonymous};

/// A shared task list served as tools. Without options, runs a narrated demo.
#[derive(Parser)]
#[command(name = "quickstart", version)]
struct Cli {
    /// Print the tools for a model API and exit: openai, openai-strict,
    /// openai-responses, openai-responses-strict, anthropic, gemini,
    /// gemini-json-schema
    #[arg(long, value_name = "NAME", group = "mode")]
    format: Option<Format>,
    /// Serve MCP on stdin/stdout, as the non-admin `local`
    #[arg(long, group = "mode")]
    stdio: bool,
    /// Serve MCP at http://ADDR/mcp; the bearer token `ada-token` is an
    /// admin, `bob-token` is not
    #[arg(long, value_name = "ADDR", group = "mode")]
    http: Option<SocketAddr>,
    /// With `--http ADDR --anonymous`, the same without credentials: every
    /// caller is the non-admin `guest` (for clients that cannot send a
    /// token); ADDR must be loopback, such as 127.0.0.1:8000
    #[arg(long, requires = "http")]
    anonymous: bool,
}

/// Runs the quickstart's command line (arguments without the program name).
pub async fn run(args: Vec<String>) -> ExitCode {
    let cli = match Cli::try_parse_from(std::iter::once("quickstart".into()).chain(args)) {
        Ok(cli) => cli,
        // `--help` and `--version` too, with status 0.
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    // Anyone who can reach an anonymous endpoint gets in: this one, only
    // from this machine.
    if let Some(addr) = cli
        .http
        .filter(|addr| cli.anonymous && !addr.ip().is_loopback())
    {
        let port = addr.port();
        eprintln!("--anonymous serves a loopback address only, such as 127.0.0.1:{port}");
        return ExitCode::from(2);
    }
    match execute(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("quickstart: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn execute(cli: Cli) -> Result<(), BoxError> {
    if let Some(format) = cli.format {
        let tools = providers::export(&Catalog::discover()?, format)?;
        println!("{}", serde_json::to_string_pretty(&tools)?);
        return Ok(());
    }
    if !cli.stdio && cli.http.is_none() {
        // Four eyes and a day to decide: the default rules.
        let approvals = Approvals::new(MemoryLedger::new());
        crate::demo::run(&executor(approvals.clone())?, &approvals).await;
        return Ok(());
    }
    // Over MCP the person at the client approves their own agent's writes,
    // when asked through elicitation.
    let approvals = Approvals::builder(MemoryLedger::new())
        .allow_self_approval()
        .build();
    let server = mcp_server(executor(approvals)?);
    match cli.http {
        None => {
            server
                .build()
                .serve_stdio(Actor::new("local", false))
                .await?
        }
        Some(addr) if cli.anonymous => {
            eprintln!("serving MCP at http://{addr}/mcp (no credentials: every caller is `guest`)");
            serve_anonymous(server, addr).await?;
        }
        Some(addr) => {
            let (ada, bob) = (Actor::new("ada", true), Actor::new("bob", false));
            let authenticate =
                move |parts: &mcp::http::request::Parts| match mcp::bearer_token(&parts.headers) {
                    Some("ada-token") => Ok(ada.clone()),
                    Some("bob-token") => Ok(bob.clone()),
                    _ => Err(Rejection::unauthorized()),
                };
            eprintln!("serving MCP at http://{addr}/mcp (bearer token: ada-token or bob-token)");
            let options = HttpOptions::default();
            server
                .build()
                .serve_http(addr, authenticate, options)
                .await?;
        }
    }
    Ok(())
}
