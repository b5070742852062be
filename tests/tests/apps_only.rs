//! A server whose only tool is for MCP Apps views: clients without the extension get an empty
//! list, in both catalog modes, and the server starts and serves all the same.

use serde_json::{Value, json};
use toolwright::apps::{self, UiResource};
use toolwright::catalog::Catalog;
use toolwright::{Server, mcp_tool};
use toolwright_tests::Client;
use toolwright_tests::stdio::initialize_params;

toolwright::apps::ui_resource!(UiResource::new(
    "ui://only/view.html",
    "<!doctype html><p>Only"
));

/// Refresh the view; only the view calls it.
#[mcp_tool(visibility = ["app"])]
fn refresh() -> String {
    "fresh".to_owned()
}

async fn listed(catalog: Catalog, page_size: Option<usize>, apps: bool) -> Vec<String> {
    let mut server = Server::new("apps-only", "1.0.0").catalog(catalog);
    if let Some(size) = page_size {
        server = server.page_size(size);
    }
    let mut client = Client::with(server);
    let mut params = initialize_params("2025-11-25");
    if apps {
        params["capabilities"] =
            json!({"extensions": {apps::EXTENSION_ID: {"mimeTypes": [apps::MIME_TYPE]}}});
    }
    client.initialize_with(params).await;
    let (mut names, mut cursor) = (Vec::new(), Value::Null);
    for id in 1.. {
        let page = client
            .result(id, "tools/list", json!({"cursor": cursor}))
            .await;
        let tools = page["tools"].as_array().expect("a tools array");
        names.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            return names;
        }
        assert!(!tools.is_empty(), "a page before the last is empty: {page}");
    }
    unreachable!("the pages end")
}

#[tokio::test]
async fn clients_without_views_get_an_empty_list() {
    for page_size in [None, Some(1)] {
        assert!(listed(Catalog::Full, page_size, false).await.is_empty());
        assert_eq!(listed(Catalog::Full, page_size, true).await, ["refresh"]);
        assert_eq!(
            listed(Catalog::Progressive, page_size, false).await,
            ["search_tools", "call_tool"]
        );
        assert_eq!(
            listed(Catalog::Progressive, page_size, true).await,
            ["search_tools", "call_tool", "refresh"]
        );
    }
}

#[tokio::test]
async fn the_progressive_catalog_has_nothing_to_search() {
    let mut client = Client::with(Server::new("apps-only", "1.0.0").catalog(Catalog::Progressive));
    client.initialize().await;
    let found = client.call(1, "search_tools", json!({})).await;
    assert_eq!(found["structuredContent"], json!({"total": 0, "tools": []}));
    let listed = client.result(2, "tools/list", json!({})).await;
    let description = listed["tools"][0]["description"].as_str().unwrap();
    assert!(
        description.contains("The server has 0 tools."),
        "{description}"
    );
    let _: &Value = &listed;
}
