//! The ceiling on concurrent calls and the grace period when the client goes away.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;
use toolwright::{Registry, Server};

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

    /// Run until cancelled, which never comes.
    #[mcp_tool]
    async fn forever(ctx: &Context) -> String {
        ctx.cancelled().await;
        "cancelled".to_owned()
    }
}

const TIMEOUT: Duration = Duration::from_secs(5);

struct Client {
    input: Option<DuplexStream>,
    output: Lines<BufReader<DuplexStream>>,
    server: JoinHandle<Result<(), toolwright::Error>>,
}

impl Client {
    async fn start(server: Server) -> Client {
        let (client_in, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, client_out) = tokio::io::duplex(1 << 16);
        let server = server.registry(Registry::collect().unwrap());
        let server = tokio::spawn(server.serve(server_in, server_out));
        let mut client = Client {
            input: Some(client_in),
            output: BufReader::new(client_out).lines(),
            server,
        };
        client
            .send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}))
            .await;
        assert_eq!(client.read().await["id"], 0);
        client
    }

    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.input.as_mut().unwrap().write_all(&line).await.unwrap();
    }

    async fn call(&mut self, id: u64, tool: &str) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool}}),
        )
        .await;
    }

    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(TIMEOUT, self.output.next_line())
            .await
            .expect("an answer within the timeout")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap()
    }
}

#[tokio::test]
async fn calls_past_the_ceiling_wait_while_ping_is_answered() {
    let mut client = Client::start(Server::new("limits", "0").max_concurrent_calls(1)).await;
    client.call(1, "hold").await;
    client.call(2, "quick").await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    // The one slot is taken by `hold`: `ping` answers, `quick` waits.
    assert_eq!(
        client.read().await,
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
    let early = tokio::time::timeout(Duration::from_millis(200), client.output.next_line()).await;
    assert!(early.is_err(), "`quick` ran past the ceiling: {early:?}");
    tools::RELEASE.notify_one();
    let first = client.read().await;
    let second = client.read().await;
    assert_eq!(first["id"], 1, "{first}");
    assert_eq!(first["result"]["content"][0]["text"], "released");
    assert_eq!(second["id"], 2, "{second}");
    assert_eq!(second["result"]["content"][0]["text"], "quick");
}

#[tokio::test]
async fn calls_still_running_after_the_grace_period_are_stopped() {
    let mut client =
        Client::start(Server::new("limits", "0").shutdown_grace(Duration::from_millis(200))).await;
    client.call(1, "forever").await;
    client.call(2, "quick").await;
    assert_eq!(client.read().await["id"], 2);
    let closed = Instant::now();
    client.input = None;
    let served = tokio::time::timeout(TIMEOUT, client.server)
        .await
        .expect("the server returns after the grace period")
        .unwrap();
    assert!(served.is_ok(), "{served:?}");
    assert!(closed.elapsed() >= Duration::from_millis(200));
    // The stopped call sends nothing; the output simply ends.
    let rest = tokio::time::timeout(TIMEOUT, client.output.next_line())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rest, None);
}
