use toolwright::mcp_tool;

/// Show the board.
#[mcp_tool(ui = "ui://notes")]
fn show_board() {}

fn main() {}
