use toolwright::mcp_prompt;

#[mcp_prompt]
fn greet(name: String) -> String {
    format!("Greet {name}.")
}

fn main() {}
