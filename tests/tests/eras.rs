//! Both protocol eras in process, over pipes: the first request of a connection decides whether
//! it speaks the `initialize` handshake (2024-11-05 to 2025-11-25) or the stateless 2026-07-28
//! protocol; plus `tools/list` pages and the debug build's output check.

use std::time::Duration;

use serde_json::{Value, json};
use toolwright::Server;
use toolwright::registry::Registry;
use toolwright_tests::Client;

mod tools {
    use schemars::JsonSchema;
    use serde::Serialize;
    use serde_json::json;
    use toolwright::{Context, LogLevel, mcp_tool};

    /// A sum.
    #[derive(Serialize, JsonSchema)]
    pub(crate) struct Sum {
        /// `a + b`.
        sum: i64,
    }

    /// Add two integers.
    #[mcp_tool(read_only)]
    fn add(
        /// The first term.
        a: i64,
        /// The second term.
        b: i64,
    ) -> Sum {
        Sum { sum: a + b }
    }

    /// Greet someone.
    #[mcp_tool]
    fn greet(
        /// Who to greet.
        name: String,
    ) -> String {
        format!("Hello, {name}!")
    }

    /// Count to `n`, reporting progress at each step.
    #[mcp_tool]
    async fn count_up(
        ctx: Context,
        /// Where to stop.
        n: u32,
    ) -> u32 {
        for i in 1..=n {
            ctx.progress(f64::from(i), Some(f64::from(n)), None);
        }
        n
    }

    /// Log one message at each of three levels.
    #[mcp_tool]
    fn log_levels(ctx: Context) {
        ctx.log(LogLevel::Debug, "debug detail");
        ctx.log(LogLevel::Info, "info detail");
        ctx.log(LogLevel::Warning, json!({"disk": "low"}));
    }

    /// A count that its tool gets wrong.
    #[derive(Serialize, JsonSchema)]
    #[schemars(transform = require_total)]
    pub(crate) struct Tally {
        /// How many: the schema promises an integer.
        #[schemars(with = "u32")]
        count: serde_json::Value,
        /// The total: the schema requires it, but it is left out when unknown.
        #[serde(skip_serializing_if = "Option::is_none")]
        total: Option<i64>,
    }

    /// Makes `total` required, as a hand-written schema might, though serde leaves it out.
    fn require_total(schema: &mut schemars::Schema) {
        schema.insert("required".to_owned(), json!(["count", "total"]));
    }

    /// Tally things, breaking the promise of its output schema.
    #[mcp_tool]
    fn tally() -> Tally {
        Tally {
            count: json!("three"),
            total: None,
        }
    }

    /// Tally things, keeping the promise of its output schema.
    #[mcp_tool]
    fn tally_right() -> Tally {
        Tally {
            count: json!(3),
            total: Some(3),
        }
    }
}

const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// A client of the server most tests here use, which has instructions.
fn start() -> Client {
    Client::with(Server::new("test-server", "0.0.1").instructions("Add, then greet."))
}

/// The 2026-07-28 `_meta` every request of that era carries.
fn envelope() -> Value {
    json!({
        VERSION_KEY: "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "era-tests", "version": "1.0.0"}
    })
}

/// `params` with the 2026-07-28 envelope added to its `_meta`.
fn stateless(mut params: Value) -> Value {
    let meta = params
        .as_object_mut()
        .expect("params are an object")
        .entry("_meta")
        .or_insert_with(|| json!({}));
    for (key, value) in envelope().as_object().unwrap() {
        meta[key] = value.clone();
    }
    params
}

fn error(id: i64, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn unsupported(id: i64, message: &str, requested: Option<&str>) -> Value {
    let mut data = json!({"supported": ["2026-07-28"]});
    if let Some(requested) = requested {
        data["requested"] = json!(requested);
    }
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022, "message": message, "data": data}})
}

/// What every stateless-era result carries.
fn complete(mut result: Value) -> Value {
    result["resultType"] = json!("complete");
    result["_meta"] = json!({
        "io.modelcontextprotocol/serverInfo": {"name": "test-server", "version": "0.0.1"}
    });
    result
}

