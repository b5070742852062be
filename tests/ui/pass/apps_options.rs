use serde_json::json;
use toolwright::apps::{ToolUi, UiResource, Visibility};
use toolwright::registry::Registry;
use toolwright::mcp_tool;

toolwright::apps::ui_resource!(
    UiResource::new("ui://board/view.html", "<!doctype html><title>Board</title>")
        .connect_domains(&["https://api.example.com", "wss://*.example.com:8443"])
        .domain("board.example.com")
);

/// Show the board.
#[mcp_tool(ui = "ui://board/view.html")]
fn show_board() {}

/// Move a card; only the board view calls it.
#[mcp_tool(visibility = ["app"])]
fn move_card() {}

/// The model only, written out.
#[mcp_tool(ui = "ui://board/view.html", visibility = ["model"])]
fn model_only() {}

fn main() {
    let registry = Registry::collect().unwrap();
    assert_eq!(
        registry.get("show_board").unwrap().ui(),
        ToolUi { resource_uri: Some("ui://board/view.html"), visibility: None }
    );
    let app = registry.get("move_card").unwrap();
    assert_eq!(app.ui().visibility, Some(Visibility::APP_ONLY));
    assert!(app.is_app_only());
    assert_eq!(app.descriptor()["_meta"], json!({"ui": {"visibility": ["app"]}}));
    assert_eq!(
        registry.get("model_only").unwrap().descriptor()["_meta"],
        json!({"ui": {"resourceUri": "ui://board/view.html", "visibility": ["model"]}})
    );
    let view = registry.ui_resource("ui://board/view.html").unwrap();
    assert_eq!(view.meta().domain.as_deref(), Some("board.example.com"));
}
