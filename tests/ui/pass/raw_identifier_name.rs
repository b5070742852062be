use toolwright::registry::Registry;
use toolwright::mcp_tool;

/// The type of a value.
#[mcp_tool]
fn r#type(
    /// The value.
    r#in: String,
) -> String {
    format!("string: {}", r#in)
}

fn main() {
    let registry = Registry::collect().unwrap();
    let tool = registry.get("type").unwrap();
    assert_eq!(tool.name(), "type");
    assert_eq!(tool.input_schema()["required"], serde_json::json!(["in"]));
    assert_eq!(r#type("x".to_owned()), "string: x");
}
