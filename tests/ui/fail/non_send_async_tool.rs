use std::rc::Rc;

use toolwright::mcp_tool;

async fn pause() {}

/// Count to one.
#[mcp_tool]
async fn count() -> u32 {
    let counter = Rc::new(1);
    pause().await;
    *counter
}

fn main() {}
