use toolwright::mcp_tool;

/// Export every note.
#[mcp_tool(timeout = 30)]
fn export_all() -> u32 {
    42
}

fn main() {}
