//! The claims of a valid access token: its subject, its scopes, and every
//! claim as the token carries it.

use serde_json::Value;

/// The claims of a valid access token, for the application's
/// [`context`](super::JwtAuth::context) function.
///
/// ```
/// use toolwright::mcp::Claims;
///
/// let claims = Claims::from_json(serde_json::json!({
///     "sub": "alice",
///     "scope": "tools:read tools:write",
///     "email": "alice@example.com",
/// }));
/// assert_eq!(claims.sub.as_deref(), Some("alice"));
/// assert_eq!(claims.scopes, ["tools:read", "tools:write"]);
/// assert_eq!(claims.raw["email"], "alice@example.com");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Claims {
    /// Whom the token is about (`sub`): a user, or for a client acting on
    /// its own behalf, the client.
    pub sub: Option<String>,
    /// The scopes granted: the `scope` claim split at spaces (RFC 9068),
    /// and the `scp` claim, an array or a string, as some authorization
    /// servers send them.
    pub scopes: Vec<String>,
    /// Every claim, as the token carries them (`iss`, `aud`, `exp`,
    /// `client_id`, custom ones).
    pub raw: Value,
}

impl Claims {
    /// The claims of a token's payload: to test a context function
    /// without signing tokens, say.
    ///
    /// ```
    /// use toolwright::mcp::Claims;
    ///
    /// let claims = Claims::from_json(serde_json::json!({"scp": ["read", "write"]}));
    /// assert_eq!(claims.sub, None);
    /// assert_eq!(claims.scopes, ["read", "write"]);
    /// ```
    pub fn from_json(raw: Value) -> Self {
        let sub = raw.get("sub").and_then(Value::as_str).map(str::to_owned);
        let mut scopes: Vec<String> = Vec::new();
        let mut add = |scope: &str| {
            if !scope.is_empty() && !scopes.iter().any(|s| s == scope) {
                scopes.push(scope.to_owned());
            }
        };
        if let Some(scope) = raw.get("scope").and_then(Value::as_str) {
            scope.split(' ').for_each(&mut add);
        }
        match raw.get("scp") {
            Some(Value::String(scp)) => scp.split(' ').for_each(&mut add),
            Some(Value::Array(scp)) => scp.iter().filter_map(Value::as_str).for_each(&mut add),
            _ => {}
        }
        Claims { sub, scopes, raw }
    }

    /// Whether the token grants `scope`.
    ///
    /// ```
    /// use toolwright::mcp::Claims;
    ///
    /// let claims = Claims::from_json(serde_json::json!({"scope": "tools:read"}));
    /// assert!(claims.has_scope("tools:read"));
    /// assert!(!claims.has_scope("tools:write"));
    /// ```
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_come_from_scope_and_scp_without_repeats() {
        let claims = Claims::from_json(serde_json::json!({
            "scope": "a  b", "scp": ["b", "c", 7]
        }));
        assert_eq!(claims.scopes, ["a", "b", "c"]);
        let claims = Claims::from_json(serde_json::json!({"scp": "x y"}));
        assert_eq!(claims.scopes, ["x", "y"]);
    }
}
