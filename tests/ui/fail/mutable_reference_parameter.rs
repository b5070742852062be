use toolwright::mcp_tool;

/// Shout a text.
#[mcp_tool]
fn shout(text: &mut String) -> String {
    text.make_ascii_uppercase();
    text.clone()
}

fn main() {}
