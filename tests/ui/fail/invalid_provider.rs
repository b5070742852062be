use toolwright::mcp_tool;

/// The answer.
#[mcp_tool(provider = "deep__thought")]
fn answer() -> u32 {
    42
}

fn main() {}
