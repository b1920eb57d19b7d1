// `description = ""` is rejected: models read it to choose the tool.
use toolwright::tool;

#[tool(key = "products.get", description = "", effect = read, authorize = public)]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {}
