use toolwright::mcp_tool;

mod app {
    /// The application's own state, named like toolwright's.
    pub struct State<T>(pub T);
}

use app::State;

/// Read the count.
#[mcp_tool]
fn count(counter: State<u32>) -> u32 {
    counter.0
}

fn main() {}
