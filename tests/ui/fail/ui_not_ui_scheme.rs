use toolwright::mcp_tool;

/// Show the board.
#[mcp_tool(ui = "https://example.com/board.html")]
fn show_board() {}

fn main() {}
