use toolwright::mcp_tool;

struct Opaque;

/// A literal schema, read into a type serde cannot read.
#[mcp_tool(input_schema = r#"{"type": "object"}"#)]
fn take(arguments: Opaque) {
    let _ = arguments;
}

fn main() {}
