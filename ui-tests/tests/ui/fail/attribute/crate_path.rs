use toolwright::tool;

/// A number.
#[tool(crate = 5, key = "a.b", effect = read, authorize = public)]
async fn number() -> u8 {
    5
}

/// A string that is no path.
#[tool(crate = "no path", key = "a.c", effect = read, authorize = public)]
async fn text() -> u8 {
    5
}

/// A path that leads nowhere.
#[tool(crate = nowhere, key = "a.d", effect = read, authorize = public)]
async fn lost() -> u8 {
    5
}

fn main() {}
