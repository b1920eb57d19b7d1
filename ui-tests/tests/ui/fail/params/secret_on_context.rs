// The caller's context is no argument: `#[secret]` on it is rejected.
use toolwright::{Context, tool};

struct Session;

/// Sign in to the mail server.
#[tool(key = "mail.login", effect = read, authorize = public)]
async fn login(user: String, #[secret] session: Context<Session>) -> bool {
    let _ = session;
    !user.is_empty()
}

fn main() {}
