use toolwright::mcp_prompt;

/// Review a file.
#[mcp_prompt]
fn review(#[arg(header = "Path")] path: String) -> String {
    path
}

fn main() {}
