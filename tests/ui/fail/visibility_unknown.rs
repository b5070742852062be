use toolwright::mcp_tool;

/// Move a card.
#[mcp_tool(visibility = ["model", "user"])]
fn move_card() {}

fn main() {}
