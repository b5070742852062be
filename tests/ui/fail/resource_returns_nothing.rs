use toolwright::mcp_resource;

/// Nothing at all.
#[mcp_resource(uri = "notes://nothing")]
fn nothing() {}

fn main() {}
