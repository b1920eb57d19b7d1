// `#[secret]` is a marker: an argument list is rejected on its arguments.
use toolwright::tool;

/// Sign in to the mail server.
#[tool(key = "mail.login", effect = read, authorize = public)]
async fn login(user: String, #[secret(mask = "***")] password: String) -> bool {
    !user.is_empty() && !password.is_empty()
}

fn main() {}
