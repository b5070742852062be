use toolwright::mcp_prompt;

/// Summarise the week.
#[mcp_prompt]
fn summarise(
    /// How many words.
    #[arg(default = "100")]
    words: String,
) -> String {
    format!("Summarise the week in {words} words.")
}

fn main() {}
