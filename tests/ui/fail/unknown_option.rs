use toolwright::mcp_tool;

#[mcp_tool(descr = "The answer.")]
fn answer() -> u32 {
    42
}

fn main() {}
