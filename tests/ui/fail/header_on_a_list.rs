use toolwright::mcp_tool;

/// Tag notes.
#[mcp_tool]
fn tag(#[arg(header = "Tags")] tags: Vec<String>) -> usize {
    tags.len()
}

fn main() {}
