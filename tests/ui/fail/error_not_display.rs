use toolwright::mcp_tool;

#[derive(Debug)]
struct NotFound;

/// Read a note.
#[mcp_tool]
fn read(title: String) -> Result<String, NotFound> {
    if title.is_empty() { Err(NotFound) } else { Ok(title) }
}

fn main() {}
