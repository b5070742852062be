use toolwright::mcp_tool;

struct Query {
    words: String,
}

/// Find notes.
#[mcp_tool]
fn search(query: Query) -> Vec<String> {
    vec![query.words]
}

fn main() {}
