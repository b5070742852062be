//! MCP Apps as a client sees it: tools that name a view, the view served as a `ui://`
//! resource, and tools only views may call, hidden from clients without the extension and from
//! the progressive catalog.

use serde_json::{Value, json};
use toolwright::__private::ToolRegistration;
use toolwright::__private::UiResourceRegistration;
use toolwright::apps::{self, ToolUi, UiResource, Visibility};
use toolwright::catalog::Catalog;
use toolwright::registry::Location;
use toolwright::registry::{Conflict, Registry};
use toolwright::{Server, mcp_tool};
use toolwright_tests::stdio::initialize_params;
use toolwright_tests::{Client, tool_names as names};

const PAGE: &str = "<!doctype html><title>Tally</title><main id=tally></main>";

toolwright::apps::ui_resource!(
    UiResource::new("ui://tally/view.html", PAGE)
        .title("Tally")
        .connect_domains(&["https://api.tally.example"])
        .resource_domains(&["https://cdn.tally.example"])
        .clipboard_write()
        .prefers_border(false)
);

// A view no tool names: a server may serve one for its views to load.
toolwright::apps::ui_resource!(UiResource::new(
    "ui://tally/help.html",
    "<!doctype html><p>Help"
));

/// The tally so far, shown in the tally view.
#[mcp_tool(read_only, ui = "ui://tally/view.html")]
fn show_tally() -> String {
    "3 so far".to_owned()
}

/// Add one to the tally; the view's button calls it.
#[mcp_tool(visibility = ["app"])]
fn bump_tally() -> String {
    "4 so far".to_owned()
}

/// Reset the tally, from the model or the view.
#[mcp_tool(core, visibility = ["model", "app"])]
fn reset_tally() -> String {
    "0 so far".to_owned()
}

/// The capabilities of a host that shows views.
fn with_apps() -> Value {
    json!({"extensions": {apps::EXTENSION_ID: {"mimeTypes": [apps::MIME_TYPE]}}})
}

async fn client(catalog: Catalog, apps: bool) -> Client {
    connect(Server::new("apps-test", "1.0.0").catalog(catalog), apps).await
}

/// A client of `server` after the handshake, declaring MCP Apps when `apps` says.
async fn connect(server: Server, apps: bool) -> Client {
    let mut client = Client::with(server);
    let mut params = initialize_params("2025-11-25");
    if apps {
        params["capabilities"] = with_apps();
    }
    client.initialize_with(params).await;
    client
}

fn tool<'a>(listed: &'a Value, name: &str) -> &'a Value {
    listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == name)
        .unwrap_or_else(|| panic!("`{name}` is not listed: {listed}"))
}

#[tokio::test]
async fn a_host_with_views_sees_every_tool_with_its_view_and_visibility() {
    let mut client = client(Catalog::Full, true).await;
    let listed = client.result(1, "tools/list", json!({})).await;
    assert_eq!(names(&listed), ["bump_tally", "reset_tally", "show_tally"]);
    assert_eq!(
        tool(&listed, "show_tally")["_meta"],
        json!({"ui": {"resourceUri": "ui://tally/view.html"}})
    );
    assert_eq!(
        tool(&listed, "bump_tally")["_meta"],
        json!({"ui": {"visibility": ["app"]}})
    );
    assert_eq!(
        tool(&listed, "reset_tally")["_meta"],
        json!({"ui": {"visibility": ["model", "app"]}})
    );

    // What a gateway reads back is what the tools declared.
    let meta = apps::ToolMeta::parse(&tool(&listed, "bump_tally")["_meta"]);
    assert_eq!(meta.visibility, Visibility::APP_ONLY);
    assert_eq!(meta.resource_uri, None);

    // The view calls its tool through the host.
    let result = client.call(2, "bump_tally", json!({})).await;
    assert_eq!(result["content"][0]["text"], "4 so far", "{result}");
}

