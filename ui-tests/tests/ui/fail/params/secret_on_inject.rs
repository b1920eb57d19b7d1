// An injected value is never sent by a caller: `#[secret]` on it is rejected.
use toolwright::{Inject, tool};

struct Vault;

/// Sign in to the mail server.
#[tool(key = "mail.login", effect = read, authorize = public)]
async fn login(user: String, #[secret] vault: Inject<Vault>) -> bool {
    let _ = vault;
    !user.is_empty()
}

fn main() {}
