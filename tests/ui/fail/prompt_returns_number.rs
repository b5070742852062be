use toolwright::mcp_prompt;

/// Count the user's notes.
#[mcp_prompt]
fn count() -> u32 {
    3
}

fn main() {}
