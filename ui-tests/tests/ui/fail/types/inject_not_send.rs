// An injected type is shared across threads: `Inject<Rc<u8>>` is rejected on the type.
use std::rc::Rc;

use toolwright::{Inject, tool};

/// Read a counter.
#[tool(key = "counter.get", effect = read, authorize = public)]
async fn get_counter(counter: Inject<Rc<u8>>) -> u8 {
    **counter
}

fn main() {}
