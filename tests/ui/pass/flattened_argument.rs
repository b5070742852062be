use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolwright::registry::Registry;
use toolwright::mcp_tool;

/// Which part of a long list to return.
#[derive(Deserialize, JsonSchema)]
struct Page {
    /// How many items to skip.
    offset: u32,
    /// How many items to return at most.
    limit: Option<u32>,
}

/// List notes.
#[mcp_tool]
fn list(
    /// The folder to list.
    folder: String,
    #[arg(flatten)]
    page: Page,
) -> Vec<String> {
    vec![format!("{folder} {} {:?}", page.offset, page.limit)]
}

fn main() {
    let registry = Registry::collect().unwrap();
    let schema = registry.get("list").unwrap().input_schema();
    let mut names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    names.sort();
    assert_eq!(names, ["folder", "limit", "offset"]);
    assert_eq!(schema["required"], json!(["folder", "offset"]));
    assert_eq!(schema["properties"]["offset"]["description"], "How many items to skip.");
    assert_eq!(schema["additionalProperties"], json!(false));
}
