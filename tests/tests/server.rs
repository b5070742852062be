//! The server in process, over pipes: JSON-RPC lines in, the lines a client reads out.

use serde_json::{Value, json};
use toolwright::Server;
use toolwright::registry::Registry;
use toolwright_tests::stdio::{Client, initialize_params};

mod tools {
    use std::time::Duration;

    use anyhow::Context as _;
    use schemars::JsonSchema;
    use serde::Serialize;
    use serde_json::json;
    use tokio::sync::Notify;
    use toolwright::{Content, Context, LogLevel, ToolResult, mcp_tool};

    /// Lets `wait_for_release` finish.
    pub(crate) static RELEASE: Notify = Notify::const_new();

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

    /// Panic, always.
    #[mcp_tool]
    fn explode() -> String {
        panic!("the fuse was lit")
    }

    /// Panic, always, on the blocking thread pool.
    #[mcp_tool(blocking)]
    fn explode_blocking() -> String {
        panic!("the fuse was wet")
    }

    /// Lets `block_until_released` return.
    pub(crate) static UNBLOCK: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// Block the thread until the test says so.
    #[mcp_tool(blocking)]
    fn block_until_released() -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !UNBLOCK.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(std::time::Instant::now() < deadline, "never released");
            std::thread::sleep(Duration::from_millis(1));
        }
        "released".to_owned()
    }

    /// Panic, always, asynchronously.
    #[mcp_tool]
    async fn explode_later() -> String {
        tokio::task::yield_now().await;
        panic!("the fuse was long")
    }

    /// Wait until the client cancels the call.
    #[mcp_tool]
    async fn wait_for_cancel(ctx: &Context) -> String {
        tokio::select! {
            () = ctx.cancelled() => "cancelled".to_owned(),
            () = tokio::time::sleep(Duration::from_secs(60)) => "never cancelled".to_owned(),
        }
    }

    /// Wait until the test lets it finish.
    #[mcp_tool]
    async fn wait_for_release() -> String {
        RELEASE.notified().await;
        "released".to_owned()
    }

    /// Count to `n`, reporting progress at each step.
    #[mcp_tool]
    async fn count_up(
        ctx: Context,
        /// Where to stop.
        n: u32,
    ) -> u32 {
        for i in 1..=n {
            ctx.progress(f64::from(i), Some(f64::from(n)), Some(&format!("step {i}")));
            // Progress must increase: a repeated report is dropped.
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

    /// Forget a key; returns nothing.
    #[mcp_tool]
    fn forget(
        /// The key.
        key: String,
    ) {
        let _ = key;
    }

    /// Read a configuration file.
    #[mcp_tool]
    fn read_config(
        /// The file.
        path: String,
    ) -> anyhow::Result<Sum> {
        Err(anyhow::anyhow!("no such file")).with_context(|| format!("cannot read `{path}`"))
    }

    /// Draw a chart.
    #[mcp_tool]
    fn chart() -> ToolResult {
        ToolResult::text("Here is the chart.")
            .with(Content::image([0x89, b'P', b'N', b'G'], "image/png"))
    }

    /// Ask to end the call's event stream, log, and answer.
    #[mcp_tool]
    fn end_stream(ctx: Context) -> &'static str {
        ctx.close_sse_stream();
        ctx.log(LogLevel::Info, "still here");
        "answered"
    }

    /// Greet someone.
    #[mcp_tool]
    fn greet(
        /// Who to greet.
        name: String,
    ) -> String {
        format!("Hello, {name}!")
    }
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

fn tool_error(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

#[tokio::test]
async fn initialize_echoes_a_known_version_and_offers_the_newest_otherwise() {
    for (requested, answered) in [
        ("2025-11-25", "2025-11-25"),
        ("2024-11-05", "2024-11-05"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let mut client =
            Client::with(Server::new("test-server", "0.0.1").instructions("Add, then greet."));
        assert_eq!(
            client
                .request(1, "initialize", initialize_params(requested))
                .await,
            json!({
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "protocolVersion": answered,
                    "capabilities": {"tools": {"listChanged": true}, "logging": {}},
                    "serverInfo": {"name": "test-server", "version": "0.0.1"},
                    "instructions": "Add, then greet."
                }
            }),
            "for {requested}"
        );
        assert_eq!(
            client
                .request(2, "initialize", initialize_params(requested))
                .await,
            error(json!(2), -32600, "the session is already initialized")
        );
        assert_eq!(client.finish().await, Vec::<Value>::new());
    }
}

#[tokio::test]
async fn before_initialize_requests_are_answered_with_errors_and_ping_works() {
    let mut client = Client::start();
    // Without the 2026-07-28 `_meta` envelope, the first request opens the handshake era, where
    // `server/discover` does not exist (tests/eras.rs has the stateless era).
    assert_eq!(
        client.request(1, "server/discover", json!({})).await,
        error(
            json!(1),
            -32601,
            "method `server/discover` is not available on this connection: it speaks the \
             `initialize` handshake, having opened without the 2026-07-28 `_meta` envelope \
             (`io.modelcontextprotocol/protocolVersion`)"
        )
    );
    let not_initialized = "the session is not initialized: send `initialize` first";
    assert_eq!(
        client.request(2, "tools/list", json!({})).await,
        error(json!(2), -32600, not_initialized)
    );
    assert_eq!(
        client
            .request(
                3,
                "tools/call",
                json!({"name": "greet", "arguments": {"name": "Ada"}})
            )
            .await,
        error(json!(3), -32600, not_initialized)
    );
    assert_eq!(
        client.request(4, "ping", json!({})).await,
        json!({"jsonrpc": "2.0", "id": 4, "result": {}})
    );
    // The client falls back to the handshake, which still works.
    client.initialize().await;
    assert_eq!(
        client.request(5, "ping", Value::Null).await,
        json!({"jsonrpc": "2.0", "id": 5, "result": {}})
    );
    client.finish().await;
}

#[tokio::test]
async fn tools_list_serves_the_manifest_and_refuses_a_cursor() {
    let mut client = Client::start();
    client.initialize().await;
    let registry = Registry::collect().unwrap();
    assert_eq!(
        client.request(1, "tools/list", json!({})).await,
        json!({"jsonrpc": "2.0", "id": 1, "result": registry.manifest().as_json()})
    );
    assert_eq!(
        client
            .request(2, "tools/list", json!({"cursor": "page-2"}))
            .await,
        error(
            json!(2),
            -32602,
            "invalid cursor \"page-2\": this server lists every tool on one page"
        )
    );
    client.finish().await;
}

#[tokio::test]
async fn malformed_messages_get_errors_and_the_server_keeps_serving() {
    let mut client = Client::start();
    client.initialize().await;
    client.send_line("{\"jsonrpc\": \"2.0\", \"id\": 1, ").await;
    let reply = client.recv().await;
    assert_eq!(reply["id"], Value::Null, "{reply}");
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("parse error: the message is not JSON"),
        "{reply}"
    );
    assert_eq!(
        client.request(2, "ping", json!({})).await["result"],
        json!({})
    );

    client
        .send_line(r#"[{"jsonrpc": "2.0", "id": 3, "method": "ping"}]"#)
        .await;
    assert_eq!(
        client.recv().await,
        error(
            Value::Null,
            -32600,
            "batches are not supported: send one JSON-RPC message per line"
        )
    );
    assert_eq!(
        client.request(4, "resources/list", json!({})).await,
        error(json!(4), -32601, "method `resources/list` is not supported")
    );
    // Notifications, known or not, are never answered: the next line is the ping's.
    client.notify("notifications/whatever", json!({})).await;
    client
        .notify("notifications/cancelled", json!({"requestId": 99}))
        .await;
    assert_eq!(
        client.request(5, "ping", json!({})).await["result"],
        json!({})
    );
    assert_eq!(client.finish().await, Vec::<Value>::new());
}

#[tokio::test]
async fn an_oversized_message_is_refused_and_the_next_one_served() {
    let mut client = Client::with(Server::new("test-server", "0.0.1").max_message_size(1024));
    client.initialize().await;
    let big = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "greet", "arguments": {"name": "x".repeat(2000)}}
    })
    .to_string();
    client.send_line(&big).await;
    assert_eq!(
        client.recv().await,
        error(
            Value::Null,
            -32600,
            "message refused: it is longer than the limit of 1024 bytes"
        )
    );
    assert_eq!(
        client.call(2, "greet", json!({"name": "Ada"})).await,
        text_result("Hello, Ada!")
    );
    client.finish().await;
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments() {
    let mut client = Client::start();
    client.initialize().await;
    assert_eq!(
        client
            .request(
                1,
                "tools/call",
                json!({"name": "subtract", "arguments": {}})
            )
            .await,
        error(json!(1), -32602, "unknown tool `subtract`")
    );
    assert_eq!(
        client.call(2, "add", json!({"a": "one", "b": 2})).await,
        tool_error(
            "invalid arguments for tool `add`: argument `a`: \"one\" is not of type \"integer\""
        )
    );
    assert_eq!(
        client.call(3, "add", json!({"a": 1})).await,
        tool_error("invalid arguments for tool `add`: missing required argument `b`")
    );
    assert_eq!(
        client.call(4, "add", json!({"a": 1, "b": 2, "c": 3})).await,
        tool_error(
            "invalid arguments for tool `add`: unknown argument `c`; expected one of `a`, `b`"
        )
    );
    assert_eq!(
        client.call(5, "add", json!({"b": "two", "c": 3})).await,
        tool_error(
            "invalid arguments for tool `add`:\n\
             - unknown argument `c`; expected one of `a`, `b`\n\
             - missing required argument `a`\n\
             - argument `b`: \"two\" is not of type \"integer\""
        )
    );
    assert_eq!(
        client.call(6, "chart", json!({"size": 3})).await,
        tool_error(
            "invalid arguments for tool `chart`: unknown argument `size`: this tool takes no arguments"
        )
    );
    client.finish().await;
}

