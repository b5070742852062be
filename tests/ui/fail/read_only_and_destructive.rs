use toolwright::mcp_tool;

/// Delete every note.
#[mcp_tool(read_only, destructive)]
fn clear() {}

fn main() {}
