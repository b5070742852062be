use toolwright::mcp_tool;

/// The answer.
#[mcp_tool]
extern "C" fn answer() -> u32 {
    42
}

fn main() {}