#[tokio::test]
async fn what_each_kind_of_tool_returns() {
    let mut client = Client::start();
    client.initialize().await;

    let sum = client.call(1, "add", json!({"a": 2, "b": 40})).await;
    assert_eq!(
        sum,
        json!({"content": [{"type": "text", "text": "{\"sum\":42}"}], "structuredContent": {"sum": 42}})
    );
    let text: Value = serde_json::from_str(sum["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, sum["structuredContent"]);

    assert_eq!(
        client.call(2, "greet", json!({"name": "Ada"})).await,
        text_result("Hello, Ada!")
    );
    assert_eq!(
        client.call(3, "forget", json!({"key": "k"})).await,
        json!({"content": []})
    );
    assert_eq!(
        client
            .call(4, "read_config", json!({"path": "app.toml"}))
            .await,
        tool_error("cannot read `app.toml`: no such file")
    );
    assert_eq!(
        client.call(5, "chart", json!({})).await,
        json!({"content": [
            {"type": "text", "text": "Here is the chart."},
            {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}
        ]})
    );
    // `count_up` has no output schema (its root is a number): plain JSON text.
    assert_eq!(
        client.call(6, "count_up", json!({"n": 2})).await,
        text_result("2")
    );
    client.finish().await;
}

#[tokio::test]
async fn a_panicking_tool_is_a_tool_error_and_the_server_keeps_serving() {
    let mut client = Client::start();
    client.initialize().await;
    assert_eq!(
        client.call(1, "explode", json!({})).await,
        tool_error("tool `explode` panicked: the fuse was lit")
    );
    assert_eq!(
        client.call(2, "explode_later", json!({})).await,
        tool_error("tool `explode_later` panicked: the fuse was long")
    );
    assert_eq!(
        client.call(4, "explode_blocking", json!({})).await,
        tool_error("tool `explode_blocking` panicked: the fuse was wet")
    );
    assert_eq!(
        client.call(3, "greet", json!({"name": "Ada"})).await,
        text_result("Hello, Ada!")
    );
    client.finish().await;
}

/// A `blocking` tool holds a thread of the blocking pool, not the runtime: even on this test's
/// single-threaded runtime, `ping` is answered while it blocks.
#[tokio::test]
async fn a_blocking_tool_does_not_hold_up_other_requests() {
    let mut client = Client::start();
    client.initialize().await;
    client
        .send(json!({
            "jsonrpc": "2.0",
            "id": "blocked",
            "method": "tools/call",
            "params": {"name": "block_until_released", "arguments": {}}
        }))
        .await;
    assert_eq!(
        client.request(2, "ping", json!({})).await["result"],
        json!({})
    );
    assert_eq!(
        client.call(3, "greet", json!({"name": "Ada"})).await,
        text_result("Hello, Ada!")
    );
    tools::UNBLOCK.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "id": "blocked", "result": text_result("released")})
    );
    client.finish().await;
}

