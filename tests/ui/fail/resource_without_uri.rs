use toolwright::mcp_resource;

/// The tags in use.
#[mcp_resource]
fn tags() -> String {
    "home, work".to_owned()
}

fn main() {}
