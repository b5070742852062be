//! The ceiling on concurrent calls, the grace period when the client goes away, and a client
//! that sends more than it reads.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;
use toolwright::Server;
use toolwright::registry::Registry;
use toolwright_tests::Client;

mod tools {
    use tokio::sync::Notify;
    use toolwright::{Context, mcp_tool};

    /// Lets `hold` finish.
    pub(crate) static RELEASE: Notify = Notify::const_new();

    /// Hold a call slot until the test lets go.
    #[mcp_tool]
    async fn hold() -> String {
        RELEASE.notified().await;
        "released".to_owned()
    }

    /// Answer at once.
    #[mcp_tool]
    fn quick() -> String {
        "quick".to_owned()
    }

    /// Answer at once, with 200 KB.
    #[mcp_tool]
    fn large() -> String {
        "x".repeat(200_000)
    }

    /// Run until cancelled, which never comes.
    #[mcp_tool]
    async fn forever(ctx: &Context) -> String {
        ctx.cancelled().await;
        "cancelled".to_owned()
    }
}

/// An initialized client of `server`.
async fn start(server: Server) -> Client {
    let mut client = Client::with(server);
    client.initialize().await;
    client
}

/// Sends `tools/call` for `tool`, with no arguments, without waiting for the response.
async fn call(client: &mut Client, id: u64, tool: &str) {
    client
        .send_request(id, "tools/call", json!({"name": tool}))
        .await;
}

#[tokio::test]
async fn calls_past_the_ceiling_wait_while_ping_is_answered() {
    let mut client = start(Server::new("limits", "0").max_concurrent_calls(1)).await;
    call(&mut client, 1, "hold").await;
    call(&mut client, 2, "quick").await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    // The one slot is taken by `hold`: `ping` answers, `quick` waits.
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
    let early = client.recv_within(Duration::from_millis(200)).await;
    assert_eq!(early, None, "`quick` ran past the ceiling");
    tools::RELEASE.notify_one();
    let first = client.recv().await;
    let second = client.recv().await;
    assert_eq!(first["id"], 1, "{first}");
    assert_eq!(first["result"]["content"][0]["text"], "released");
    assert_eq!(second["id"], 2, "{second}");
    assert_eq!(second["result"]["content"][0]["text"], "quick");
}

#[tokio::test]
async fn calls_still_running_after_the_grace_period_are_stopped() {
    let mut client =
        start(Server::new("limits", "0").shutdown_grace(Duration::from_millis(200))).await;
    call(&mut client, 1, "forever").await;
    call(&mut client, 2, "quick").await;
    assert_eq!(client.recv().await["id"], 2);
    let closed = Instant::now();
    client.close_input();
    let served = client.served().await;
    assert!(served.is_ok(), "{served:?}");
    assert!(closed.elapsed() >= Duration::from_millis(200));
    // The stopped call sends nothing; the output simply ends.
    assert_eq!(client.rest().await, Vec::<Value>::new());
}

mod gated {
    use tokio::sync::Semaphore;
    use toolwright::mcp_tool;

    /// Lets `gated` calls finish, one permit each.
    pub(crate) static GATE: Semaphore = Semaphore::const_new(0);

    /// Wait for the test to open the gate.
    #[mcp_tool]
    async fn gated() -> String {
        GATE.acquire().await.unwrap().forget();
        "through".to_owned()
    }
}

/// A server of `server` on in-memory pipes of 64 KiB, as `serve` runs it: the client's end of
/// the input and of the output.
fn pipes(server: Server) -> (DuplexStream, Lines<BufReader<DuplexStream>>) {
    pipes_of(server, 64 * 1024)
}

/// As [`pipes`], with an output pipe of `output` bytes.
fn pipes_of(server: Server, output: usize) -> (DuplexStream, Lines<BufReader<DuplexStream>>) {
    let registry = Registry::collect().expect("the test tools do not conflict");
    let (input, server_input) = tokio::io::duplex(64 * 1024);
    let (server_output, output) = tokio::io::duplex(output);
    tokio::spawn(server.registry(registry).serve(server_input, server_output));
    (input, BufReader::new(output).lines())
}

/// Opens a session (`initialize`, id `"init"`), then writes `count` messages from `message(n)`
/// on a task of its own, counting those written: the count stops moving when the server stops
/// reading.
fn write_many(
    mut input: DuplexStream,
    count: u64,
    message: impl Fn(u64) -> Value + Send + 'static,
) -> (Arc<AtomicU64>, JoinHandle<DuplexStream>) {
    let written = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&written);
    let writer = tokio::spawn(async move {
        let initialize = json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": toolwright_tests::stdio::initialize_params("2025-11-25"),
        });
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let opening = format!("{initialize}\n{initialized}\n");
        input.write_all(opening.as_bytes()).await.unwrap();
        for n in 0..count {
            let line = format!("{}\n", message(n));
            input.write_all(line.as_bytes()).await.unwrap();
            counter.store(n + 1, Ordering::Relaxed);
        }
        input
    });
    (written, writer)
}

/// Waits until `written` has not moved for half a second, and returns it.
async fn settled(written: &AtomicU64) -> u64 {
    let mut last = u64::MAX;
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = written.load(Ordering::Relaxed);
        if now == last {
            return now;
        }
        last = now;
    }
}

