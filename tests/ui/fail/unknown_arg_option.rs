use toolwright::mcp_tool;

/// Find notes.
#[mcp_tool]
fn search(
    /// Words to look for.
    #[arg(alias = "q")]
    query: String,
) -> Vec<String> {
    vec![query]
}

fn main() {}
