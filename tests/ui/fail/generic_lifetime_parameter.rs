use toolwright::mcp_tool;

/// Count the words of a text.
#[mcp_tool]
fn count_words<'a>(text: &'a str) -> usize {
    text.split_whitespace().count()
}

fn main() {}
