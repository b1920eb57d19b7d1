//! The `shop` command line: one module per command; `shop` alone runs the
//! narrated demo (`demo.rs`).

mod call;
mod decide;
mod requests;
mod serve;
mod token;
mod tools;

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use toolwright::BoxError;
use toolwright::approval::ApprovalId;
use toolwright::providers::Format;

use crate::app::Shop;
use crate::database::open_database;
use decide::Decision;

/// A shop whose products, prices and orders are tools.
#[derive(Debug, Parser)]
#[command(name = "shop", version)]
pub struct Cli {
    /// The database: `sqlite://...`, or `postgres://...`, which several
    /// `serve --http` processes can share; the demo always uses a fresh
    /// in-memory one.
    #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE, global = true)]
    database: String,
    #[command(subcommand)]
    command: Option<Command>,
}

/// Who the admin page's operator is, in the log and the approvals.
pub const ADMIN_OPERATOR: &str = "operator";

/// Where the shop keeps its data unless told otherwise.
pub const DEFAULT_DATABASE: &str = "sqlite://.shop/shop.db";

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the tools, as a table or in a model provider's format.
    Tools {
        /// openai, openai-strict, openai-responses, openai-responses-strict,
        /// anthropic, gemini or gemini-json-schema.
        #[arg(long)]
        format: Option<Format>,
    },
    /// Call a tool as someone: `shop call list_products '{}' --as alice`.
    Call {
        /// The tool's name.
        name: String,
        /// The arguments, a JSON object.
        arguments: String,
        #[command(flatten)]
        who: Who,
    },
    /// Approve a pending request: the requester's identical call then runs once.
    Approve {
        /// The request's id, as the call printed it.
        id: ApprovalId,
        #[command(flatten)]
        who: Who,
        /// Why, for the ledger.
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Reject a pending request: the identical call is refused until it expires.
    Reject {
        /// The request's id, as the call printed it.
        id: ApprovalId,
        #[command(flatten)]
        who: Who,
        /// Why, for the ledger and the requester.
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// List the requests waiting for a manager.
    Requests,
    /// Serve the tools to MCP clients.
    Serve(serve::Serve),
    /// Issue, list and revoke the bearer tokens of `serve --http`.
    #[command(subcommand)]
    Token(token::TokenCommand),
}

#[derive(Debug, Args)]
struct Who {
    /// Who is calling: alice, bob and dave of tenant 1 (bob and dave managers), carol of tenant 2 (a manager).
    #[arg(long = "as", default_value = "alice")]
    actor: String,
}

/// Runs the command line.
pub async fn run() -> ExitCode {
    let cli = Cli::parse();
    match execute(cli).await {
        Ok(code) => code,
        Err(error) => {
            eprintln!("shop: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn execute(cli: Cli) -> Result<ExitCode, BoxError> {
    let database = cli.database.as_str();
    match cli.command {
        None => {
            let shop = Shop::new(open_database("sqlite::memory:").await?).await?;
            crate::demo::run(&shop).await?;
        }
        Some(Command::Tools { format }) => tools::print(format).await?,
        Some(Command::Call {
            name,
            arguments,
            who,
        }) => return call::run(database, &name, &arguments, &who.actor).await,
        Some(Command::Approve { id, who, reason }) => {
            decide::run(database, id, &who.actor, &reason, Decision::Approve).await?;
        }
        Some(Command::Reject { id, who, reason }) => {
            decide::run(database, id, &who.actor, &reason, Decision::Reject).await?;
        }
        Some(Command::Requests) => requests::print(database).await?,
        Some(Command::Serve(options)) => serve::run(database, options).await?,
        Some(Command::Token(command)) => token::run(database, command).await?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The shop in the database at `url`, made first if it is a file that
/// does not exist yet.
async fn open(url: &str) -> Result<Shop, BoxError> {
    if let Some(path) = url
        .strip_prefix("sqlite://")
        .and_then(|p| p.split('?').next())
        && let Some(dir) = std::path::Path::new(path).parent()
        && !dir.as_os_str().is_empty()
        && !path.contains(":memory:")
    {
        std::fs::create_dir_all(dir)?;
    }
    Shop::new(open_database(url).await?).await
}
