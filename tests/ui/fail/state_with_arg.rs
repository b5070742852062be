use toolwright::{State, mcp_tool};

struct Counter(u32);

/// Read the count.
#[mcp_tool]
fn count(#[arg(rename = "counter")] counter: State<Counter>) -> u32 {
    counter.0
}

fn main() {}
