// A tool's error type must implement `std::error::Error`.
use toolwright::tool;

#[derive(Debug)]
struct NotFound;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = public)]
async fn get_product(id: u64) -> Result<u64, NotFound> {
    if id == 0 { Err(NotFound) } else { Ok(id) }
}

fn main() {}
