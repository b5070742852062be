use toolwright::mcp_tool;

/// The answer.
#[mcp_tool(read_only = "yes")]
fn answer() -> u32 {
    42
}

fn main() {}
