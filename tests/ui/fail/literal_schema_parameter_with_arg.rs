use serde_json::Value;
use toolwright::mcp_tool;

/// A literal schema describes the arguments, so `#[arg]` on the parameter has nothing to shape.
#[mcp_tool(input_schema = r#"{"type": "object"}"#)]
fn take(#[arg(rename = "args")] arguments: Value) -> String {
    arguments.to_string()
}

fn main() {}