#[tokio::test]
async fn a_cancelled_call_gets_no_response_and_later_requests_are_served() {
    let mut client = Client::start();
    client.initialize().await;
    client
        .send(json!({
            "jsonrpc": "2.0",
            "id": "slow-1",
            "method": "tools/call",
            "params": {"name": "wait_for_cancel", "arguments": {}}
        }))
        .await;
    client
        .notify(
            "notifications/cancelled",
            json!({"requestId": "slow-1", "reason": "the user gave up"}),
        )
        .await;
    assert_eq!(
        client.call(2, "greet", json!({"name": "Ada"})).await,
        text_result("Hello, Ada!")
    );
    assert_eq!(
        client.request(3, "ping", json!({})).await["result"],
        json!({})
    );
    // Nothing more, ever: not even once the input closes and `serve` ends.
    assert_eq!(client.finish().await, Vec::<Value>::new());
}

#[tokio::test]
async fn progress_carries_the_token_and_increases() {
    let mut client = Client::start();
    client.initialize().await;
    let (result, notifications) = client
        .call_notified(
            1,
            json!({"name": "count_up", "arguments": {"n": 3}, "_meta": {"progressToken": "tok-7"}}),
        )
        .await;
    assert_eq!(result, text_result("3"));
    let progress = |n: f64| {
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "tok-7", "progress": n, "total": 3.0, "message": format!("step {n}")}
        })
    };
    assert_eq!(notifications, [progress(1.0), progress(2.0), progress(3.0)]);

    // An integer token comes back as an integer; without a token there is no progress.
    let (_, notifications) = client
        .call_notified(
            2,
            json!({"name": "count_up", "arguments": {"n": 1}, "_meta": {"progressToken": 42}}),
        )
        .await;
    assert_eq!(
        notifications,
        [json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": 42, "progress": 1.0, "total": 1.0, "message": "step 1"}
        })]
    );
    assert_eq!(
        client.call(3, "count_up", json!({"n": 2})).await,
        text_result("2")
    );
    client.finish().await;
}

