use toolwright::{Context, mcp_prompt};

/// Greet the client.
#[mcp_prompt]
fn greet(ctx: &Context) -> String {
    format!("Hello, {}!", ctx.client_name().unwrap_or("you"))
}

fn main() {}
