use toolwright::mcp_tool;

struct Note {
    title: String,
}

/// Read a note.
#[mcp_tool]
fn read(title: String) -> Note {
    Note { title }
}

fn main() {
    let _ = read(String::new()).title;
}
