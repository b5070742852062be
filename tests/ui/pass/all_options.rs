use serde_json::json;
use toolwright::registry::{Annotations, Registry};
use toolwright::tasks::TaskSupport;
use toolwright::mcp_tool;

/// Not this text: `description` wins over the doc comment.
#[mcp_tool(
    name = "notes.delete-all_v2",
    description = "Delete every note.",
    title = "Delete all notes",
    destructive,
    idempotent = true,
    open_world = false,
    read_only = false,
    tags = ["notes", "danger"],
    scopes = ["notes:write", "notes.admin"],
    core,
    task = "required",
    provider = "notebook",
)]
fn delete_all() {}

/// Every hint bare.
#[mcp_tool(read_only, idempotent, open_world, core = false, task = "optional")]
fn all_bare() {}

/// Every hint written out.
#[mcp_tool(
    read_only = true,
    destructive = false,
    idempotent = false,
    open_world = true,
    task = "forbidden",
)]
fn all_written() {}

/// No options at all.
#[mcp_tool()]
fn no_options() {}

fn main() {
    let registry = Registry::collect().unwrap();
    let names: Vec<&str> = registry.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["all_bare", "all_written", "no_options", "notes.delete-all_v2"]);

    let tool = registry.get("notes.delete-all_v2").unwrap();
    assert_eq!(tool.description(), "Delete every note.");
    assert_eq!(tool.title(), Some("Delete all notes"));
    assert_eq!(
        tool.annotations(),
        Annotations {
            read_only: Some(false),
            destructive: Some(true),
            idempotent: Some(true),
            open_world: Some(false),
        }
    );
    assert_eq!(tool.tags(), ["notes", "danger"]);
    assert_eq!(tool.scopes(), ["notes:write", "notes.admin"]);
    let schemes = json!([{"type": "oauth2", "scopes": ["notes:write", "notes.admin"]}]);
    assert_eq!(tool.descriptor()["securitySchemes"], schemes);
    assert_eq!(tool.descriptor()["_meta"]["securitySchemes"], schemes);
    assert!(registry.get("all_bare").unwrap().descriptor().get("securitySchemes").is_none());
    assert!(tool.is_core());
    assert_eq!(tool.task_support(), TaskSupport::Required);
    assert_eq!(tool.descriptor()["execution"], json!({"taskSupport": "required"}));
    assert_eq!(tool.provider(), "notebook");
    assert_eq!(tool.descriptor()["title"], "Delete all notes");
    assert_eq!(
        tool.descriptor()["annotations"],
        json!({
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": true,
            "openWorldHint": false,
        })
    );

    let bare = registry.get("all_bare").unwrap();
    assert_eq!(
        bare.annotations(),
        Annotations {
            read_only: Some(true),
            destructive: None,
            idempotent: Some(true),
            open_world: Some(true),
        }
    );
    assert!(!bare.is_core());
    assert_eq!(bare.task_support(), TaskSupport::Optional);
    assert_eq!(bare.descriptor()["execution"], json!({"taskSupport": "optional"}));

    let written = registry.get("all_written").unwrap();
    assert_eq!(
        written.annotations(),
        Annotations {
            read_only: Some(true),
            destructive: Some(false),
            idempotent: Some(false),
            open_world: Some(true),
        }
    );
    // `forbidden` written out is the default: nothing is listed.
    assert_eq!(written.task_support(), TaskSupport::Forbidden);
    assert!(written.descriptor().get("execution").is_none());

    // Without options: no title, no hints, no tags, never a task, the package as provider.
    let plain = registry.get("no_options").unwrap();
    assert_eq!(plain.title(), None);
    assert_eq!(plain.annotations(), Annotations::default());
    assert!(plain.descriptor().get("annotations").is_none());
    assert_eq!(plain.tags(), [] as [&str; 0]);
    assert!(!plain.is_core());
    assert_eq!(plain.task_support(), TaskSupport::Forbidden);
    assert!(plain.descriptor().get("execution").is_none());
    assert_eq!(plain.provider(), env!("CARGO_PKG_NAME"));
}