/// What the stateless era adds to a `tools/list` or `server/discover` result.
fn cacheable(mut result: Value, ttl_ms: u64) -> Value {
    result["ttlMs"] = json!(ttl_ms);
    result["cacheScope"] = json!("public");
    complete(result)
}

const INITIALIZE_REFUSED: &str = "this connection speaks protocol 2026-07-28, which has no \
     `initialize` handshake: it opened with a request carrying the 2026-07-28 `_meta` \
     envelope; for the handshake, open a new connection whose first request is `initialize`";

const ENVELOPE_REFUSED: &str = "this connection speaks the `initialize` handshake (protocol \
     2024-11-05 to 2025-11-25), so a request carrying the 2026-07-28 `_meta` envelope is \
     refused on it: for protocol 2026-07-28, open a new connection whose first request is \
     `server/discover`";

#[tokio::test]
async fn discover_then_list_then_call_in_the_stateless_era() {
    let mut client = start();
    assert_eq!(
        client
            .request(1, "server/discover", json!({"_meta": envelope()}))
            .await,
        json!({
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {"listChanged": true}, "logging": {}},
                "instructions": "Add, then greet.",
                "ttlMs": 300_000,
                "cacheScope": "public",
                "resultType": "complete",
                "_meta": {
                    "io.modelcontextprotocol/serverInfo": {"name": "test-server", "version": "0.0.1"}
                }
            }
        })
    );

    let manifest = Registry::collect().unwrap().manifest().as_json().clone();
    assert_eq!(
        client.result(2, "tools/list", stateless(json!({}))).await,
        cacheable(manifest, 300_000)
    );

    assert_eq!(
        client
            .result(
                3,
                "tools/call",
                stateless(json!({"name": "add", "arguments": {"a": 2, "b": 40}}))
            )
            .await,
        complete(json!({
            "content": [{"type": "text", "text": "{\"sum\":42}"}],
            "structuredContent": {"sum": 42}
        }))
    );
    assert_eq!(
        client
            .result(
                4,
                "tools/call",
                stateless(json!({"name": "greet", "arguments": {"name": "Ada"}}))
            )
            .await,
        complete(json!({"content": [{"type": "text", "text": "Hello, Ada!"}]}))
    );
    assert_eq!(
        client
            .result(
                5,
                "tools/call",
                stateless(json!({"name": "add", "arguments": {"a": 1}}))
            )
            .await,
        complete(json!({
            "content": [{
                "type": "text",
                "text": "invalid arguments for tool `add`: missing required argument `b`"
            }],
            "isError": true
        }))
    );
    assert_eq!(
        client
            .request(6, "tools/call", stateless(json!({"name": "subtract"})))
            .await,
        error(6, -32602, "unknown tool `subtract`")
    );
    assert_eq!(
        client
            .request(7, "tools/list", stateless(json!({"cursor": "x"})))
            .await,
        error(
            7,
            -32602,
            "invalid cursor \"x\": this server lists every tool on one page"
        )
    );

    // What the era removed.
    assert_eq!(
        client.request(8, "ping", stateless(json!({}))).await,
        error(
            8,
            -32601,
            "method `ping` was removed in protocol 2026-07-28"
        )
    );
    assert_eq!(
        client
            .request(9, "logging/setLevel", stateless(json!({"level": "debug"})))
            .await,
        error(
            9,
            -32601,
            "method `logging/setLevel` was removed in protocol 2026-07-28: a request asks for \
             log messages with `io.modelcontextprotocol/logLevel` in its `_meta`"
        )
    );
    assert_eq!(
        client
            .request(
                10,
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "era-tests", "version": "1.0.0"}
                })
            )
            .await,
        unsupported(10, INITIALIZE_REFUSED, Some("2025-11-25"))
    );
    assert_eq!(
        client.request(11, "initialize", json!({})).await,
        unsupported(11, INITIALIZE_REFUSED, None)
    );
    assert_eq!(
        client
            .request(12, "resources/list", stateless(json!({})))
            .await,
        error(12, -32601, "method `resources/list` is not supported")
    );
    assert_eq!(client.finish().await, Vec::<Value>::new());
}

