//! `shop token issue | list | revoke`: the bearer tokens of `serve --http`.

use std::time::Duration;

use clap::Subcommand;
use toolwright::BoxError;

use super::open;
use crate::table::print_table;
use crate::tokens::{TokenInfo, Tokens};

#[derive(Debug, Subcommand)]
pub(super) enum TokenCommand {
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

/// Runs a token command.
pub(super) async fn run(database: &str, command: TokenCommand) -> Result<(), BoxError> {
    let tokens = Tokens::new(open(database).await?.pool);
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
    Ok(())
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
