use toolwright::{Context, mcp_resource};

/// The tags in use.
#[mcp_resource(uri = "notes://tags")]
fn tags(ctx: Context) -> String {
    ctx.tool_name().to_owned()
}

fn main() {}
