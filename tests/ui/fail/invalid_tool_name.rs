use toolwright::mcp_tool;

/// The answer.
#[mcp_tool(name = "the answer")]
fn answer() -> u32 {
    42
}

fn main() {}
