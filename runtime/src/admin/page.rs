//! The page: three files built into the binary, served with a strict
//! Content-Security-Policy. They hold no data, so they need no token.

use std::sync::OnceLock;

use axum::body::Body;
use axum::extract::OriginalUri;
use axum::response::Response;
use http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG};
use http::{HeaderMap, HeaderValue};

use super::{api, etag};

const INDEX: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const STYLE: &str = include_str!("page/app.css");

/// Only the page's own files, no inline script or style, no framing.
const POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; \
    form-action 'none'; frame-ancestors 'none'";

/// `GET ./`: the page. Under `nest("/admin", …)` it is reached as
/// `/admin`, without the trailing slash its relative URLs need (axum
/// routes no `/admin/` there): it then names the mount point as its base
/// (`<base href="admin/">`), so that `app.js` and `api/tools` resolve
/// under it either way.
pub(crate) async fn index(OriginalUri(uri): OriginalUri, headers: HeaderMap) -> Response {
    let path = uri.path();
    if path.ends_with('/') {
        return asset(&headers, INDEX, "text/html; charset=utf-8", 0);
    }
    let last = path.rsplit('/').next().unwrap_or_default();
    let plain = |c: char| c.is_ascii_alphanumeric() || "-._~%".contains(c);
    let page = match INDEX.split_once("<head>") {
        Some((before, after)) if last.chars().all(plain) && !last.is_empty() => {
            format!("{before}<head>\n<base href=\"{last}/\">{after}")
        }
        _ => INDEX.to_owned(),
    };
    let tag = etag::of_bytes('p', page.as_bytes());
    page_answer(&headers, Body::from(page), "text/html; charset=utf-8", &tag)
}

/// `GET ./app.js`.
pub(crate) async fn script(headers: HeaderMap) -> Response {
    asset(&headers, SCRIPT, "text/javascript; charset=utf-8", 1)
}

/// `GET ./app.css`.
pub(crate) async fn style(headers: HeaderMap) -> Response {
    asset(&headers, STYLE, "text/css; charset=utf-8", 2)
}

/// One of the page's files (`which`: its place in the ETag cache), with
/// an ETag of its content.
fn asset(headers: &HeaderMap, content: &'static str, kind: &'static str, which: usize) -> Response {
    static TAGS: OnceLock<[String; 3]> = OnceLock::new();
    let tags = TAGS.get_or_init(|| {
        [INDEX, SCRIPT, STYLE].map(|content| etag::of_bytes('p', content.as_bytes()))
    });
    page_answer(headers, Body::from(content), kind, &tags[which])
}

/// A file of the page, or 304 when `If-None-Match` names `tag`; browsers
/// revalidate on every load.
fn page_answer(headers: &HeaderMap, content: Body, kind: &'static str, tag: &str) -> Response {
    let mut response = if etag::unchanged(headers, tag) {
        api::not_modified(tag)
    } else {
        let mut response = Response::new(content);
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
        if let Ok(tag) = HeaderValue::from_str(tag) {
            response.headers_mut().insert(ETAG, tag);
        }
        response
    };
    let headers = response.headers_mut();
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
