use toolwright::mcp_tool;

/// The answer.
#[mcp_tool]
const fn answer() -> u32 {
    42
}

fn main() {}
