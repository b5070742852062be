use serde_json::Value;
use toolwright::mcp_tool;

/// Two parameters, but a literal schema describes one arguments object.
#[mcp_tool(input_schema = r#"{"type": "object"}"#)]
fn pair(first: Value, second: String) -> String {
    format!("{first} {second}")
}

fn main() {}
