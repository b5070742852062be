use toolwright::mcp_resource;

struct Failed;

/// The tags in use.
#[mcp_resource(uri = "notes://tags")]
fn tags() -> Result<String, Failed> {
    Err(Failed)
}

fn main() {}
