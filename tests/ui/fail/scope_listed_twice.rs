use toolwright::mcp_tool;

/// Delete a note.
#[mcp_tool(scopes = ["notes:write", "notes:admin", "notes:write"])]
fn delete_note() {}

fn main() {}
