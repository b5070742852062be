use toolwright::mcp_resource;

/// The tags in use.
#[mcp_resource(uri = "notes://tags")]
fn tags(prefix: String) -> String {
    prefix
}

fn main() {}
