// Any borrowed input is rejected: inputs are deserialized into owned values.
use toolwright::tool;

/// Count the bytes.
#[tool(key = "demo.count_bytes", effect = read, authorize = public)]
async fn count_bytes(bytes: &Vec<u8>) -> usize {
    bytes.len()
}

fn main() {}
