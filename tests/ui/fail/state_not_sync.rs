use std::cell::Cell;

use toolwright::{State, mcp_tool};

/// Read the count.
#[mcp_tool]
fn count(counter: State<Cell<u32>>) -> u32 {
    counter.get()
}

fn main() {}
