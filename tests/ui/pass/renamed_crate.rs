use toolwright as tw;

/// Add two integers.
#[tw::mcp_tool(crate = tw, read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Greet someone, with the context.
#[tw::mcp_tool(crate = tw)]
async fn greet(name: &str, ctx: &tw::Context) -> tw::ToolResult {
    tw::ToolResult::text(format!("hello {name} from {}", ctx.tool_name()))
}

fn main() {
    let registry = tw::registry::Registry::collect().unwrap();
    let names: Vec<&str> = registry.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["add", "greet"]);
    assert_eq!(registry.get("add").unwrap().annotations().read_only, Some(true));
    assert_eq!(
        registry.get("greet").unwrap().input_schema()["required"],
        serde_json::json!(["name"])
    );
}
