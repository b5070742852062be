use std::path::PathBuf;

use serde_json::json;
use toolwright::registry::Registry;
use toolwright::mcp_tool;

/// List notes.
#[mcp_tool]
fn list(
    /// How many notes to return at most.
    #[arg(default = 10)]
    limit: u32,
    /// The folder to list.
    #[arg(default = "inbox")]
    folder: String,
    /// Where the notes live.
    #[arg(default = "/var/notes")]
    root: PathBuf,
    /// Whether to include archived notes.
    #[arg(default = false)]
    archived: bool,
    /// How many notes to skip.
    #[arg(default = u32::MAX / 2)]
    skip: u32,
) -> Vec<String> {
    vec![format!("{limit} {folder} {} {archived} {skip}", root.display())]
}

fn main() {
    let registry = Registry::collect().unwrap();
    let schema = registry.get("list").unwrap().input_schema();
    assert_eq!(schema.get("required"), None, "{schema}");
    let properties = &schema["properties"];
    assert_eq!(properties["limit"]["default"], json!(10));
    assert_eq!(properties["folder"]["default"], json!("inbox"));
    assert_eq!(properties["root"]["default"], json!("/var/notes"));
    assert_eq!(properties["archived"]["default"], json!(false));
    assert_eq!(properties["skip"]["default"], json!(u32::MAX / 2));
    assert_eq!(properties["folder"]["description"], "The folder to list.");
}
