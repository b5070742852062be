use toolwright::mcp_resource;

/// One note.
#[mcp_resource(uri = "notes://{id")]
fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
