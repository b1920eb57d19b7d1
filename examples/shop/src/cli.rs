//! The `shop` command line.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};
use toolwright::admin::{self, Admin, Operator};
use toolwright::approval::{Approval, ApprovalId, Status};
use toolwright::mcp::{HttpOptions, McpServer};
use toolwright::providers::{self, Format};
use toolwright::{ApprovalRequest, CallError, Catalog, Reason, Selector, Tools};

use crate::app::{Caller, MANAGER, Shop, open_database};
use crate::tokens::{ADMIN_PREFIX, TokenInfo, Tokens, random_token};

/// A shop whose products, prices and orders are tools.
#[derive(Debug, Parser)]
#[command(name = "shop", version)]
pub struct Cli {
    /// The database (`sqlite://...`); the demo always uses a fresh in-memory one.
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
    Serve(Serve),
    /// Issue, list and revoke the bearer tokens of `serve --http`.
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Issue a token for an actor and print it, once: the database keeps only its hash.
    Issue {
        /// Whose token: whoever bears it acts as them.
        #[arg(long = "as")]
        actor: String,
        /// How long it works: a number then s, m, h or d (`12h`, `30d`).
        #[arg(long, default_value = "30d", value_parser = parse_ttl)]
        ttl: Duration,
    },
    /// List the tokens: ids, actors, times and status, never the tokens.
    List {
        /// Only this actor's.
        #[arg(long = "as")]
        actor: Option<String>,
    },
    /// Revoke a token: the next request that bears it is refused.
    Revoke {
        /// The token's id, as `token issue` or `token list` printed it.
        id: i64,
    },
}

#[derive(Debug, Args)]
struct Who {
    /// Who is calling: alice, bob and dave of tenant 1 (bob and dave managers), carol of tenant 2 (a manager).
    #[arg(long = "as", default_value = "alice")]
    actor: String,
}

