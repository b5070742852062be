use toolwright::mcp_tool;

/// A note.
#[mcp_tool]
struct Note {
    title: String,
}

fn main() {
    let _ = Note { title: String::new() }.title;
}
