//! Bearer tokens for `shop serve --http`: issued for an actor, with an
//! expiry, revocable, and checked against the database on every request.
//!
//! A token is 256 random bits from the operating system, printed once. The
//! database keeps only its SHA-256, so a copy of the database lets no one in;
//! a plain hash suffices because the token is random, not a password to guess.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest as _, Sha256};
use sqlx::AnyPool;
use toolwright::mcp::http::StatusCode;
use toolwright::mcp::http::request::Parts;
use toolwright::mcp::{Authenticate, Rejection, bearer_token};

use crate::app::{Actor, Caller, ShopError};

/// What every token starts with, so that one found in a log or a file is
/// recognised for what it is.
pub const PREFIX: &str = "shop_";

/// What the admin token of `shop serve --admin` starts with.
pub const ADMIN_PREFIX: &str = "shop_admin_";

/// A new token: `prefix`, then 256 random bits from the operating system
/// in hex. Both the tokens `issue` keeps and the admin token of
/// `shop serve --admin` (kept nowhere: a new one each start) are made here.
///
/// ```
/// let token = shop::tokens::random_token(shop::tokens::ADMIN_PREFIX).unwrap();
/// assert!(token.starts_with("shop_admin_"));
/// assert_eq!(token.len(), "shop_admin_".len() + 64);
/// assert_ne!(token, shop::tokens::random_token(shop::tokens::ADMIN_PREFIX).unwrap());
/// ```
pub fn random_token(prefix: &str) -> Result<String, ShopError> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(ShopError::Random)?;
    Ok(format!("{prefix}{}", hex(&secret)))
}

/// The shop's tokens, in its database. As an [`Authenticate`] it lets in
/// the requests that bear a token neither expired nor revoked, as the
/// token's actor.
#[derive(Debug, Clone)]
pub struct Tokens {
    pool: AnyPool,
}

/// A token just issued: the only time the token itself is at hand.
#[derive(Debug)]
pub struct Issued {
    /// The token's id, to list and revoke it by.
    pub id: i64,
    /// The token, to send as `Authorization: Bearer <token>`.
    pub token: String,
    /// When it stops working, as `YYYY-MM-DDTHH:MM:SSZ`.
    pub expires: String,
}

/// A revoked token.
#[derive(Debug)]
pub struct Revocation {
    /// Whose it was.
    pub actor: String,
    /// Whether it had been revoked before.
    pub already: bool,
}

/// A token as `shop token list` shows it: everything but the token.
#[derive(Debug, Clone)]
pub struct TokenInfo {
    /// Its id.
    pub id: i64,
    /// Whose it is.
    pub actor: String,
    /// When it was issued, as `YYYY-MM-DDTHH:MM:SSZ`.
    pub created: String,
    /// When it stops working, as `YYYY-MM-DDTHH:MM:SSZ`.
    pub expires: String,
    /// Whether it works now.
    pub status: TokenStatus,
}

/// Whether a token works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenStatus {
    /// Neither expired nor revoked.
    Active,
    /// Past its expiry.
    Expired,
    /// Revoked.
    Revoked,
}

impl std::fmt::Display for TokenStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TokenStatus::Active => "active",
            TokenStatus::Expired => "expired",
            TokenStatus::Revoked => "revoked",
        })
    }
}

/// As the token queries give it: `active`, `expired` or `revoked`. Read
/// from text by hand: sqlx's derived enums are typed per engine, and the
/// shop's queries run through `Any`.
impl std::str::FromStr for TokenStatus {
    type Err = sqlx::Error;

    fn from_str(status: &str) -> Result<Self, sqlx::Error> {
        match status {
            "active" => Ok(TokenStatus::Active),
            "expired" => Ok(TokenStatus::Expired),
            "revoked" => Ok(TokenStatus::Revoked),
            other => Err(sqlx::Error::Decode(
                format!("no token status {other:?}").into(),
            )),
        }
    }
}

/// Why a bearer token was refused.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// No token has this hash: a mistyped token, an actor's name, anything.
    #[error("unknown token")]
    Unknown,
    /// Past its expiry.
    #[error("the token has expired")]
    Expired,
    /// Revoked with `shop token revoke`.
    #[error("the token has been revoked")]
    Revoked,
    /// The database could not be asked.
    #[error("database error")]
    Database(#[from] sqlx::Error),
}

/// The status of the row in `tokens` at `now` (bound as `$1`), as SQL.
const STATUS: &str = "CASE WHEN revoked_at IS NOT NULL THEN 'revoked' \
                      WHEN expires_at <= $1 THEN 'expired' ELSE 'active' END";

impl Tokens {
    /// The tokens in the shop's database.
    pub fn new(pool: AnyPool) -> Tokens {
        Tokens { pool }
    }

