//! Checking a token: its header and algorithm, a key that verifies its
//! signature, its issuer, audience and lifetime, and the required scopes.

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{Jwk, KeyOperations, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use super::{Claims, Config, JwtAuth};
use crate::mcp::auth::Rejection;

/// Longer bearer tokens are refused unread: real access tokens are a few
/// kilobytes at most.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

impl<F> JwtAuth<F> {
    /// Checks `token` (the part after `Bearer `) and returns its claims,
    /// or why it is refused: for an [`Authenticate`] of your own that
    /// goes on to look the caller up, say.
    ///
    /// ```
    /// use toolwright::mcp::jsonwebtoken::jwk::JwkSet;
    /// use toolwright::mcp::{JwtAuth, ResourceMetadata};
    /// # use toolwright::mcp::jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let jwks: JwkSet = serde_json::from_str(r#"{"keys": [{
    ///     "kty": "EC", "crv": "P-256", "kid": "2025-01", "alg": "ES256",
    ///     "x": "rgnOPvetY8Q5mQrdTu2eJaTTUQ-JG035G6jfT3rLvmM",
    ///     "y": "wqa8GipX7RJDGsFqLZBpIkOCg9d8td8dShkaXt8GZ9g"
    /// }]}"#).unwrap();
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// let auth = JwtAuth::new(metadata, "https://login.example.com")
    ///     .jwks(jwks)
    ///     .required_scopes(["tools:read"]);
    ///
    /// // A token as the authorization server issues it (signed here with the
    /// // private half of the key above, a key for this example only).
    /// # let signing_key = EncodingKey::from_ec_pem(b"-----BEGIN PRIVATE KEY-----
    /// # MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgmZ4VQvVmLxv33zTx
    /// # tCyr0fe7ZWREf0Dz+DnY00mAy5OhRANCAASuCc4+961jxDmZCt1O7Z4lpNNRD4kb
    /// # TfkbqN9Pesu+Y8KmvBoqV+0SQxrBai2QaSJDgoPXfLXfHUoZGl7fBmfY
    /// # -----END PRIVATE KEY-----").unwrap();
    /// # let sign = |claims: serde_json::Value| {
    /// #     let mut header = Header::new(Algorithm::ES256);
    /// #     header.kid = Some("2025-01".to_owned());
    /// #     encode(&header, &claims, &signing_key).unwrap()
    /// # };
    /// # let in_an_hour = toolwright::mcp::jsonwebtoken::get_current_timestamp() + 3600;
    /// let token = sign(serde_json::json!({
    ///     "iss": "https://login.example.com",
    ///     "aud": "https://tools.example.com/mcp",
    ///     "sub": "alice",
    ///     "scope": "tools:read tools:write",
    ///     "exp": in_an_hour,
    /// }));
    /// let claims = auth.validate(&token).await.unwrap();
    /// assert_eq!(claims.sub.as_deref(), Some("alice"));
    /// assert!(claims.has_scope("tools:write"));
    ///
    /// let for_another_server = sign(serde_json::json!({
    ///     "iss": "https://login.example.com",
    ///     "aud": "https://elsewhere.example.com",
    ///     "sub": "alice",
    ///     "scope": "tools:read",
    ///     "exp": in_an_hour,
    /// }));
    /// let refused = auth.validate(&for_another_server).await.unwrap_err();
    /// assert_eq!(refused.status(), http::StatusCode::UNAUTHORIZED);
    ///
    /// let without_the_scope = sign(serde_json::json!({
    ///     "iss": "https://login.example.com",
    ///     "aud": "https://tools.example.com/mcp",
    ///     "sub": "alice",
    ///     "exp": in_an_hour,
    /// }));
    /// let refused = auth.validate(&without_the_scope).await.unwrap_err();
    /// assert_eq!(refused.status(), http::StatusCode::FORBIDDEN);
    /// # }
    /// ```
    ///
    /// [`Authenticate`]: crate::mcp::Authenticate
    pub async fn validate(&self, token: &str) -> Result<Claims, Rejection> {
        let config = &*self.config;
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Rejection::invalid_token("the token is too long"));
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            Rejection::invalid_token(
                "the token is malformed, or names an algorithm this server does not accept",
            )
        })?;
        let alg = header.alg;
        if !config.algorithms.contains(&alg) {
            return Err(Rejection::invalid_token(
                "the token's algorithm is not accepted",
            ));
        }
        // RFC 7515, 4.1.11: extensions the server does not understand.
        if header.crit.is_some_and(|crit| !crit.is_empty()) {
            return Err(Rejection::invalid_token(
                "the token names critical extensions this server does not know",
            ));
        }
        let raw = config.verify(token, alg, header.kid.as_deref()).await?;
        let claims = Claims::from_json(raw);
        if config
            .required_scopes
            .iter()
            .any(|scope| !claims.has_scope(scope))
        {
            return Err(Rejection::insufficient_scope(
                config.required_scopes.join(" "),
            ));
        }
        Ok(claims)
    }
}

