use toolwright::mcp_tool;

/// Find notes.
#[mcp_tool]
fn search(
    /// Words to look for.
    query: String,
    /// Words to look for in titles.
    #[arg(rename = "query")]
    title_query: String,
) -> Vec<String> {
    vec![query, title_query]
}

fn main() {}
