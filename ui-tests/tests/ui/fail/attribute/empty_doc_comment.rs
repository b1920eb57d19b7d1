// An empty doc comment is no description.
use toolwright::tool;

///
#[tool(key = "products.get", effect = read, authorize = public)]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {}