#[tokio::test]
async fn ending_the_event_stream_writes_nothing_on_stdio() {
    let mut client = Client::start();
    client.initialize().await;
    // Every line stays a message: `recv` refuses a line that is not JSON.
    let (result, notifications) = client
        .call_notified(1, json!({"name": "end_stream", "arguments": {}}))
        .await;
    assert_eq!(result, text_result("answered"));
    assert_eq!(notifications.len(), 1, "{notifications:?}");
    assert_eq!(notifications[0]["params"]["data"], "still here");
    client.finish().await;
}

#[tokio::test]
async fn log_messages_respect_the_level_the_client_set() {
    let mut client = Client::start();
    client.initialize().await;
    let message = |level: &str, data: Value| {
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": level, "logger": "log_levels", "data": data}
        })
    };
    let debug = message("debug", json!("debug detail"));
    let info = message("info", json!("info detail"));
    let warning = message("warning", json!({"disk": "low"}));
    // `info` until the client says otherwise.
    let (result, notifications) = client.call_notified(1, json!({"name": "log_levels"})).await;
    assert_eq!(result, json!({"content": []}));
    assert_eq!(notifications, [info.clone(), warning.clone()]);

    for (id, level, expected) in [
        (2, "warning", vec![warning.clone()]),
        (4, "debug", vec![debug, info, warning]),
        (6, "emergency", vec![]),
    ] {
        assert_eq!(
            client
                .request(id, "logging/setLevel", json!({"level": level}))
                .await,
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        );
        let (_, notifications) = client
            .call_notified(id + 1, json!({"name": "log_levels"}))
            .await;
        assert_eq!(notifications, expected, "at level {level}");
    }
    assert_eq!(
        client
            .request(8, "logging/setLevel", json!({"level": "verbose"}))
            .await,
        error(
            json!(8),
            -32602,
            "`level` must be one of `debug`, `info`, `notice`, `warning`, `error`, `critical`, \
             `alert`, `emergency`"
        )
    );
    client.finish().await;
}

#[tokio::test]
async fn closing_the_input_ends_serve_after_calls_under_way_answer() {
    let mut client = Client::start();
    client.initialize().await;
    client
        .send(json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "wait_for_release", "arguments": {}}
        }))
        .await;
    client.close_input();
    // The call is still under way: `serve` waits for it.
    tools::RELEASE.notify_one();
    assert_eq!(
        client.finish().await,
        [json!({"jsonrpc": "2.0", "id": 1, "result": text_result("released")})]
    );
}
