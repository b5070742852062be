use toolwright::mcp_tool;

struct Notes;

impl Notes {
    /// Count the notes.
    #[mcp_tool]
    fn count(&self) -> usize {
        0
    }
}

fn main() {}
