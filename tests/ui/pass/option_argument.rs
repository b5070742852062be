use serde_json::json;
use toolwright::registry::Registry;
use toolwright::mcp_tool;

/// Find notes.
#[mcp_tool]
fn search(
    /// Words to look for.
    query: String,
    /// Only notes with this tag.
    tag: Option<String>,
    /// How many notes to return at most.
    limit: Option<u32>,
) -> Vec<String> {
    vec![format!("{query} {tag:?} {limit:?}")]
}

fn main() {
    let registry = Registry::collect().unwrap();
    let schema = registry.get("search").unwrap().input_schema();
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(schema["properties"]["tag"]["type"], json!(["string", "null"]));
    assert_eq!(schema["properties"]["limit"]["type"], json!(["integer", "null"]));
}
