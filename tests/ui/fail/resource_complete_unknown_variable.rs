use toolwright::completion::Completion;
use toolwright::mcp_resource;

fn ids(_: &Completion) -> Vec<String> {
    vec!["1".to_owned()]
}

/// One note.
#[mcp_resource(uri = "notes://{id}", complete(note = ids))]
fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
