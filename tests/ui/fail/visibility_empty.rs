use toolwright::mcp_tool;

/// Move a card.
#[mcp_tool(visibility = [])]
fn move_card() {}

fn main() {}
