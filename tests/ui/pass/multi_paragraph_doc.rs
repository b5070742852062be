use toolwright::registry::Registry;
use toolwright::mcp_tool;

/// Find notes whose title or body contains the query.
/// Matching ignores case.
///
/// Results are sorted by title:
///
/// - newest first when titles tie,
/// - at most `limit` of them.
///
/// ```text
/// search "milk"
/// ```
#[mcp_tool]
fn search(
    /// Words to look for.
    ///
    /// Several words must all match.
    query: String,
    /// How many notes to return at most.
    limit: u32,
) -> Vec<String> {
    vec![format!("{query} {limit}")]
}

fn main() {
    let registry = Registry::collect().unwrap();
    let tool = registry.get("search").unwrap();
    assert_eq!(
        tool.description(),
        "Find notes whose title or body contains the query. Matching ignores case.\n\
         \n\
         Results are sorted by title:\n\
         \n\
         - newest first when titles tie,\n\
         - at most `limit` of them.\n\
         \n\
         ```text\n\
         search \"milk\"\n\
         ```"
    );
    assert_eq!(
        tool.input_schema()["properties"]["query"]["description"],
        "Words to look for.\n\nSeveral words must all match."
    );
}