/// Reads `count` responses, past the one to `initialize`, and returns their ids, sorted.
async fn ids(output: &mut Lines<BufReader<DuplexStream>>, count: u64) -> Vec<u64> {
    let mut ids = Vec::new();
    while (ids.len() as u64) < count {
        let line = tokio::time::timeout(Duration::from_secs(20), output.next_line())
            .await
            .expect("the server answers")
            .unwrap()
            .expect("the output is open");
        let response: Value = serde_json::from_str(&line).unwrap();
        if response["id"] != "init" {
            assert_eq!(response["result"]["isError"], json!(null), "{response}");
            ids.push(response["id"].as_u64().expect("a response with an id"));
        }
    }
    ids.sort_unstable();
    ids
}

#[tokio::test]
async fn a_client_that_does_not_read_its_answers_is_not_read_either() {
    let (input, mut output) = pipes(Server::new("limits", "0"));
    const PINGS: u64 = 200_000;
    let ping = |n: u64| json!({"jsonrpc": "2.0", "id": n, "method": "ping"});
    let (written, writer) = write_many(input, PINGS, ping);
    // Nothing is read from the output: the server holds about a megabyte of answers (some
    // 30,000 pings), then stops reading, and the client's writes wait.
    let held = settled(&written).await;
    assert!(
        held < PINGS / 2,
        "the server read {held} pings although none of its answers was read"
    );
    // Once the client reads, every ping is answered, none lost.
    assert_eq!(
        ids(&mut output, PINGS).await,
        (0..PINGS).collect::<Vec<_>>()
    );
    writer.await.unwrap();
}

#[tokio::test]
async fn past_the_ceiling_and_the_queue_of_calls_the_server_stops_reading() {
    let server = Server::new("limits", "0").max_concurrent_calls(1);
    let (input, mut output) = pipes(server);
    const CALLS: u64 = 8_000;
    let call = |n: u64| json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "gated"}});
    let (written, writer) = write_many(input, CALLS, call);
    // One call runs, 1,024 wait for their turn, and what the input pipe holds is not read.
    let held = settled(&written).await;
    assert!(
        held < CALLS / 2,
        "the server took {held} calls while one could run"
    );
    gated::GATE.add_permits(CALLS as usize);
    assert_eq!(
        ids(&mut output, CALLS).await,
        (0..CALLS).collect::<Vec<_>>()
    );
    writer.await.unwrap();
}

#[tokio::test]
async fn requests_read_before_the_output_filled_up_are_all_answered() {
    // An output pipe that takes more than a megabyte at once, as standard output's does.
    let (input, mut output) = pipes_of(Server::new("limits", "0"), 8 << 20);
    // All twenty requests fit in the input pipe and are read at once; the answers of the
    // first six, 1.2 MB, stop the server from handling more until they are written, which the
    // pipe takes in one go. The client then waits for the other fourteen.
    const CALLS: u64 = 20;
    let call = |n: u64| json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "large"}});
    let (_, writer) = write_many(input, CALLS, call);
    assert_eq!(
        ids(&mut output, CALLS).await,
        (0..CALLS).collect::<Vec<_>>()
    );
    writer.await.unwrap();
}

mod probe {
    use std::sync::atomic::{AtomicU64, Ordering};

    use toolwright::{Context, mcp_tool};

    /// How many `touch` calls started.
    pub(crate) static TOUCHED: AtomicU64 = AtomicU64::new(0);

    /// Count this call, then ask the client's model something: a call whose start is seen.
    #[mcp_tool]
    async fn touch(ctx: &Context) -> String {
        TOUCHED.fetch_add(1, Ordering::SeqCst);
        let _ = ctx.sample_text("hello", 10).await;
        "touched".to_owned()
    }

    /// How many `touch` calls started.
    #[mcp_tool]
    fn touched() -> u64 {
        TOUCHED.load(Ordering::SeqCst)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_calls_cancelled_at_once_never_start() {
    let (mut input, mut output) = pipes(Server::new("limits", "0").max_concurrent_calls(2));
    const QUEUED: u64 = 1_000;
    let initialize = json!({
        "jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "toolwright-tests", "version": "1.0.0"},
        },
    });
    let mut opening = format!(
        "{initialize}\n{}\n",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    // Two calls take both slots; a thousand wait behind them.
    for id in 0..2 {
        opening += &format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "forever"}})
        );
    }
    for id in 2..2 + QUEUED {
        opening += &format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "touch"}})
        );
    }
    input.write_all(opening.as_bytes()).await.unwrap();
    let first = output.next_line().await.unwrap().unwrap();
    assert!(first.contains("\"init\""), "{first}");
    // Then every one of them is cancelled, in one write: each cancellation of a running call
    // frees a slot while the cancellations of the calls behind it are already in the pipe.
    let mut cancels = String::new();
    for id in 0..2 + QUEUED {
        cancels += &format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}})
        );
    }
    cancels += &format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": "count", "method": "tools/call", "params": {"name": "touched"}})
    );
    input.write_all(cancels.as_bytes()).await.unwrap();
    // Nothing comes back but the count: no answer to a cancelled call, no request to the
    // client from one that started.
    let mut sampled = 0;
    loop {
        let line = tokio::time::timeout(Duration::from_secs(20), output.next_line())
            .await
            .expect("the server answers")
            .unwrap()
            .expect("the output is open");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["method"] == "sampling/createMessage" {
            sampled += 1;
            continue;
        }
        if message["method"] == "notifications/cancelled" {
            // The withdrawal of such a request.
            continue;
        }
        assert_eq!(message["id"], "count", "{message}");
        assert_eq!(
            (message["result"]["content"][0]["text"].clone(), sampled),
            (json!("0"), 0),
            "{message}"
        );
        break;
    }
}
