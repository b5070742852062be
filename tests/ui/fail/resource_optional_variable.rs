use toolwright::mcp_resource;

/// One note.
#[mcp_resource(uri = "notes://{id}")]
fn note(id: Option<u64>) -> String {
    format!("{id:?}")
}

fn main() {}
