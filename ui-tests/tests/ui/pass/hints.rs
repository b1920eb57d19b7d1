// `timeout`, `idempotent` and `open_world` are carried into the tool's metadata.
use std::time::Duration;

use toolwright::{Invocation, Tool, tool};

struct Actor;

async fn anyone<A>(_: &Actor, _: &Invocation<'_, A>) -> bool {
    true
}

/// Send a message to a mailbox.
#[tool(
    key = "mail.send",
    effect = write,
    authorize = anyone,
    approve = anyone,
    timeout = "30s",
    idempotent = true,
    open_world = false
)]
async fn send_mail(to: String) -> String {
    to
}

/// Fetch a web page.
#[tool(key = "web.fetch", effect = read, authorize = public, timeout = "500ms", open_world)]
async fn fetch(url: String) -> String {
    url
}

fn main() {
    assert_eq!(SendMailArgs::TIMEOUT, Some(Duration::from_secs(30)));
    assert!(SendMailArgs::IDEMPOTENT);
    assert!(!SendMailArgs::OPEN_WORLD);
    assert_eq!(FetchArgs::TIMEOUT, Some(Duration::from_millis(500)));
    assert!(FetchArgs::OPEN_WORLD);
    assert!(
        FetchArgs::IDEMPOTENT,
        "read tools are idempotent by default"
    );
}
