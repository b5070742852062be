//! A tool named like a meta-tool of the progressive catalog: served in the full catalog, refused
//! at start in the progressive one.

use serde_json::json;
use toolwright::catalog::Catalog;
use toolwright::registry::{Conflict, Origin, Registry};
use toolwright::{Error, Server, mcp_tool};
use toolwright_tests::Client;

/// Look tools up in an external index.
#[mcp_tool(read_only)]
fn search_tools(
    /// What to look for.
    query: String,
) -> String {
    format!("external: {query}")
}

#[tokio::test]
async fn the_full_catalog_serves_a_tool_named_search_tools() {
    let mut client = Client::start();
    client.initialize().await;
    let result = client.call(1, "search_tools", json!({"query": "x"})).await;
    assert_eq!(result["content"][0]["text"], "external: x");
}

#[tokio::test]
async fn the_progressive_catalog_refuses_to_start_with_it() {
    let mut client = Client::with(Server::new("t", "1").catalog(Catalog::Progressive));
    let Err(Error::Registry(err)) = client.served().await else {
        panic!("the server starts");
    };
    let [Conflict::ReservedName { name, location }] = err.conflicts() else {
        panic!("{err}");
    };
    assert_eq!(name, "search_tools");
    let Origin::Linked(location) = location else {
        panic!("{location}");
    };
    assert_eq!(location.file, "tests/tests/reserved_names.rs");
    assert_eq!(
        err.to_string(),
        format!(
            "the tools cannot be served:\n  - tool `search_tools` at {location}: the progressive \
             catalog has a tool of its own by that name; rename this one with \
             `#[mcp_tool(name = \"...\")]`, or serve the full catalog"
        )
    );
    // The registry itself is fine: only the mode reserves the name.
    assert!(Registry::collect().is_ok());
}
