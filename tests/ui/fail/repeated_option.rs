use toolwright::mcp_tool;

/// The answer.
#[mcp_tool(title = "Answer", title = "The answer")]
fn answer() -> u32 {
    42
}

fn main() {}
