use toolwright::mcp_resource;

/// Notes that match a query.
#[mcp_resource(uri = "notes://search{?query}")]
fn search(query: String) -> String {
    query
}

fn main() {}
