use toolwright::mcp_resource;

/// The tags in use.
#[mcp_resource(uri = "notes://tags", blocking)]
async fn tags() -> String {
    "home".to_owned()
}

fn main() {}
