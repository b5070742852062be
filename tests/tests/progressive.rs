//! The progressive catalog, as a client sees it: `tools/list` holds the meta-tools and the core
//! tools, `search_tools` finds the rest, and `call_tool` or a direct call runs them.

use serde_json::{Value, json};
use toolwright::catalog::Catalog;
use toolwright::{Context, Server, mcp_tool};
use toolwright_tests::{Client, tool_names as names};

/// Count to `n`, reporting progress at each step.
#[mcp_tool(read_only, tags = ["demo"])]
fn count_steps(
    /// How far to count.
    n: u32,
    ctx: Context,
) -> u32 {
    for i in 1..=n {
        ctx.progress(f64::from(i), Some(f64::from(n)), None);
    }
    n
}

/// A server of every tool of this binary, the notes tools among them, with the notebook they
/// take, in memory.
fn notes_server() -> Server {
    toolwright::server!(notes_tools).state(notes_tools::Notebook::in_memory())
}

fn progressive() -> Server {
    notes_server()
        .instructions("A notebook.")
        .catalog(Catalog::Progressive)
}

async fn client() -> Client {
    let mut client = Client::with(progressive());
    client.initialize().await;
    client
}

async fn search(client: &mut Client, id: i64, arguments: Value) -> Value {
    let result = client.call(id, "search_tools", arguments).await;
    assert_eq!(result["isError"], json!(null), "{result}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    let structured = &result["structuredContent"];
    assert_eq!(
        &serde_json::from_str::<Value>(text).unwrap(),
        structured,
        "the text mirrors the structured content"
    );
    structured.clone()
}

/// The tool error text of a result, which must be an error.
fn error_text(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap()
}

#[tokio::test]
async fn the_list_holds_the_meta_tools_then_the_core_tools() {
    let mut client = client().await;
    let listed = client.result(1, "tools/list", json!({})).await;
    let tools = listed["tools"].as_array().unwrap();
    assert_eq!(
        names(&listed),
        [
            "search_tools",
            "call_tool",
            "add_note",
            "list_notes",
            "search_notes"
        ]
    );
    for meta in &tools[..2] {
        assert_eq!(meta["_meta"]["anthropic/alwaysLoad"], true, "{meta}");
    }
    assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);
    assert_eq!(tools[1]["annotations"]["destructiveHint"], true);
    assert_eq!(tools[1]["annotations"]["readOnlyHint"], false);
    // The core tools are listed exactly as in the full catalog.
    assert_eq!(tools[2]["annotations"]["destructiveHint"], false);
    assert_eq!(
        tools[2]["_meta"],
        json!({"securitySchemes": [{"type": "oauth2", "scopes": ["notes:write"]}]}),
        "{}",
        tools[2]
    );
    let description = tools[0]["description"].as_str().unwrap();
    // Tags by use, then by first use in name order.
    assert!(
        description.starts_with(
            "Search this server's tools. The server has 13 tools. Tags: notes (11), read (7), \
             write (5), tags (4), demo (1), export (1), search (1), wait (1). "
        ),
        "{description}"
    );
}

#[tokio::test]
async fn the_instructions_end_with_how_to_find_the_other_tools() {
    let mut client = Client::with(progressive());
    let response = client
        .request(
            0,
            "initialize",
            toolwright_tests::stdio::initialize_params("2025-11-25"),
        )
        .await;
    let instructions = response["result"]["instructions"].as_str().unwrap();
    assert!(
        instructions.starts_with("A notebook.\n\nThe tool list shows only the core tools."),
        "{instructions}"
    );
    assert!(instructions.contains("`search_tools`"), "{instructions}");
}

#[tokio::test]
async fn search_finds_each_tool_by_its_own_name_words() {
    let mut client = client().await;
    let every = search(&mut client, 1, json!({"detail": "name", "limit": 50})).await;
    let all = names(&every)
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>();
    // The notes tools and `count_steps`; not `move_note`, which only the board view calls.
    assert_eq!(every["total"], 13);
    assert!(
        !all.iter()
            .any(|name| name == "search_tools" || name == "call_tool")
    );
    for (id, name) in (2..).zip(&all) {
        let query = name.replace('_', " ");
        let found = search(&mut client, id, json!({"query": query, "detail": "name"})).await;
        assert_eq!(
            names(&found)[0],
            name,
            "`{query}` finds {name} first: {found}"
        );
    }
}