    /// Issues a token for `actor`, valid for `ttl`.
    pub async fn issue(&self, actor: &str, ttl: Duration) -> Result<Issued, ShopError> {
        let actor = Actor::load(&self.pool, actor).await?;
        let token = random_token(PREFIX)?;
        let now = now();
        let ttl = i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX);
        let (id, expires): (i64, i64) = sqlx::query_as(
            "INSERT INTO tokens (hash, actor, created_at, expires_at) VALUES ($1, $2, $3, $4) \
             RETURNING id, expires_at",
        )
        .bind(hash(&token).as_slice())
        .bind(&actor.name)
        .bind(now)
        .bind(now.saturating_add(ttl))
        .fetch_one(&self.pool)
        .await?;
        Ok(Issued {
            id,
            token,
            expires: readable(expires),
        })
    }

    /// Revokes token `id`: the next request that bears it is refused.
    pub async fn revoke(&self, id: i64) -> Result<Revocation, ShopError> {
        let revoked: Option<String> = sqlx::query_scalar(
            "UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING actor",
        )
        .bind(now())
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        if let Some(actor) = revoked {
            return Ok(Revocation {
                actor,
                already: false,
            });
        }
        let actor: String = sqlx::query_scalar("SELECT actor FROM tokens WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(ShopError::NotFound("token"))?;
        Ok(Revocation {
            actor,
            already: true,
        })
    }

    /// Every token, or `actor`'s, oldest first.
    pub async fn list(&self, actor: Option<&str>) -> Result<Vec<TokenInfo>, ShopError> {
        let sql = format!(
            "SELECT id, actor, created_at, expires_at, {STATUS} FROM tokens \
             WHERE $2 IS NULL OR actor = $2 ORDER BY id"
        );
        let rows: Vec<(i64, String, i64, i64, String)> = sqlx::query_as(&sql)
            .bind(now())
            .bind(actor)
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter()
            .map(
                |(id, actor, created, expires, status)| -> Result<_, ShopError> {
                    Ok(TokenInfo {
                        id,
                        actor,
                        created: readable(created),
                        expires: readable(expires),
                        status: status.parse()?,
                    })
                },
            )
            .collect()
    }

    /// The caller a request bearing `token` acts as.
    pub async fn caller(&self, token: &str) -> Result<Caller, Refused> {
        let row: Option<(String, String, i64, i64)> = sqlx::query_as(&format!(
            "SELECT {STATUS}, a.name, a.tenant, a.manager \
             FROM tokens JOIN actors a ON a.name = tokens.actor WHERE hash = $2"
        ))
        .bind(now())
        .bind(hash(token).as_slice())
        .fetch_optional(&self.pool)
        .await?;
        let (status, name, tenant, manager) = row.ok_or(Refused::Unknown)?;
        match (status.parse()?, name, tenant, manager) {
            (TokenStatus::Active, name, tenant, manager) => Ok(Caller {
                actor: Actor {
                    name,
                    tenant,
                    manager: manager != 0,
                },
            }),
            (TokenStatus::Expired, ..) => Err(Refused::Expired),
            (TokenStatus::Revoked, ..) => Err(Refused::Revoked),
        }
    }
}

/// Each request is looked up afresh: a token revoked or expired a moment
/// ago is refused, without a restart.
impl Authenticate<Caller> for Tokens {
    async fn authenticate(&self, parts: &Parts) -> Result<Caller, Rejection> {
        let token = bearer_token(&parts.headers).ok_or_else(Rejection::unauthorized)?;
        self.caller(token).await.map_err(|refused| match refused {
            Refused::Database(error) => {
                eprintln!("shop: checking a bearer token failed: {error}");
                Rejection::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the token could not be checked",
                )
            }
            other => Rejection::invalid_token(other.to_string()),
        })
    }
}

/// What the database keeps of a token. Looking the hash up, rather than
/// comparing tokens, also leaves nothing to learn from the comparison's time.
fn hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Unix seconds as people read them, in UTC: `YYYY-MM-DDTHH:MM:SSZ`. In
/// Rust rather than SQL, which each engine writes its own way; the date is
/// Howard Hinnant's `civil_from_days`.
///
/// ```
/// use shop::tokens::readable;
///
/// assert_eq!(readable(0), "1970-01-01T00:00:00Z");
/// assert_eq!(readable(951_782_400), "2000-02-29T00:00:00Z");
/// assert_eq!(readable(4_102_444_799), "2099-12-31T23:59:59Z");
/// ```
pub fn readable(seconds: i64) -> String {
    let (days, time) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    let (hours, minutes, seconds) = (time / 3_600, time % 3_600 / 60, time % 60);
    format!("{year:04}-{month:02}-{day:02}T{hours:02}:{minutes:02}:{seconds:02}Z")
}

/// Unix seconds.
fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
