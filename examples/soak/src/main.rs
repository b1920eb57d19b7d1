//! Placeholder until the soak program lands.
fn main() {}
