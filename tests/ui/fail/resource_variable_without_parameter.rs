use toolwright::mcp_resource;

/// One note.
#[mcp_resource(uri = "notes://{id}")]
fn note() -> String {
    "a note".to_owned()
}

fn main() {}
