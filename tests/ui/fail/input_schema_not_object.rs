use toolwright::mcp_tool;

/// A literal schema whose root is not an object.
#[mcp_tool(input_schema = r#"{"type": "array", "items": {"type": "string"}}"#)]
fn list() {}

fn main() {}
