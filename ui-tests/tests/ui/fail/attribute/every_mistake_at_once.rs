// Every mistake in the attribute is reported in one build: a refused value
// does not hide the others, nor the checks across keys (a write without
// `approve`), and `args` still names the struct the hook takes.
use toolwright::{Invocation, tool};

struct Actor;

/// Rename a product.
#[tool(key = "products.rename", key = "products.name", efect = read, effect = write, timeout = "soon", authorize = can_rename, args = RenameArgs)]
async fn rename_product(id: u64, name: String) -> String {
    format!("{id}: {name}")
}

async fn can_rename(_: &Actor, call: &Invocation<'_, RenameArgs>) -> bool {
    call.id > 0
}

fn main() {}
