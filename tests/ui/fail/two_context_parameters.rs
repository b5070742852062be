use toolwright::{Context, mcp_tool};

/// The tool's own name.
#[mcp_tool]
fn name(ctx: Context, again: &Context) -> String {
    let _ = again;
    ctx.tool_name().to_owned()
}

fn main() {}
