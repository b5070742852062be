use serde_json::json;
use toolwright::registry::Registry;
use toolwright::{Context, mcp_tool};

/// The tool's own name.
#[mcp_tool]
fn by_value(ctx: Context) -> String {
    ctx.tool_name().to_owned()
}

/// The tool's own name, after a greeting.
#[mcp_tool]
async fn by_reference(
    /// Who to greet.
    name: String,
    ctx: &Context,
) -> String {
    format!("hello {name}, from {}", ctx.tool_name())
}

/// The tool's own name, through a path.
#[mcp_tool]
fn by_path(ctx: &toolwright::Context) -> String {
    ctx.tool_name().to_owned()
}

fn main() {
    let registry = Registry::collect().unwrap();
    assert_eq!(
        registry.get("by_value").unwrap().input_schema()["properties"],
        json!({})
    );
    assert_eq!(
        registry.get("by_path").unwrap().input_schema()["properties"],
        json!({})
    );
    let schema = registry.get("by_reference").unwrap().input_schema();
    assert_eq!(schema["required"], json!(["name"]));
    assert_eq!(schema["properties"].as_object().unwrap().len(), 1);

    assert_eq!(by_value(Context::detached("by_value")), "by_value");
    assert_eq!(by_path(&Context::detached("by_path")), "by_path");
}