#[tokio::test]
async fn an_empty_query_pages_through_the_catalog_in_name_order() {
    let mut client = client().await;
    let first = search(&mut client, 1, json!({"query": "", "limit": 4})).await;
    let second = search(&mut client, 2, json!({"limit": 4, "offset": 4})).await;
    let past = search(&mut client, 3, json!({"offset": 400})).await;
    assert_eq!(first["total"], 13);
    assert_eq!(
        names(&first),
        ["add_note", "count_steps", "delete_note", "export_notes"]
    );
    assert_eq!(
        names(&second),
        ["get_note", "list_notes", "list_tags", "search_notes"]
    );
    assert_eq!(past["total"], 13);
    assert_eq!(past["tools"], json!([]));
}

#[tokio::test]
async fn detail_chooses_how_much_of_each_tool_comes_back() {
    let mut client = client().await;
    let query = json!("delete note");
    let named = search(&mut client, 1, json!({"query": query, "detail": "name"})).await;
    assert_eq!(
        named["tools"][0],
        json!({"name": "delete_note", "matched": "words"})
    );

    let summary = search(&mut client, 2, json!({"query": query})).await;
    let entry = &summary["tools"][0];
    let description = entry["description"].as_str().unwrap();
    assert!(
        description.starts_with("Delete a note for good."),
        "{entry}"
    );
    assert_eq!(entry["tags"], json!(["notes", "write"]));
    assert_eq!(entry["annotations"]["destructiveHint"], true);
    assert!(entry.get("inputSchema").is_none(), "{entry}");

    let full = search(&mut client, 3, json!({"query": query, "detail": "full"})).await;
    let entry = &full["tools"][0];
    assert_eq!(entry["inputSchema"]["required"], json!(["id"]));
    assert!(entry["outputSchema"].is_object(), "{entry}");
}

#[tokio::test]
async fn call_tool_and_a_direct_call_run_an_unlisted_tool() {
    let mut client = client().await;
    let added = client
        .call(1, "add_note", json!({"title": "Hidden", "body": "found"}))
        .await;
    let id = added["structuredContent"]["id"].clone();

    let through = client
        .call(
            2,
            "call_tool",
            json!({"name": "get_note", "arguments": {"id": id}}),
        )
        .await;
    let direct = client.call(3, "get_note", json!({"id": id})).await;
    assert_eq!(through["structuredContent"]["title"], "Hidden", "{through}");
    assert_eq!(through, direct);

    // Exactly the checks of a direct call, with the same message.
    let bad_through = client
        .call(
            4,
            "call_tool",
            json!({"name": "get_note", "arguments": {"id": "x"}}),
        )
        .await;
    let bad_direct = client.call(5, "get_note", json!({"id": "x"})).await;
    assert_eq!(bad_through, bad_direct);
    assert!(error_text(&bad_through).contains("`id`"), "{bad_through}");
}

#[tokio::test]
async fn call_tool_keeps_the_progress_token() {
    let mut client = client().await;
    let (result, notifications) = client
        .call_notified(
            1,
            json!({
                "name": "call_tool",
                "arguments": {"name": "count_steps", "arguments": {"n": 2}},
                "_meta": {"progressToken": "through"},
            }),
        )
        .await;
    assert_eq!(result["content"][0]["text"], "2", "{result}");
    let tokens: Vec<&Value> = notifications
        .iter()
        .map(|n| &n["params"]["progressToken"])
        .collect();
    assert_eq!(tokens, [&json!("through"), &json!("through")]);
}

#[tokio::test]
async fn bad_search_arguments_are_refused_with_the_rule() {
    let mut client = client().await;
    let words: Vec<String> = (0..17).map(|n| format!("w{n}")).collect();
    let cases = [
        (
            json!({"limit": 0}),
            "argument `limit`: 0 is less than the minimum of 1",
        ),
        (
            json!({"limit": 51}),
            "argument `limit`: 51 is greater than the maximum of 50",
        ),
        (
            json!({"limit": 2.5}),
            r#"argument `limit`: 2.5 is not of type "integer""#,
        ),
        (
            json!({"offset": -1}),
            "argument `offset`: -1 is less than the minimum of 0",
        ),
        (
            json!({"offset": "2"}),
            r#"argument `offset`: "2" is not of type "integer""#,
        ),
        (
            json!({"detail": "everything"}),
            r#"argument `detail`: "everything" is not one of "name", "summary" or "full""#,
        ),
        (
            json!({"query": 7}),
            r#"argument `query`: 7 is not of type "string""#,
        ),
        (
            json!({"query": "x".repeat(129)}),
            "… is longer than 128 characters",
        ),
        (
            json!({"query": words.join(" ")}),
            "`query` must hold at most 16 distinct words, not 17",
        ),
        (
            json!({"filter": "notes"}),
            "unknown argument `filter`; expected one of `detail`, `limit`, `offset`, `query`",
        ),
    ];
    for (id, (arguments, rule)) in (1..).zip(cases) {
        let result = client.call(id, "search_tools", arguments.clone()).await;
        let text = error_text(&result);
        assert!(
            text.starts_with("invalid arguments for tool `search_tools`: ") && text.contains(rule),
            "{arguments}: {text}"
        );
    }
    // At the limits, and with repeated words counted once, the query is fine.
    let wide = "日".repeat(128);
    let repeated = vec!["tag"; 25].join(" ");
    for (id, query) in (100..).zip([wide, repeated]) {
        let result = client
            .call(id, "search_tools", json!({"query": query, "limit": 50}))
            .await;
        assert_eq!(result["isError"], json!(null), "{result}");
    }
}

