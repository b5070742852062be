use toolwright::mcp_tool;

/// Move a card.
#[mcp_tool(visibility = "app")]
fn move_card() {}

fn main() {}
