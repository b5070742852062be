use toolwright::mcp_resource;

/// The tags in use.
#[mcp_resource(uri = "notes://tags", audience = ["model"])]
fn tags() -> String {
    "home".to_owned()
}

fn main() {}
