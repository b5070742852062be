use toolwright::mcp_tool;

mod app {
    pub struct Context {
        pub user: String,
    }
}

use app::Context;

/// Who is asking.
#[mcp_tool]
fn whoami(ctx: &Context) -> String {
    ctx.user.clone()
}

fn main() {}
