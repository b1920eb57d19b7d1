//! `shop serve --stdio | --http ADDR [--admin ADDR] [--stateless] [--public]`: the tools
//! to MCP clients (and over HTTP as a REST API too), and the admin page
//! beside them.

use std::net::SocketAddr;

use clap::Args;
use toolwright::BoxError;
use toolwright::admin::{self, Admin, Operator};
use toolwright::mcp::{HttpOptions, McpServer};

use super::{ADMIN_OPERATOR, open};
use crate::app::{Caller, MANAGER, Shop};
use crate::tokens::{ADMIN_PREFIX, Tokens, random_token};

#[derive(Debug, Args)]
pub(super) struct Serve {
    /// On stdin/stdout, as `--as` (default alice).
    #[arg(long, conflicts_with = "http", required_unless_present = "http")]
    stdio: bool,
    /// Over Streamable HTTP at http://ADDR/mcp, and as a REST API at
    /// http://ADDR/api (its OpenAPI document at /api/openapi.json), to
    /// clients that send a token from `shop token issue`. ADDR is loopback
    /// unless `--public` is given.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Also serve the admin page and its API at http://ADDR/ (loopback
    /// unless `--public` is given), to operators signing in with the token
    /// printed at start, a new one each time: the tools, switching them off
    /// and on, the requests waiting for a manager, and the call log.
    #[arg(long, value_name = "ADDR", conflicts_with = "stdio")]
    admin: Option<SocketAddr>,
    /// Serve MCP without sessions, answering in JSON, as a replica behind a
    /// load balancer (see deploy/README.md): any replica then answers any
    /// request. Clients of MCP 2026-07-28 still hear of tool list changes.
    #[arg(long, requires = "http")]
    stateless: bool,
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

/// Serves until the client (stdio) or the process (HTTP) ends.
pub(super) async fn run(database: &str, serve: Serve) -> Result<(), BoxError> {
    let http = match serve.http {
        Some(addr) => Some((addr, http_options(addr, serve.public, serve.stateless)?)),
        None => None,
    };
    if let Some(addr) = serve.admin {
        check_admin_address(addr, serve.public)?;
    }
    let shop = open(database).await?;
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
        if let Some(replica) = shop.replica() {
            eprintln!(
                "replica {replica}: the tools' states, the approvals, the idempotency keys and \
                 the tokens are shared with every `serve` on this database"
            );
        }
        eprintln!(
            "serving MCP at http://{addr}/mcp and REST at http://{addr}/api (described at \
             /api/openapi.json) to clients that send `Authorization: Bearer <token>`, a token \
             from `shop token issue --as <actor>`"
        );
        let tokens = Tokens::new(shop.pool.clone());
        let mcp = async {
            server
                .serve_http(addr, tokens, options)
                .await
                .map_err(BoxError::from)
        };
        let admin = async {
            match admin {
                Some(admin) => admin.await.map_err(BoxError::from),
                None => Ok(()),
            }
        };
        tokio::try_join!(mcp, admin)?;
    } else {
        let caller = shop.caller(&serve.actor).await?;
        server.serve_stdio(caller).await?;
    }
    Ok(())
}

/// The HTTP options for serving at `addr`. An address other than loopback
/// takes `--public`: serving other machines is a decision, not a default.
fn http_options(addr: SocketAddr, public: bool, stateless: bool) -> Result<HttpOptions, BoxError> {
    let options = match stateless {
        true => HttpOptions::replica(),
        false => HttpOptions::default(),
    };
    // The tools as REST too, for hosts that speak OpenAPI rather than MCP.
    let options = options.rest(true);
    if addr.ip().to_canonical().is_loopback() {
        return Ok(options);
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
    Ok(options.allowed_hosts(std::iter::empty::<String>()))
}

/// The admin switches tools off and approves writes: serving it where other
/// machines reach takes `--public`, as for `--http`.
fn check_admin_address(addr: SocketAddr, public: bool) -> Result<(), BoxError> {
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
) -> Result<impl Future<Output = Result<(), admin::ServeError>> + use<>, BoxError> {
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
