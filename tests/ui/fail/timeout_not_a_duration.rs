use toolwright::mcp_tool;

/// Export every note.
#[mcp_tool(timeout = "thirty seconds")]
fn export_all() -> u32 {
    42
}

fn main() {}
