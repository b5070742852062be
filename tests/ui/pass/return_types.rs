use std::fmt;
use std::io;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use toolwright::registry::Registry;
use toolwright::{ToolResult, mcp_tool};

/// A sum.
#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

/// Why a note cannot be read.
#[derive(Debug)]
struct NotFound(String);

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no note is titled `{}`", self.0)
    }
}

/// Returns nothing.
#[mcp_tool]
fn unit() {}

/// Returns `()` spelled out.
#[mcp_tool]
fn unit_spelled() -> () {}

/// Returns a string.
#[mcp_tool]
fn string() -> String {
    String::new()
}

/// Returns a number.
#[mcp_tool]
fn number() -> f64 {
    1.5
}

/// Returns a struct.
#[mcp_tool]
fn structure() -> Sum {
    Sum { sum: 1 }
}

/// Returns a result with a custom error.
#[mcp_tool]
fn custom_error(title: String) -> Result<Sum, NotFound> {
    Err(NotFound(title))
}

/// Returns an `anyhow` result.
#[mcp_tool]
fn with_anyhow() -> anyhow::Result<Sum> {
    Ok(Sum { sum: 2 })
}

/// Returns a boxed error.
#[mcp_tool]
fn boxed_error() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    Ok(())
}

/// Returns an I/O result.
#[mcp_tool]
fn io_result() -> io::Result<String> {
    Ok(String::new())
}

/// Returns a result built by hand.
#[mcp_tool]
fn tool_result() -> ToolResult {
    ToolResult::text("done")
}

/// Returns a result built by hand, or an error.
#[mcp_tool]
async fn tool_result_or_error() -> Result<ToolResult, String> {
    Ok(ToolResult::text("done"))
}

fn main() {
    let registry = Registry::collect().unwrap();
    let sum_schema = json!({
        "type": "object",
        "description": "A sum.",
        "properties": {"sum": {"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX}},
        "required": ["sum"],
    });
    for name in ["structure", "custom_error", "with_anyhow"] {
        let tool = registry.get(name).unwrap();
        assert_eq!(tool.output_schema(), Some(&sum_schema), "{name}");
        assert!(tool.is_structured(), "{name}");
    }
    for name in [
        "unit",
        "unit_spelled",
        "string",
        "number",
        "boxed_error",
        "io_result",
        "tool_result",
        "tool_result_or_error",
    ] {
        let tool = registry.get(name).unwrap();
        assert_eq!(tool.output_schema(), None, "{name}");
        assert!(tool.descriptor().get("outputSchema").is_none(), "{name}");
    }
    // A string or a number is served as text, and the manifest says why.
    let notes = registry.manifest().notes().join("\n");
    assert!(notes.contains("tool `string`"), "{notes}");
    assert!(notes.contains("tool `number`"), "{notes}");
    assert!(!notes.contains("tool `unit`"), "{notes}");

    assert_eq!(
        custom_error("x".to_owned()).err().unwrap().to_string(),
        "no note is titled `x`"
    );
}
