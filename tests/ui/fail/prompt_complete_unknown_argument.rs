use toolwright::mcp_prompt;
use toolwright::completion::Completion;

fn tags(_: &Completion) -> Vec<String> {
    Vec::new()
}

/// Summarise a tag's notes.
#[mcp_prompt(complete(topic = tags))]
fn summarise(tag: String) -> String {
    format!("Summarise `{tag}`.")
}

fn main() {}