#[derive(Debug, Args)]
struct Serve {
    /// On stdin/stdout, as `--as` (default alice).
    #[arg(long, conflicts_with = "http", required_unless_present = "http")]
    stdio: bool,
    /// Over Streamable HTTP at http://ADDR/mcp, to clients that send a token
    /// from `shop token issue`. ADDR is loopback unless `--public` is given.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Also serve the admin page and its API at http://ADDR/ (loopback
    /// unless `--public` is given), to operators signing in with the token
    /// printed at start, a new one each time: the tools, switching them off
    /// and on, the requests waiting for a manager, and the call log.
    #[arg(long, value_name = "ADDR", conflicts_with = "stdio")]
    admin: Option<SocketAddr>,
    /// Let `--http` and `--admin` bind addresses other machines reach
    /// (0.0.0.0, say). The shop speaks plain HTTP: put a TLS proxy in front.
    #[arg(long, requires = "http", conflicts_with = "stdio")]
    public: bool,
    /// Who the stdio client is: alice, bob and dave of tenant 1 (bob and
    /// dave managers), carol of tenant 2 (a manager). Over HTTP, each
    /// token says who.
    #[arg(long = "as", default_value = "alice", conflicts_with = "http")]
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

type AnyError = Box<dyn std::error::Error + Send + Sync>;

async fn open(url: &str) -> Result<Shop, AnyError> {
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

async fn execute(cli: Cli) -> Result<ExitCode, AnyError> {
    match cli.command {
        None => {
            let shop = Shop::new(open_database("sqlite::memory:").await?).await?;
            crate::cli::demo(&shop).await?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Tools { format: None }) => {
            print_catalog(
                &Shop::new(open_database("sqlite::memory:").await?)
                    .await?
                    .executor
                    .tools(),
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Tools {
            format: Some(format),
        }) => {
            let catalog = Catalog::discover_in(crate::app::MODULES)?;
            println!(
                "{}",
                serde_json::to_string_pretty(&providers::export(&catalog, format)?)?
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Call {
            name,
            arguments,
            who,
        }) => {
            let shop = open(&cli.database).await?;
            let caller = shop.caller(&who.actor).await?;
            let arguments: Value = serde_json::from_str(&arguments)
                .map_err(|e| format!("the arguments are not JSON: {e}"))?;
            let executor = shop.executor_for(&caller.actor);
            let result = executor.invoke(&name, arguments, &caller).await;
            let ok = result.is_ok();
            print_result(&result);
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Some(Command::Approve { id, who, reason }) => {
            let shop = open(&cli.database).await?;
            let caller = shop.caller(&who.actor).await?;
            let approval = shop.approve(id, &caller, &reason).await?;
            println!(
                "approved {}; {}'s identical call will now run once",
                describe(&approval),
                approval.requested_by
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Reject { id, who, reason }) => {
            let shop = open(&cli.database).await?;
            let caller = shop.caller(&who.actor).await?;
            let approval = shop.reject(id, &caller, &reason).await?;
            println!(
                "rejected {}; the identical call is refused until the request expires",
                describe(&approval)
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Requests) => {
            let shop = open(&cli.database).await?;
            print_requests(&shop.approvals.pending().await?);
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Serve(serve)) => {
            let http = match serve.http {
                Some(addr) => Some((addr, http_options(addr, serve.public)?)),
                None => None,
            };
            if let Some(addr) = serve.admin {
                check_admin_address(addr, serve.public)?;
            }
            let shop = open(&cli.database).await?;
            let admin = match serve.admin {
                Some(addr) => Some(admin_server(&shop, addr, serve.public).await?),
                None => None,
            };
            let views = shop.clone();
            let server = McpServer::builder(shop.executor.clone(), "shop", env!("CARGO_PKG_VERSION"))
                .instructions(
                    "A shop's products, prices and orders. Writes wait for a manager's approval: tell the user; a manager finds the request with `shop requests`.",
                )
                .views(move |caller: &Caller| views.view_for(&caller.actor))
                .build();
            if let Some((addr, options)) = http {
                eprintln!(
                    "serving MCP at http://{addr}/mcp to clients that send `Authorization: Bearer <token>`, \
                     a token from `shop token issue --as <actor>`"
                );
                let tokens = Tokens::new(shop.pool.clone());
                let mcp = async {
                    server
                        .serve_http(addr, tokens, options)
                        .await
                        .map_err(AnyError::from)
                };
                let admin = async {
                    match admin {
                        Some(admin) => admin.await.map_err(AnyError::from),
                        None => Ok(()),
                    }
                };
                tokio::try_join!(mcp, admin)?;
            } else {
                let caller = shop.caller(&serve.actor).await?;
                server.serve_stdio(caller).await?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Token(command)) => {
            let tokens = Tokens::new(open(&cli.database).await?.pool);
            match command {
                TokenCommand::Issue { actor, ttl } => {
                    let issued = tokens.issue(&actor, ttl).await?;
                    // The token alone on stdout, for `TOKEN=$(shop token issue ...)`.
                    println!("{}", issued.token);
                    eprintln!(
                        "token {} for {actor}, until {}; shown this once, send it as \
                         `Authorization: Bearer <token>`; revoke it with `shop token revoke {}`",
                        issued.id, issued.expires, issued.id
                    );
                }
                TokenCommand::List { actor } => print_tokens(&tokens.list(actor.as_deref()).await?),
                TokenCommand::Revoke { id } => {
                    let revocation = tokens.revoke(id).await?;
                    if revocation.already {
                        println!("token {id} ({}'s) was already revoked", revocation.actor);
                    } else {
                        println!(
                            "revoked token {id} ({}'s): the next request that bears it is refused",
                            revocation.actor
                        );
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The HTTP options for serving at `addr`. An address other than loopback
/// takes `--public`: serving other machines is a decision, not a default.
fn http_options(addr: SocketAddr, public: bool) -> Result<HttpOptions, AnyError> {
    if addr.ip().to_canonical().is_loopback() {
        return Ok(HttpOptions::default());
    }
    if !public {
        return Err(format!(
            "{addr} is not a loopback address: other machines could reach it. \
             Serve on 127.0.0.1, or pass --public if they should"
        )
        .into());
    }
    eprintln!(
        "shop: warning: serving on {addr}, which other machines reach, over plain HTTP: \
         bearer tokens cross the network readable. Put a TLS proxy in front, and revoke \
         any token that travelled in the clear"
    );
    // Clients reach a public server by names the shop cannot know. Checking
    // `Host` guards against DNS rebinding, which gains a web page nothing
    // here: every request needs a token, and browsers never add one.
    Ok(HttpOptions::default().allowed_hosts(std::iter::empty::<String>()))
}

/// The admin switches tools off and approves writes: serving it where other
/// machines reach takes `--public`, as for `--http`.
fn check_admin_address(addr: SocketAddr, public: bool) -> Result<(), AnyError> {
    if addr.ip().to_canonical().is_loopback() {
        return Ok(());
    }
    if !public {
        return Err(format!(
            "--admin {addr} is not a loopback address: other machines could reach the admin, \
             which switches tools off and approves writes. Serve it on 127.0.0.1, or pass \
             --public if they should"
        )
        .into());
    }
    eprintln!(
        "shop: warning: serving the admin on {addr}, which other machines reach, over plain \
         HTTP: its token crosses the network readable. Put a TLS proxy in front"
    );
    Ok(())
}

/// Binds the admin's address, prints where it is and the token that signs
/// in (new at each start, kept nowhere), and gives back the server to run.
async fn admin_server(
    shop: &Shop,
    addr: SocketAddr,
    public: bool,
) -> Result<impl Future<Output = Result<(), admin::ServeError>> + use<>, AnyError> {
    let token = random_token(ADMIN_PREFIX)?;
    // A manager of every tenant: the operator decides any request (never
    // one made under their own id, which no shop actor has).
    let mut admin = Admin::new(shop.executor.clone())
        .log(shop.log.clone())
        .operator(&token, Operator::new(ADMIN_OPERATOR).role(MANAGER));
    if public {
        // Operators reach it by names the shop cannot know; a rebinding
        // page gains nothing without the token, which it never has.
        admin = admin.public().allowed_hosts(std::iter::empty::<&str>());
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot serve the admin on {addr}: {e}"))?;
    let bound = listener.local_addr()?;
    eprintln!(
        "serving the admin page at http://{bound}/ to operators who sign in with this token \
         (new at each start, shown once):"
    );
    eprintln!("{token}");
    Ok(admin::serve_on(listener, admin))
}

/// `30d`, `12h`, `15m` or `90s` as a duration.
fn parse_ttl(text: &str) -> Result<Duration, String> {
    let invalid = || format!("`{text}` is not a duration such as 30d, 12h, 15m or 90s");
    let unit = match text.chars().last() {
        Some('s') => 1,
        Some('m') => 60,
        Some('h') => 60 * 60,
        Some('d') => 24 * 60 * 60,
        _ => return Err(invalid()),
    };
    let count: u64 = text[..text.len() - 1].parse().map_err(|_| invalid())?;
    match count.checked_mul(unit) {
        Some(0) => Err("a token must live longer than 0s".into()),
        // A century is plenty: a longer one is likelier a typo.
        Some(seconds) if seconds <= 100 * 365 * 24 * 60 * 60 => Ok(Duration::from_secs(seconds)),
        _ => Err(format!("`{text}` is over the limit of 100 years")),
    }
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

/// A request as a person reads it: `request 3 (orders.place {..}, asked by alice)`.
fn describe(approval: &Approval) -> String {
    format!(
        "request {} ({} {}, asked by {})",
        approval.id,
        approval.request.key,
        sorted(&approval.request.arguments),
        approval.requested_by
    )
}

/// The requests waiting for a manager, as a table.
fn print_requests(pending: &[Approval]) {
    if pending.is_empty() {
        println!("no requests wait for approval");
        return;
    }
    let rows: Vec<Vec<String>> = pending
        .iter()
        .map(|a| {
            vec![
                a.id.to_string(),
                a.request.name.clone(),
                sorted(&a.request.arguments).to_string(),
                a.requested_by.clone(),
            ]
        })
        .collect();
    print_table(&["id", "tool", "arguments", "requested by"], &rows);
}

/// The tokens as a table: everything but the tokens themselves.
fn print_tokens(tokens: &[TokenInfo]) {
    if tokens.is_empty() {
        println!("no tokens");
        return;
    }
    let rows: Vec<Vec<String>> = tokens
        .iter()
        .map(|t| {
            vec![
                t.id.to_string(),
                t.actor.clone(),
                t.created.clone(),
                t.expires.clone(),
                t.status.to_string(),
            ]
        })
        .collect();
    print_table(&["id", "actor", "created", "expires", "status"], &rows);
}

fn print_catalog(tools: &Tools) {
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|t| {
            let inputs = t.input_schema()["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
                .unwrap_or_default();
            vec![
                t.name().to_owned(),
                t.key().to_owned(),
                t.effect().to_string(),
                inputs,
            ]
        })
        .collect();
    print_table(&["tool", "key", "effect", "inputs"], &rows);
}

/// Prints rows under a header, each column as wide as its widest cell.
pub fn print_table(header: &[&str], rows: &[Vec<String>]) {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("  {}", padded.join("  ").trim_end());
    };
    line(header.to_vec());
    line(
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect(),
    );
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// Runs one call in the demo and narrates it; returns the request's id when
/// the call waits for approval.
async fn step(
    shop: &Shop,
    who: &str,
    name: &str,
    arguments: Value,
    why: &str,
) -> Result<Option<ApprovalId>, AnyError> {
    let caller = shop.caller(who).await?;
    println!("\n> {who} calls {name} {arguments}   ({why})");
    let executor = shop.executor_for(&caller.actor);
    let result = executor.invoke(name, arguments, &caller).await;
    let id = match &result {
        Err(CallError::ApprovalRequired(request)) => request.id,
        _ => None,
    };
    match &result {
        Ok(Value::Array(rows)) if rows.iter().all(Value::is_object) && !rows.is_empty() => {
            println!("  ok:");
            print_json_table(rows);
        }
        Ok(value) => println!("  ok: {}", sorted(value)),
        Err(CallError::ApprovalRequired(request)) => println!("  {}", waiting(request)),
        Err(error @ CallError::Tool { .. }) => {
            let cause = std::error::Error::source(error).map(ToString::to_string);
            println!("  failed and rolled back: {}", cause.unwrap_or_default());
        }
        Err(error) => println!("  refused: {}", error.model_message()),
    }
    Ok(id)
}

/// What a call waiting for approval tells its caller.
fn waiting(request: &ApprovalRequest) -> String {
    match request.id {
        Some(id) => format!("waits for approval: request {id}"),
        None => "waits for a person, with nothing recorded to approve".into(),
    }
}

/// Prints JSON objects as a table, one column per key of the first.
fn print_json_table(rows: &[Value]) {
    let Some(first) = rows[0].as_object() else {
        return;
    };
    let header: Vec<&str> = first.keys().map(String::as_str).collect();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            header
                .iter()
                .map(|k| match &row[*k] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()
        })
        .collect();
    print_table(&header, &cells);
}

/// `by` approves (or rejects, with a reason) request `id` and the demo says
/// how that went: a refusal is part of the story.
async fn decide(
    shop: &Shop,
    id: Option<ApprovalId>,
    by: &str,
    reject: Option<&str>,
) -> Result<(), AnyError> {
    let id = id.ok_or("expected the call to wait for approval")?;
    let caller = shop.caller(by).await?;
    let (verb, decided) = match reject {
        None => ("approves", shop.approve(id, &caller, "").await),
        Some(reason) => ("rejects", shop.reject(id, &caller, reason).await),
    };
    match decided {
        Ok(approval) => match approval.reason {
            Some(reason) => println!("  {by} {verb} request {id}: {reason:?}"),
            None => println!("  {by} {verb} request {id}"),
        },
        Err(error) => println!("  {by} {verb} request {id}: refused, {error}"),
    }
    Ok(())
}

/// The narrated demo `shop` runs with no arguments.
pub async fn demo(shop: &Shop) -> Result<(), AnyError> {
    println!(
        "The shop: {} tools over SQLite\n",
        shop.executor.tools().len()
    );
    print_catalog(&shop.executor.tools());

    println!("\n== Reads: each actor sees their own tenant");
    step(
        shop,
        "alice",
        "list_products",
        json!({}),
        "tenant 1's products",
    )
    .await?;
    step(
        shop,
        "carol",
        "get_product",
        json!({"tenant_id": 1, "product_id": 1}),
        "carol is tenant 2",
    )
    .await?;
    step(
        shop,
        "alice",
        "place_order",
        json!({"tenant_id": 1, "product_id": 1, "quantity": 0}),
        "no such quantity",
    )
    .await?;

    println!("\n== Writes wait for a person, then run exactly once");
    let order = json!({"tenant_id": 1, "product_id": 1, "quantity": 2});
    let id = step(shop, "alice", "place_order", order.clone(), "a write").await?;
    decide(shop, id, "bob", None).await?;
    step(
        shop,
        "alice",
        "place_order",
        order.clone(),
        "the approved call",
    )
    .await?;
    step(shop, "alice", "place_order", order, "a replay").await?;
    let three = json!({"tenant_id": 1, "product_id": 1, "quantity": 3});
    let id = step(
        shop,
        "alice",
        "place_order",
        three.clone(),
        "another quantity",
    )
    .await?;
    decide(shop, id, "bob", Some("two will do")).await?;
    step(shop, "alice", "place_order", three, "rejected").await?;

    println!("\n== A write that fails leaves nothing behind");
    let too_many = json!({"tenant_id": 1, "product_id": 2, "quantity": 5});
    let id = step(shop, "alice", "place_order", too_many.clone(), "3 in stock").await?;
    decide(shop, id, "bob", None).await?;
    step(
        shop,
        "alice",
        "place_order",
        too_many,
        "approved, but out of stock",
    )
    .await?;

    println!("\n== Only managers are shown, and may call, the price tool");
    for who in ["alice", "bob"] {
        let caller = shop.caller(who).await?;
        let tools = shop.executor_for(&caller.actor).tools();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
        println!("  {who} sees {}", names.join(", "));
    }
    let price = json!({"tenant_id": 1, "product_id": 3, "price_cents": 2750});
    step(
        shop,
        "alice",
        "set_price",
        price.clone(),
        "not in alice's view",
    )
    .await?;
    let id = step(shop, "bob", "set_price", price.clone(), "bob is").await?;
    // Four eyes: another manager of the tenant decides.
    decide(shop, id, "bob", None).await?;
    decide(shop, id, "dave", None).await?;
    step(shop, "bob", "set_price", price, "approved").await?;

    println!("\n== An operator switches a tool off, with a reason; no redeploy");
    let registry = shop.executor.registry();
    let reason = Reason::new("the payment provider is down").by("ops");
    registry.disable(&Selector::name("place_order"), reason)?;
    let order = json!({"tenant_id": 1, "product_id": 1, "quantity": 1});
    step(
        shop,
        "alice",
        "place_order",
        order,
        "the model is told it is unavailable",
    )
    .await?;
    let why = registry.tools().disabled("place_order").cloned();
    if let Some(why) = why {
        println!(
            "  (the application sees why: {:?}, by {:?})",
            why.reason, why.by
        );
    }
    registry.enable(&Selector::name("place_order"))?;

    println!("\n== The policy asks a person before anything destructive");
    let cancel = json!({"tenant_id": 1, "order_id": 1});
    if let (Some(policy), Some(tool)) = (registry.policy(), registry.tools().get("cancel_order")) {
        let (decision, rule) = policy.decide(tool, &cancel);
        println!("  (the policy: {decision}, by the rule {rule:?})");
    }
    let id = step(
        shop,
        "alice",
        "cancel_order",
        cancel.clone(),
        "waits for a person",
    )
    .await?;
    decide(shop, id, "bob", None).await?;
    step(shop, "alice", "cancel_order", cancel, "approved").await?;

    println!("\n== What the database holds now");
    let products: Vec<(i64, i64, String, i64, i64)> =
        sqlx::query_as("SELECT id, tenant, name, price_cents, stock FROM products ORDER BY id")
            .fetch_all(&shop.pool)
            .await?;
    print_table(
        &["product", "tenant", "name", "price", "stock"],
        &products
            .into_iter()
            .map(|(id, tenant, name, price, stock)| {
                vec![
                    id.to_string(),
                    tenant.to_string(),
                    name,
                    format!("{}.{:02}", price / 100, price % 100),
                    stock.to_string(),
                ]
            })
            .collect::<Vec<_>>(),
    );
    println!();
    let orders: Vec<(i64, i64, i64, i64, String)> = sqlx::query_as(
        "SELECT id, product_id, quantity, total_cents, placed_by FROM orders ORDER BY id",
    )
    .fetch_all(&shop.pool)
    .await?;
    print_table(
        &["order", "product", "quantity", "total", "placed by"],
        &orders
            .into_iter()
            .map(|(id, product, quantity, total, by)| {
                vec![
                    id.to_string(),
                    product.to_string(),
                    quantity.to_string(),
                    format!("{}.{:02}", total / 100, total % 100),
                    by,
                ]
            })
            .collect::<Vec<_>>(),
    );
    println!();
    print_ledger(shop).await?;
    println!(
        "\nOne order placed, then cancelled (its stock is back); the out-of-stock order rolled back; one price changed.\nThe ledger keeps who asked, who decided, and how each approved call ended."
    );
    Ok(())
}

/// Every request in the ledger, whatever became of it.
async fn print_ledger(shop: &Shop) -> Result<(), AnyError> {
    let mut requests = Vec::new();
    for status in [
        Status::Pending,
        Status::Approved,
        Status::Rejected,
        Status::Consumed,
        Status::Settled,
    ] {
        requests.extend(shop.approvals.list(status).await?);
    }
    requests.sort_by_key(|a| a.id);
    let rows: Vec<Vec<String>> = requests
        .into_iter()
        .map(|a| {
            vec![
                a.id.to_string(),
                a.request.name,
                a.requested_by,
                a.decided_by.unwrap_or_default(),
                a.status.to_string(),
                a.settlement.map(|s| s.to_string()).unwrap_or_default(),
            ]
        })
        .collect();
    print_table(
        &[
            "request",
            "tool",
            "asked by",
            "decided by",
            "status",
            "call",
        ],
        &rows,
    );
    Ok(())
}

/// `value` with every object's keys in sorted order, so that what the
/// command line prints does not depend on whether a crate in the build
/// made `serde_json` keep insertion order (its `preserve_order` feature).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
