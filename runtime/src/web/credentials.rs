//! The one reading of an `Authorization` header every port shares.

use http::HeaderMap;
use http::header::AUTHORIZATION;

// Not `headers`' `Authorization<Bearer>`: it adds headers, headers-core and sha1, for one scheme only.
/// The token of an `Authorization: Bearer <token>` header: the scheme in
/// any case, any run of spaces around the token.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = scheme_and_credentials(value)?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// An `Authorization` value read as [`bearer`] reads it: the scheme (its
/// case left as sent) and the credentials after it, without the spaces
/// around either. `None` for a value with no credentials.
pub(crate) fn scheme_and_credentials(value: &str) -> Option<(&str, &str)> {
    let (scheme, credentials) = value.trim_matches(' ').split_once(' ')?;
    Some((scheme, credentials.trim_matches(' ')))
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn bearer_tokens_are_read_in_any_case_and_spacing() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        for value in ["Bearer abc", "bearer abc ", " BEARER   abc"] {
            headers.insert(AUTHORIZATION, HeaderValue::from_static(value));
            assert_eq!(bearer(&headers), Some("abc"), "{value:?}");
        }
        for value in ["Basic abc", "Bearer ", "Bearer", "Bearerabc"] {
            headers.insert(AUTHORIZATION, HeaderValue::from_static(value));
            assert_eq!(bearer(&headers), None, "{value:?}");
        }
    }
}
