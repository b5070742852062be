use serde_json::json;
use toolwright::registry::Registry;
use toolwright::mcp_tool;

/// Find notes of a kind.
#[mcp_tool]
fn search(
    /// The kind of note.
    #[arg(rename = "type")]
    kind: String,
    /// Words to look for.
    #[arg(rename = "q")]
    query: Option<String>,
    /// Whether to match case; a raw identifier is named without `r#`.
    r#match: bool,
) -> String {
    format!("{kind} {query:?} {}", r#match)
}

fn main() {
    let registry = Registry::collect().unwrap();
    let schema = registry.get("search").unwrap().input_schema();
    let mut names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    names.sort();
    assert_eq!(names, ["match", "q", "type"]);
    assert_eq!(schema["required"], json!(["type", "match"]));
    assert_eq!(schema["properties"]["type"]["description"], "The kind of note.");
}