impl Config {
    /// The claims of `token`, signed with `alg` by the key `kid`, if a key
    /// verifies it and they pass the checks.
    async fn verify(
        &self,
        token: &str,
        alg: Algorithm,
        kid: Option<&str>,
    ) -> Result<Value, Rejection> {
        let validation = self.validation(alg);
        let given = self.keys.iter().filter(|key| key.fits(alg, kid));
        if let Some(outcome) = verify_with(token, given, &validation) {
            return outcome;
        }
        let Some(remote) = &self.remote else {
            return Err(no_key(!self.keys.is_empty()));
        };
        let keys = remote.current(self).await?;
        if let Some(outcome) = verify_with(token, keys.fitting(alg, kid), &validation) {
            return outcome;
        }
        // No key fits: the issuer may have rotated its keys.
        let keys = remote
            .refetch(self, &keys, kid)
            .await?
            .ok_or_else(|| no_key(true))?;
        verify_with(token, keys.fitting(alg, kid), &validation).unwrap_or_else(|| Err(no_key(true)))
    }

    /// The checks of a token signed with `alg`: `jsonwebtoken` wants the
    /// one algorithm of the key it is given.
    fn validation(&self, alg: Algorithm) -> Validation {
        let mut validation = Validation::new(alg);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(self.audiences());
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation
    }
}

/// The refusal of a token no key verifies: `some_keys` says whether there
/// are keys at all, or the server was set up without any.
fn no_key(some_keys: bool) -> Rejection {
    if some_keys {
        Rejection::invalid_token("the token's signing key is unknown")
    } else {
        tracing::error!("JwtAuth has no keys: give it a JWKS URL, a JWKS or a key");
        Rejection::new(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            "the server has no keys to check tokens with",
        )
    }
}

/// The token's claims if one of `keys` verifies it; `None` if there is no
/// key to try.
fn verify_with<'k>(
    token: &str,
    keys: impl Iterator<Item = &'k Key>,
    validation: &Validation,
) -> Option<Result<Value, Rejection>> {
    let mut outcome = None;
    for key in keys {
        match jsonwebtoken::decode::<Value>(token, &key.key, validation) {
            Ok(data) => return Some(Ok(data.claims)),
            // Another key of the same kind may be the one.
            Err(error) if matches!(error.kind(), ErrorKind::InvalidSignature) => {
                outcome = Some(Err(refusal(error.kind())));
            }
            Err(error) => return Some(Err(refusal(error.kind()))),
        }
    }
    outcome
}

/// Why `jsonwebtoken` refused a token, for the client.
fn refusal(kind: &ErrorKind) -> Rejection {
    let why = match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet",
        ErrorKind::InvalidAudience => "the token is for another audience",
        ErrorKind::InvalidIssuer => "the token is from another issuer",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::MissingRequiredClaim(claim) => match claim.as_str() {
            "exp" => "the token has no expiry (exp)",
            "iss" => "the token has no issuer (iss)",
            "aud" => "the token has no audience (aud)",
            _ => "the token lacks a required claim",
        },
        ErrorKind::InvalidClaimFormat(_) => "a claim of the token is malformed",
        ErrorKind::InvalidAlgorithm
        | ErrorKind::MissingAlgorithm
        | ErrorKind::UnsupportedAlgorithm
        | ErrorKind::InvalidAlgorithmName => "the token's algorithm is not accepted",
        ErrorKind::InvalidEcdsaKey
        | ErrorKind::InvalidEddsaKey
        | ErrorKind::InvalidRsaKey(_)
        | ErrorKind::InvalidKeyFormat => "the token's signing key cannot verify it",
        _ => "the token is malformed",
    };
    Rejection::invalid_token(why)
}

/// One verification key.
#[derive(Clone)]
pub(super) struct Key {
    pub(super) kid: Option<String>,
    /// The one algorithm the key is for, if its JWK says.
    pub(super) alg: Option<Algorithm>,
    pub(super) key: DecodingKey,
}

impl Key {
    /// The key of a JWK that verifies signatures, or why not.
    pub(super) fn from_jwk(jwk: &Jwk) -> Result<Key, &'static str> {
        let common = &jwk.common;
        if matches!(
            common.public_key_use,
            Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
        ) {
            return Err("its use is not `sig`");
        }
        if common
            .key_operations
            .as_ref()
            .is_some_and(|ops| !ops.contains(&KeyOperations::Verify))
        {
            return Err("its key_ops lack `verify`");
        }
        let alg = match common.key_algorithm {
            Some(alg) => Some(Algorithm::try_from(alg).map_err(|_| "its alg is not a signature")?),
            None => None,
        };
        let key = DecodingKey::from_jwk(jwk).map_err(|_| "its parameters are not a key")?;
        Ok(Key {
            kid: common.key_id.clone(),
            alg,
            key,
        })
    }

    /// Whether the key may verify a token signed with `alg` naming `kid`.
    /// The key's kind must be the algorithm's: an RSA or EC public key
    /// never verifies an HMAC signature.
    pub(super) fn fits(&self, alg: Algorithm, kid: Option<&str>) -> bool {
        self.key.family() == alg.family()
            && self.alg.is_none_or(|own| own == alg)
            && match (kid, &self.kid) {
                (Some(wanted), Some(own)) => wanted == own,
                _ => true,
            }
    }
}
