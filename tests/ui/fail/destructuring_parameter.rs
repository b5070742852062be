use toolwright::mcp_tool;

/// Add two integers.
#[mcp_tool]
fn add((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}
