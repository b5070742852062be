use toolwright::mcp_resource;

/// One note.
#[mcp_resource(uri = "notes://{id}")]
fn note(id: u64, format: String) -> String {
    format!("{id} as {format}")
}

fn main() {}
