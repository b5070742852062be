use toolwright::mcp_resource;

/// How many notes there are.
#[mcp_resource(uri = "notes://count")]
fn count() -> u32 {
    3
}

fn main() {}
