//! The ceiling on concurrent calls and the grace period when the client goes away.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolwright::Server;
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