#[tokio::test]
async fn every_stateless_request_needs_a_supported_version_and_the_client_capabilities() {
    let mut client = start();
    assert_eq!(
        client
            .result(1, "server/discover", json!({"_meta": envelope()}))
            .await["supportedVersions"],
        json!(["2026-07-28"])
    );
    let no_envelope = "`params._meta` must be an object with \
         `io.modelcontextprotocol/protocolVersion` and \
         `io.modelcontextprotocol/clientCapabilities`: protocol 2026-07-28 requires them on \
         every request";
    assert_eq!(
        client.request(2, "tools/list", json!({})).await,
        error(2, -32602, no_envelope)
    );
    assert_eq!(
        client.request(3, "tools/list", Value::Null).await,
        error(3, -32602, no_envelope)
    );
    assert_eq!(
        client
            .request(
                4,
                "tools/list",
                json!({"_meta": {VERSION_KEY: "2026-07-28"}})
            )
            .await,
        error(
            4,
            -32602,
            "`params._meta` lacks `io.modelcontextprotocol/clientCapabilities`: protocol \
             2026-07-28 requires it on every request"
        )
    );
    assert_eq!(
        client
            .request(5, "tools/list", json!({"_meta": {"progressToken": 1}}))
            .await,
        error(
            5,
            -32602,
            "`params._meta` lacks `io.modelcontextprotocol/protocolVersion` and \
             `io.modelcontextprotocol/clientCapabilities`: protocol 2026-07-28 requires them \
             on every request"
        )
    );
    for (id, version) in [(6, "2025-11-25"), (7, "2099-01-01")] {
        let mut meta = envelope();
        meta[VERSION_KEY] = json!(version);
        assert_eq!(
            client
                .request(id, "tools/call", json!({"name": "greet", "_meta": meta}))
                .await,
            unsupported(
                id,
                &format!(
                    "unsupported protocol version `{version}`: this connection speaks 2026-07-28"
                ),
                Some(version)
            )
        );
    }
    let mut meta = envelope();
    meta[VERSION_KEY] = json!(20260728);
    assert_eq!(
        client
            .request(8, "tools/list", json!({"_meta": meta}))
            .await,
        error(
            8,
            -32602,
            "`io.modelcontextprotocol/protocolVersion` in `params._meta` must be a string"
        )
    );
    let mut meta = envelope();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!(null);
    assert_eq!(
        client
            .request(9, "tools/list", json!({"_meta": meta}))
            .await,
        error(
            9,
            -32602,
            "`io.modelcontextprotocol/clientCapabilities` in `params._meta` must be an object"
        )
    );
    let mut meta = envelope();
    meta["io.modelcontextprotocol/logLevel"] = json!("verbose");
    assert_eq!(
        client
            .request(10, "tools/list", json!({"_meta": meta}))
            .await,
        error(
            10,
            -32602,
            "`io.modelcontextprotocol/logLevel` in `params._meta` must be one of `debug`, \
             `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency`"
        )
    );
    // The connection is unharmed.
    assert_eq!(
        client
            .result(
                11,
                "tools/call",
                stateless(json!({"name": "greet", "arguments": {"name": "Ada"}}))
            )
            .await["content"],
        json!([{"type": "text", "text": "Hello, Ada!"}])
    );
    assert_eq!(client.finish().await, Vec::<Value>::new());
}

#[tokio::test]
async fn a_probe_at_an_unknown_version_still_opens_the_stateless_era() {
    // A client probing at a version this server lacks learns the one it has, and probes again.
    let mut client = start();
    let mut meta = envelope();
    meta[VERSION_KEY] = json!("2099-01-01");
    assert_eq!(
        client
            .request(1, "server/discover", json!({"_meta": meta}))
            .await,
        unsupported(
            1,
            "unsupported protocol version `2099-01-01`: this connection speaks 2026-07-28",
            Some("2099-01-01")
        )
    );
    assert_eq!(
        client
            .result(2, "server/discover", json!({"_meta": envelope()}))
            .await["resultType"],
        "complete"
    );
    client.finish().await;
}

