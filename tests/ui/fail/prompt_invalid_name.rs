use toolwright::mcp_prompt;

/// Greet someone.
#[mcp_prompt(name = "greet someone")]
fn greet(name: String) -> String {
    format!("Greet {name}.")
}

fn main() {}
