use toolwright::mcp_prompt;

fn tags(typed: &str) -> Vec<String> {
    vec![typed.to_owned()]
}

/// Summarise a tag's notes.
#[mcp_prompt(complete(tag = tags))]
fn summarise(tag: String) -> String {
    format!("Summarise `{tag}`.")
}

fn main() {}
