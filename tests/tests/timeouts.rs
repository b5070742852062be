//! Time limits on calls: a tool's own (`#[mcp_tool(timeout = "...")]`) and the server's
//! (`Server::call_timeout`), in both eras, for async and blocking tools and for prompts; a task
//! is bounded by its TTL instead. (A binary of its own: `inventory` collects per binary.)

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolwright::{Context, Server, mcp_prompt, mcp_tool};
use toolwright_tests::stdio::Client;

/// Never finishes.
#[mcp_tool(timeout = "200ms")]
async fn stuck() -> String {
    std::future::pending::<()>().await;
    unreachable!()
}

/// Sleeps `ms` milliseconds.
#[mcp_tool]
async fn slow(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms} ms")
}

/// Sleeps `ms` milliseconds, and may take two seconds.
#[mcp_tool(timeout = "2s")]
async fn patient(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms} ms")
}

/// Whether `spin` saw that it was to stop.
static SPIN_STOPPED: AtomicBool = AtomicBool::new(false);

/// Works on a thread of its own until told to stop.
#[mcp_tool(blocking, timeout = "200ms")]
fn spin(ctx: Context) -> String {
    while !ctx.is_cancelled() {
        std::thread::sleep(Duration::from_millis(5));
    }
    SPIN_STOPPED.store(true, Ordering::SeqCst);
    "stopped".to_owned()
}

/// Whether `spin_task` saw that it was to stop.
static TASK_STOPPED: AtomicBool = AtomicBool::new(false);

/// Works on a thread of its own until told to stop, as a task when asked.
#[mcp_tool(blocking, task = "optional")]
fn spin_task(ctx: Context) -> String {
    while !ctx.is_cancelled() {
        std::thread::sleep(Duration::from_millis(5));
    }
    TASK_STOPPED.store(true, Ordering::SeqCst);
    "stopped".to_owned()
}

/// Never done.
#[mcp_prompt]
async fn dawdle() -> String {
    std::future::pending::<()>().await;
    unreachable!()
}

async fn handshake(server: Server) -> Client {
    let mut client = Client::with(server);
    client.initialize().await;
    client
}

fn server() -> Server {
    Server::new("timeouts", "0.0.1")
}

/// The text of a tool error, from its result.
fn tool_error(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap()
}

#[tokio::test]
async fn a_tool_past_its_timeout_is_answered_in_time_while_others_keep_running() {
    let mut client = handshake(server()).await;
    let sent = Instant::now();
    client.send_call(1, "stuck", json!({})).await;
    client.send_call(2, "slow", json!({"ms": 1_000})).await;
    let first = client.recv().await;
    assert_eq!(first["id"], 1, "{first}");
    assert_eq!(
        tool_error(&first["result"]),
        "tool `stuck` did not finish within its time limit of 200ms, and was stopped"
    );
    let second = client.recv().await;
    assert_eq!(second["id"], 2, "{second}");
    assert_eq!(second["result"]["content"][0]["text"], "slept 1000 ms");
    assert!(sent.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn a_tool_past_its_timeout_is_answered_so_in_2026_07_28() {
    let mut client = Client::with(server());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let result = client
        .result(
            1,
            "tools/call",
            json!({"name": "stuck", "arguments": {}, "_meta": meta}),
        )
        .await;
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        result["content"][0]["text"],
        "tool `stuck` did not finish within its time limit of 200ms, and was stopped"
    );
}

#[tokio::test]
async fn a_blocking_tool_past_its_timeout_is_told_to_stop() {
    let mut client = handshake(server()).await;
    let answer = client.call(1, "spin", json!({})).await;
    assert_eq!(
        tool_error(&answer),
        "tool `spin` did not finish within its time limit of 200ms, and was stopped"
    );
    let told = Instant::now();
    while !SPIN_STOPPED.load(Ordering::SeqCst) {
        assert!(
            told.elapsed() < Duration::from_secs(10),
            "`spin` still runs"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn the_servers_limit_bounds_the_tools_without_their_own() {
    let mut client = handshake(server().call_timeout(Duration::from_millis(300))).await;
    let slow = client.call(1, "slow", json!({"ms": 5_000})).await;
    assert_eq!(
        tool_error(&slow),
        "tool `slow` did not finish within its time limit of 300ms, and was stopped"
    );
    // A tool's own limit takes the server's place, longer or shorter.
    let patient = client.call(2, "patient", json!({"ms": 600})).await;
    assert_eq!(patient["content"][0]["text"], "slept 600 ms", "{patient}");
    let stuck = client.call(3, "stuck", json!({})).await;
    assert!(tool_error(&stuck).ends_with("time limit of 200ms, and was stopped"));
    // A prompt too: the error a client reads for a prompt.
    let dawdled = client
        .request(4, "prompts/get", json!({"name": "dawdle"}))
        .await;
    assert_eq!(
        dawdled["error"],
        json!({
            "code": -32603,
            "message": "prompt `dawdle` did not finish within its time limit of 300ms, and was stopped"
        })
    );
}

#[tokio::test]
async fn a_task_is_bounded_by_its_ttl_not_by_the_call_limit() {
    let mut client = handshake(server().call_timeout(Duration::from_millis(50))).await;
    let created = client
        .result(
            1,
            "tools/call",
            json!({"name": "spin_task", "arguments": {}, "task": {"ttl": 600}}),
        )
        .await;
    assert_eq!(created["task"]["status"], "working", "{created}");
    // Past the limit on calls, the task still runs.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !TASK_STOPPED.load(Ordering::SeqCst),
        "stopped by the call's limit"
    );
    // Past its TTL, it is told to stop.
    let asked = Instant::now();
    while !TASK_STOPPED.load(Ordering::SeqCst) {
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "the task still runs"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
