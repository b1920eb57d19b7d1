// A tool without doc comment or `description` is rejected on the fn name.
use toolwright::tool;

#[tool(key = "products.get", effect = read, authorize = public)]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {}
