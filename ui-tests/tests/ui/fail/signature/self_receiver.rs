// A tool is a free fn: a `self` receiver is rejected on the receiver.
use toolwright::tool;

struct Shop;

impl Shop {
    /// Count the products.
    #[tool(key = "products.count", effect = read, authorize = public)]
    async fn count(&self) -> u64 {
        0
    }
}

fn main() {}
