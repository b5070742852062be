use toolwright::mcp_tool;

#[mcp_tool]
fn answer() -> u32 {
    42
}

fn main() {}
