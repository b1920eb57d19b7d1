// A repeated `#[secret]` is rejected on the second one.
use toolwright::tool;

/// Sign in to the mail server.
#[tool(key = "mail.login", effect = read, authorize = public)]
async fn login(user: String, #[secret] #[secret] password: String) -> bool {
    !user.is_empty() && !password.is_empty()
}

fn main() {}
