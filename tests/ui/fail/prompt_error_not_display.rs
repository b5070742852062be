use toolwright::mcp_prompt;

struct Missing;

/// Summarise a tag's notes.
#[mcp_prompt]
fn summarise(tag: String) -> Result<String, Missing> {
    if tag.is_empty() {
        return Err(Missing);
    }
    Ok(format!("Summarise `{tag}`."))
}

fn main() {}
