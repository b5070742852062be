use serde_json::json;
use toolwright::registry::Registry;
use toolwright::mcp_tool;

/// Add two integers.
#[mcp_tool]
fn add(
    /// The first term.
    a: i64,
    /// The second term.
    b: i64,
) -> i64 {
    a + b
}

/// Add two integers, later.
#[mcp_tool]
async fn add_later(a: i64, b: i64) -> i64 {
    a + b
}

/// Say that nothing happened.
#[mcp_tool]
fn nothing() -> String {
    "nothing".to_owned()
}

fn main() {
    let registry = Registry::collect().unwrap();
    let names: Vec<&str> = registry.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["add", "add_later", "nothing"]);

    let tool = registry.get("add").unwrap();
    assert_eq!(tool.description(), "Add two integers.");
    assert_eq!(tool.input_schema()["required"], json!(["a", "b"]));
    assert_eq!(tool.input_schema()["properties"]["a"]["description"], "The first term.");
    assert_eq!(
        registry.get("add_later").unwrap().input_schema(),
        &json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX},
                "b": {"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX},
            },
            "required": ["a", "b"],
            "additionalProperties": false,
        }),
    );
    assert_eq!(
        registry.get("nothing").unwrap().input_schema(),
        &json!({"type": "object", "properties": {}, "additionalProperties": false}),
    );

    // The functions stay callable as written.
    assert_eq!(add(2, 3), 5);
    assert_eq!(nothing(), "nothing");
}