#[tokio::test]
async fn other_clients_see_no_view_only_tool_and_cannot_call_one() {
    let mut client = client(Catalog::Full, false).await;
    let listed = client.result(1, "tools/list", json!({})).await;
    assert_eq!(names(&listed), ["reset_tally", "show_tally"]);
    // A tool with a view is the model's too, and still answers in text.
    let result = client.call(2, "show_tally", json!({})).await;
    assert_eq!(result["content"][0]["text"], "3 so far", "{result}");

    let refused = client
        .request(3, "tools/call", json!({"name": "bump_tally"}))
        .await;
    assert_eq!(
        refused["error"],
        json!({
            "code": -32602,
            "message": "tool `bump_tally` is called only by this server's MCP Apps views (its \
                        visibility is [\"app\"]), and this client has not declared the extension \
                        (`capabilities.extensions[\"io.modelcontextprotocol/ui\"]`)"
        })
    );
}

#[tokio::test]
async fn the_server_declares_resources_and_the_extension() {
    let mut client = Client::with(Server::new("apps-test", "1.0.0"));
    let response = client
        .request(0, "initialize", initialize_params("2025-11-25"))
        .await;
    assert_eq!(
        response["result"]["capabilities"],
        json!({
            "tools": {"listChanged": true},
            "logging": {},
            "resources": {"listChanged": true},
            "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}},
        })
    );
}

#[tokio::test]
async fn views_are_listed_and_read_as_mcp_app_html() {
    let mut client = client(Catalog::Full, true).await;
    let listed = client.result(1, "resources/list", json!({})).await;
    let ui = json!({
        "csp": {
            "connectDomains": ["https://api.tally.example"],
            "resourceDomains": ["https://cdn.tally.example"],
        },
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": false,
    });
    assert_eq!(
        listed,
        json!({"resources": [
            {"uri": "ui://tally/help.html", "name": "ui://tally/help.html",
             "mimeType": "text/html;profile=mcp-app"},
            {"uri": "ui://tally/view.html", "name": "ui://tally/view.html", "title": "Tally",
             "mimeType": "text/html;profile=mcp-app", "_meta": {"ui": ui}},
        ]})
    );

    let read = client
        .result(2, "resources/read", json!({"uri": "ui://tally/view.html"}))
        .await;
    assert_eq!(
        read,
        json!({"contents": [{
            "uri": "ui://tally/view.html",
            "mimeType": "text/html;profile=mcp-app",
            "text": PAGE,
            "_meta": {"ui": ui},
        }]})
    );
    let sandbox = apps::ResourceMeta::parse(&read["contents"][0]["_meta"]).unwrap();
    assert_eq!(sandbox.csp.connect_domains, ["https://api.tally.example"]);
    assert!(sandbox.permissions.clipboard_write && !sandbox.permissions.camera);

    let templates = client
        .result(3, "resources/templates/list", json!({}))
        .await;
    assert_eq!(templates, json!({"resourceTemplates": []}));
}

#[tokio::test]
async fn an_unknown_or_missing_uri_is_an_error() {
    let mut client = client(Catalog::Full, false).await;
    let unknown = client
        .request(1, "resources/read", json!({"uri": "ui://tally/nope.html"}))
        .await;
    assert_eq!(
        unknown["error"],
        json!({
            "code": -32002,
            "message": "resource not found: `ui://tally/nope.html`; this server has \
                        `ui://tally/help.html`, `ui://tally/view.html`",
            "data": {"uri": "ui://tally/nope.html"},
        })
    );
    let missing = client.request(2, "resources/read", json!({})).await;
    assert_eq!(
        missing["error"],
        json!({"code": -32602, "message": "`resources/read` needs a `uri` string"})
    );
    let cursor = client
        .request(3, "resources/list", json!({"cursor": "abc"}))
        .await;
    assert_eq!(cursor["error"]["code"], -32602, "{cursor}");
}

/// `params` of a 2026-07-28 request, declaring `capabilities`.
fn stateless(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    params
}