#[tokio::test]
async fn call_tool_refuses_meta_tools_unknown_tools_and_bad_arguments() {
    let mut client = client().await;
    let cases = [
        (
            json!({"name": "search_tools", "arguments": {"query": "note"}}),
            "`call_tool` runs the catalog's tools, not `search_tools`: call `search_tools` directly",
        ),
        (
            json!({"name": "call_tool", "arguments": {"name": "get_note"}}),
            "`call_tool` runs the catalog's tools, not `call_tool`: call `call_tool` directly",
        ),
        (
            json!({"name": "no_such_tool"}),
            "unknown tool `no_such_tool`: `search_tools` finds the tools this server has",
        ),
        (
            json!({}),
            "invalid arguments for tool `call_tool`: missing required argument `name`",
        ),
        (
            json!({"name": 3}),
            r#"invalid arguments for tool `call_tool`: argument `name`: 3 is not of type "string""#,
        ),
        (
            json!({"name": "get_note", "arguments": [1]}),
            r#"invalid arguments for tool `call_tool`: argument `arguments`: [1] is not of type "object""#,
        ),
        (
            json!({"name": "get_note", "id": 1}),
            "invalid arguments for tool `call_tool`: unknown argument `id`; expected one of `arguments`, `name`",
        ),
    ];
    for (id, (arguments, message)) in (1..).zip(cases) {
        let result = client.call(id, "call_tool", arguments.clone()).await;
        let text = error_text(&result);
        assert!(text.starts_with(message), "{arguments}: {text}");
    }
    // A direct call of an unknown tool stays a protocol error, with the hint.
    let response = client
        .request(
            50,
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
        )
        .await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert_eq!(
        response["error"]["message"],
        "unknown tool `no_such_tool`: `search_tools` finds the tools this server has"
    );
}

#[tokio::test]
async fn the_full_catalog_has_no_meta_tools() {
    let mut client = Client::with(notes_server());
    client.initialize().await;
    let listed = client.result(1, "tools/list", json!({})).await;
    // Every tool but `move_note`, which only the board view calls: this client shows no views.
    assert_eq!(listed["tools"].as_array().unwrap().len(), 13);
    let response = client
        .request(2, "tools/call", json!({"name": "search_tools"}))
        .await;
    assert_eq!(response["error"]["message"], "unknown tool `search_tools`");
}

#[tokio::test]
async fn the_stateless_era_pages_the_progressive_list_too() {
    let mut client = Client::with(progressive().page_size(3));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let discovered = client
        .result(1, "server/discover", json!({"_meta": meta}))
        .await;
    assert!(
        discovered["instructions"]
            .as_str()
            .unwrap()
            .contains("`call_tool`")
    );
    let first = client.result(2, "tools/list", json!({"_meta": meta})).await;
    let cursor = first["nextCursor"].clone();
    let second = client
        .result(3, "tools/list", json!({"_meta": meta, "cursor": cursor}))
        .await;
    assert_eq!(names(&first), ["search_tools", "call_tool", "add_note"]);
    assert_eq!(names(&second), ["list_notes", "search_notes"]);
    assert_eq!(second["resultType"], "complete");
    assert!(second.get("nextCursor").is_none(), "{second}");
    let found = client
        .result(
            4,
            "tools/call",
            json!({"_meta": meta, "name": "search_tools", "arguments": {"query": "list tags"}}),
        )
        .await;
    assert_eq!(found["resultType"], "complete");
    assert_eq!(found["structuredContent"]["tools"][0]["name"], "list_tags");
}

#[tokio::test]
async fn a_cursor_of_the_full_catalog_is_refused_by_the_progressive_one() {
    let mut full = Client::with(notes_server().page_size(3));
    full.initialize().await;
    let first = full.result(1, "tools/list", json!({})).await;
    let cursor = first["nextCursor"].clone();
    assert!(cursor.is_string(), "{first}");

    let mut client = Client::with(progressive().page_size(3));
    client.initialize().await;
    let response = client
        .request(1, "tools/list", json!({"cursor": cursor}))
        .await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
}