#[tokio::test]
async fn the_first_request_decides_the_era_of_its_connection() {
    // `initialize` opens the handshake era, even with the 2026 envelope on it.
    let mut handshake = start();
    let response = handshake
        .request(
            0,
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "era-tests", "version": "1.0.0"},
                "_meta": envelope()
            }),
        )
        .await;
    assert_eq!(response["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        handshake
            .request(1, "server/discover", json!({"_meta": envelope()}))
            .await,
        error(1, -32600, ENVELOPE_REFUSED)
    );
    assert_eq!(
        handshake
            .request(2, "tools/list", stateless(json!({})))
            .await,
        error(2, -32600, ENVELOPE_REFUSED)
    );
    assert_eq!(
        handshake.request(3, "server/discover", Value::Null).await["error"]["code"],
        -32601
    );
    let manifest = Registry::collect().unwrap().manifest().as_json().clone();
    assert_eq!(handshake.result(4, "tools/list", json!({})).await, manifest);
    assert_eq!(
        handshake
            .result(5, "ping", json!({"_meta": {"progressToken": 5}}))
            .await,
        json!({})
    );
    assert_eq!(handshake.finish().await, Vec::<Value>::new());

    // A first request without the envelope opens the handshake era too.
    let mut before_initialize = start();
    assert_eq!(
        before_initialize.result(1, "ping", json!({})).await,
        json!({})
    );
    assert_eq!(
        before_initialize
            .request(2, "server/discover", json!({"_meta": envelope()}))
            .await,
        error(2, -32600, ENVELOPE_REFUSED)
    );
    before_initialize.initialize().await;
    assert_eq!(
        before_initialize.result(3, "tools/list", json!({})).await,
        manifest
    );
    before_initialize.finish().await;

    // Any request with the envelope opens the stateless era, not only `server/discover`.
    let mut stateless_era = start();
    assert_eq!(
        stateless_era
            .result(1, "tools/list", stateless(json!({})))
            .await,
        cacheable(manifest.clone(), 300_000)
    );
    assert_eq!(
        stateless_era
            .request(2, "initialize", json!({"protocolVersion": "2025-11-25"}))
            .await,
        unsupported(2, INITIALIZE_REFUSED, Some("2025-11-25"))
    );
    assert_eq!(
        stateless_era.request(3, "tools/list", json!({})).await["error"]["code"],
        -32602
    );
    stateless_era.finish().await;

    // Notifications before the first request decide nothing.
    let mut late = start();
    late.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(
        late.result(1, "server/discover", json!({"_meta": envelope()}))
            .await["supportedVersions"],
        json!(["2026-07-28"])
    );
    late.finish().await;
}

#[tokio::test]
async fn stateless_calls_log_only_when_the_request_asks_and_report_progress() {
    let mut client = start();
    client
        .result(1, "server/discover", json!({"_meta": envelope()}))
        .await;
    let message = |level: &str, data: Value| {
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": level, "logger": "log_levels", "data": data}
        })
    };
    // No level in `_meta`: no log messages at all, whatever the handshake era's default.
    let (response, notifications) = client
        .exchange(2, "tools/call", stateless(json!({"name": "log_levels"})))
        .await;
    assert_eq!(response["result"], complete(json!({"content": []})));
    assert_eq!(notifications, Vec::<Value>::new());

    let (_, notifications) = client
        .exchange(
            3,
            "tools/call",
            stateless(json!({
                "name": "log_levels",
                "_meta": {"io.modelcontextprotocol/logLevel": "info"}
            })),
        )
        .await;
    assert_eq!(
        notifications,
        [
            message("info", json!("info detail")),
            message("warning", json!({"disk": "low"}))
        ]
    );

    let (response, notifications) = client
        .exchange(
            4,
            "tools/call",
            stateless(json!({
                "name": "count_up",
                "arguments": {"n": 2},
                "_meta": {"progressToken": "p"}
            })),
        )
        .await;
    assert_eq!(
        response["result"],
        complete(json!({"content": [{"type": "text", "text": "2"}]}))
    );
    let progress = |n: f64| {
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p", "progress": n, "total": 2.0}
        })
    };
    assert_eq!(notifications, [progress(1.0), progress(2.0)]);
    client.finish().await;
}

/// Every page of `tools/list` from the first, with the cursors that led to each.
async fn all_pages(client: &mut Client, params: impl Fn(Value) -> Value) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut cursor = Value::Null;
    for id in 1.. {
        let page = client
            .result(id, "tools/list", params(json!({"cursor": cursor})))
            .await;
        cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
        pages.push(page);
        if cursor.is_null() {
            break;
        }
    }
    pages
}