#[tokio::test]
async fn the_stateless_era_decides_by_each_requests_capabilities() {
    let mut client = Client::with(Server::new("apps-test", "1.0.0"));
    let without = client
        .result(1, "tools/list", stateless(json!({}), json!({})))
        .await;
    assert_eq!(names(&without), ["reset_tally", "show_tally"]);
    // The list depends on the request, so no shared cache may keep it.
    assert_eq!(without["cacheScope"], "private");
    let with = client
        .result(2, "tools/list", stateless(json!({}), with_apps()))
        .await;
    assert_eq!(names(&with), ["bump_tally", "reset_tally", "show_tally"]);
    assert_eq!(with["cacheScope"], "private");
    // A view-only tool, called by a request that does not declare the extension: the era's
    // error for a missing client capability.
    let refused = client
        .request(
            6,
            "tools/call",
            stateless(json!({"name": "bump_tally"}), json!({})),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    let called = client
        .result(
            7,
            "tools/call",
            stateless(json!({"name": "bump_tally"}), with_apps()),
        )
        .await;
    assert_eq!(called["content"][0]["text"], "4 so far", "{called}");
    let templates = client
        .result(
            8,
            "resources/templates/list",
            stateless(json!({}), json!({})),
        )
        .await;
    assert_eq!(templates["resourceTemplates"], json!([]));
    assert!(templates["ttlMs"].is_u64(), "{templates}");
    assert_eq!(templates["cacheScope"], "public", "{templates}");

    let read = client
        .result(
            3,
            "resources/read",
            stateless(json!({"uri": "ui://tally/view.html"}), json!({})),
        )
        .await;
    assert_eq!(read["resultType"], "complete");
    assert_eq!(read["contents"][0]["mimeType"], apps::MIME_TYPE);
    // A read is cacheable too: the TypeScript client v2 refuses one without the hints.
    assert!(read["ttlMs"].is_u64(), "{read}");
    assert_eq!(read["cacheScope"], "public", "{read}");
    let listed = client
        .result(4, "resources/list", stateless(json!({}), json!({})))
        .await;
    assert_eq!(listed["cacheScope"], "public", "{listed}");
    assert!(listed["ttlMs"].is_u64(), "{listed}");
    // 2026-07-28 has no code of its own for an unknown resource.
    let unknown = client
        .request(
            5,
            "resources/read",
            stateless(json!({"uri": "ui://tally/nope.html"}), json!({})),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[tokio::test]
async fn the_progressive_catalog_never_offers_a_view_only_tool_to_the_model() {
    let mut client = client(Catalog::Progressive, true).await;
    let listed = client.result(1, "tools/list", json!({})).await;
    // The core tool and, for the host, the view-only one; the host keeps it from the model.
    assert_eq!(
        names(&listed),
        ["search_tools", "call_tool", "bump_tally", "reset_tally"]
    );
    let found = client
        .call(2, "search_tools", json!({"query": "tally"}))
        .await;
    let found = names(&found["structuredContent"]);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(!found.contains(&"bump_tally"), "{found:?}");
    let refused = client
        .call(3, "call_tool", json!({"name": "bump_tally"}))
        .await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["content"][0]["text"],
        "tool `bump_tally` is called only by this server's MCP Apps views (its visibility is \
         [\"app\"]), not through `call_tool`"
    );
    // The host still calls it directly for the view.
    let direct = client.call(4, "bump_tally", json!({})).await;
    assert_eq!(direct["content"][0]["text"], "4 so far", "{direct}");

    let mut other = self::client(Catalog::Progressive, false).await;
    let listed = other.result(1, "tools/list", json!({})).await;
    assert_eq!(names(&listed), ["search_tools", "call_tool", "reset_tally"]);
}

#[tokio::test]
async fn a_client_without_views_cannot_call_a_view_only_tool_in_progressive_mode_either() {
    let mut client = client(Catalog::Progressive, false).await;
    let refused = client
        .request(1, "tools/call", json!({"name": "bump_tally"}))
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let refused = client
        .call(2, "call_tool", json!({"name": "bump_tally"}))
        .await;
    assert_eq!(refused["isError"], true, "{refused}");
}

#[tokio::test]
async fn each_list_pages_by_itself_and_refuses_the_others_cursors() {
    let paged = || Server::new("apps-test", "1.0.0").page_size(1);
    let (mut with, mut without) = (connect(paged(), true).await, connect(paged(), false).await);
    let walk = async |client: &mut Client| {
        let (mut seen, mut cursors, mut cursor) = (Vec::new(), Vec::new(), Value::Null);
        for id in 1.. {
            let page = client
                .result(id, "tools/list", json!({"cursor": cursor}))
                .await;
            seen.extend(names(&page).into_iter().map(str::to_owned));
            cursor = page["nextCursor"].clone();
            if cursor.is_null() {
                break;
            }
            cursors.push(cursor.clone());
        }
        (seen, cursors)
    };
    let (seen_with, cursors_with) = walk(&mut with).await;
    assert_eq!(seen_with, ["bump_tally", "reset_tally", "show_tally"]);
    let (seen_without, cursors_without) = walk(&mut without).await;
    assert_eq!(seen_without, ["reset_tally", "show_tally"]);
    let foreign = without
        .request(9, "tools/list", json!({"cursor": cursors_with[0]}))
        .await;
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
    let foreign = with
        .request(9, "tools/list", json!({"cursor": cursors_without[0]}))
        .await;
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
}

fn registration(name: &'static str, ui: ToolUi) -> &'static ToolRegistration {
    Box::leak(Box::new(ToolRegistration {
        ui,
        location: Location {
            file: "src/tools.rs",
            line: 7,
            column: 1,
            module_path: "tools",
        },
        ..toolwright_tests::registration(name, "A tool.")
    }))
}

fn resource(uri: &'static str, line: u32) -> &'static UiResourceRegistration {
    Box::leak(Box::new(UiResourceRegistration {
        resource: UiResource::new(uri, "<p>"),
        location: Location {
            file: "src/views.rs",
            line,
            column: 1,
            module_path: "views",
        },
    }))
}

fn conflicts(
    tools: Vec<&'static ToolRegistration>,
    resources: Vec<&'static UiResourceRegistration>,
) -> Vec<String> {
    let error = Registry::from_parts(tools, resources).expect_err("the registry conflicts");
    error.conflicts().iter().map(ToString::to_string).collect()
}

#[test]
fn a_view_that_is_not_declared_stops_the_server() {
    let ui = ToolUi {
        resource_uri: Some("ui://tally/veiw.html"),
        visibility: None,
    };
    assert_eq!(
        conflicts(
            vec![registration("show", ui)],
            vec![resource("ui://tally/view.html", 3)]
        ),
        [
            "tool `show` at src/tools.rs:7:1: its view `ui://tally/veiw.html` is not a declared UI \
          resource; declare it with `toolwright::apps::ui_resource!(UiResource::new(\"ui://tally/veiw.html\", \
          ...))` in a crate the server links, or fix the tool's `ui` (declared: ui://tally/view.html)"
        ]
    );
    let error = Registry::from_parts(vec![registration("show", ui)], vec![]).unwrap_err();
    assert!(matches!(
        &error.conflicts()[0],
        Conflict::MissingUiResource { tool, uri, declared, .. }
            if tool == "show" && uri == "ui://tally/veiw.html" && declared.is_empty()
    ));
    assert!(
        error.to_string().ends_with("(no UI resource is declared)"),
        "{error}"
    );
}

#[test]
fn two_views_with_one_uri_stop_the_server() {
    assert_eq!(
        conflicts(
            vec![],
            vec![
                resource("ui://tally/view.html", 9),
                resource("ui://tally/view.html", 3)
            ]
        ),
        [
            "two resources have the URI `ui://tally/view.html`: one at src/views.rs:3:1, one at \
          src/views.rs:9:1; keep one"
        ]
    );
}
