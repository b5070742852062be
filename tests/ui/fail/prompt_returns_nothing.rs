use toolwright::mcp_prompt;

/// Greet the user.
#[mcp_prompt]
fn greet(name: String) {
    let _ = name;
}

fn main() {}
