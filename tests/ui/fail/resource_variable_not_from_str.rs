use toolwright::mcp_resource;

struct NoteId(u64);

/// One note.
#[mcp_resource(uri = "notes://{id}")]
fn note(id: NoteId) -> String {
    id.0.to_string()
}

fn main() {}