#[tokio::test]
async fn tools_list_pages_follow_the_cursor_to_the_end_in_both_eras() {
    let server = || {
        Server::new("test-server", "0.0.1")
            .page_size(2)
            .cache_ttl(Duration::ZERO)
    };
    let manifest = Registry::collect().unwrap().manifest().as_json().clone();
    let tools = manifest["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 6, "the test needs three pages of two");

    let mut handshake = Client::with(server());
    handshake.initialize().await;
    let pages = all_pages(&mut handshake, |params| params).await;
    let cursors: Vec<Value> = pages.iter().map(|p| p["nextCursor"].clone()).collect();
    assert!(
        cursors[0].is_string() && cursors[1].is_string(),
        "{cursors:?}"
    );
    assert_ne!(cursors[0], cursors[1]);
    assert_eq!(
        pages,
        [
            json!({"tools": tools[0..2], "nextCursor": cursors[0]}),
            json!({"tools": tools[2..4], "nextCursor": cursors[1]}),
            json!({"tools": tools[4..6]}),
        ]
    );

    // A cursor this server did not hand out, or not a string: -32602, and serving goes on.
    let refused = "it is not one this server handed out; list from the first page, without a \
                   cursor";
    assert_eq!(
        handshake
            .request(10, "tools/list", json!({"cursor": "page-2"}))
            .await,
        error(10, -32602, &format!("invalid cursor \"page-2\": {refused}"))
    );
    assert_eq!(
        handshake
            .request(11, "tools/list", json!({"cursor": 2}))
            .await,
        error(11, -32602, &format!("invalid cursor 2: {refused}"))
    );
    assert_eq!(
        handshake
            .result(12, "tools/list", json!({"cursor": cursors[1]}))
            .await,
        pages[2]
    );
    handshake.finish().await;

    // The stateless era pages alike, with the same cursors; every page is cacheable.
    let mut stateless_era = Client::with(server());
    let pages = all_pages(&mut stateless_era, stateless).await;
    assert_eq!(
        pages,
        [
            cacheable(json!({"tools": tools[0..2], "nextCursor": cursors[0]}), 0),
            cacheable(json!({"tools": tools[2..4], "nextCursor": cursors[1]}), 0),
            cacheable(json!({"tools": tools[4..6]}), 0),
        ]
    );
    assert_eq!(
        stateless_era
            .request(10, "tools/list", stateless(json!({"cursor": "page-2"})))
            .await,
        error(10, -32602, &format!("invalid cursor \"page-2\": {refused}"))
    );
    stateless_era.finish().await;

    // A page as large as the list is one page, with no cursor.
    let mut one_page = Client::with(Server::new("test-server", "0.0.1").page_size(6));
    one_page.initialize().await;
    assert_eq!(one_page.result(1, "tools/list", json!({})).await, manifest);
    one_page.finish().await;
}

#[tokio::test]
async fn a_result_that_breaks_the_output_schema_is_a_tool_error_in_debug_builds() {
    let broken = json!({
        "content": [{
            "type": "text",
            "text": "tool `tally` returned a result that does not match its output schema:\n\
                     - missing required field `total`\n\
                     - field `count`: \"three\" is not of type \"integer\""
        }],
        "isError": true
    });

    let mut handshake = start();
    handshake.initialize().await;
    let call = json!({"name": "tally", "arguments": {}});
    assert_eq!(
        handshake.result(1, "tools/call", call.clone()).await,
        broken
    );
    // A result that keeps the promise goes through.
    assert_eq!(
        handshake
            .result(2, "tools/call", json!({"name": "tally_right"}))
            .await,
        json!({
            "content": [{"type": "text", "text": "{\"count\":3,\"total\":3}"}],
            "structuredContent": {"count": 3, "total": 3}
        })
    );
    handshake.finish().await;

    let mut stateless_era = start();
    assert_eq!(
        stateless_era.result(1, "tools/call", stateless(call)).await,
        complete(broken)
    );
    stateless_era.finish().await;
}
