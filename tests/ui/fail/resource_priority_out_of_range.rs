use toolwright::mcp_resource;

/// The tags in use.
#[mcp_resource(uri = "notes://tags", priority = 2.5)]
fn tags() -> String {
    "home".to_owned()
}

fn main() {}
