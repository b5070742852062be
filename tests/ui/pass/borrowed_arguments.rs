use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolwright::registry::Registry;
use toolwright::mcp_tool;

#[derive(Deserialize, JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

/// Describe borrowed arguments.
#[mcp_tool]
fn describe(
    /// A text.
    text: &str,
    /// Some numbers.
    numbers: &[u32],
    /// A file.
    file: &Path,
    /// A point.
    point: &Point,
    /// A path spelled out.
    other: &std::path::Path,
) -> String {
    format!(
        "{text} {numbers:?} {} ({}, {}) {}",
        file.display(),
        point.x,
        point.y,
        other.display()
    )
}

fn main() {
    let registry = Registry::collect().unwrap();
    let properties = &registry.get("describe").unwrap().input_schema()["properties"];
    assert_eq!(properties["text"]["type"], "string");
    assert_eq!(properties["numbers"]["type"], "array");
    assert_eq!(properties["numbers"]["items"]["maximum"], u32::MAX);
    assert_eq!(properties["file"]["type"], "string");
    assert_eq!(properties["other"]["type"], "string");
    assert_eq!(properties["point"]["type"], "object");
    assert_eq!(properties["point"]["required"], json!(["x", "y"]));

    let point = Point { x: 1, y: 2 };
    assert_eq!(
        describe("hi", &[1, 2], Path::new("a.txt"), &point, Path::new("b")),
        "hi [1, 2] a.txt (1, 2) b"
    );
}
