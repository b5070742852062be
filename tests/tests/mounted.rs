//! A server mounted over HTTP in this process, in each protocol era, while the gateway serves:
//! watched (a tool its server takes out of its list, and announces, is held back with why until
//! the server lists it again, the gateway's own clients told each time), followed (a resource a
//! client here subscribes to is followed on its server, and its changes told under its URI
//! here, its list listed again when it changes; its prompt list too), cancelled (a call its client gives up is
//! cancelled on its server) and heard (what a call logs reaches the call's client). Changes are
//! announced unasked (list changes) or once subscribed (resources) in the handshake era, on a
//! `subscriptions/listen` stream in 2026-07-28. (A binary of its own: `inventory` collects per
//! binary.)

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::oneshot;
use toolwright::client::{Client, Endpoint, Error, Versions};
use toolwright::gateway::Upstream;
use toolwright::http::Http;
use toolwright::registry::Registry;
use toolwright::server::ServerHandle;
use toolwright::testing::TestClient;
use toolwright::{Context, LogLevel, Server, mcp_prompt, mcp_resource, mcp_tool};

/// Add two integers.
#[mcp_tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The `tag`s of the calls of `wait` that ended, by cancellation: no other way ends them.
static ENDED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Notes its call's tag in [`ENDED`] when the call ends.
struct Ended(String);

impl Drop for Ended {
    fn drop(&mut self) {
        ENDED.lock().unwrap().push(std::mem::take(&mut self.0));
    }
}

/// Wait until the call is cancelled.
#[mcp_tool]
async fn wait(ctx: Context, tag: String) -> String {
    let _ended = Ended(tag);
    ctx.cancelled().await;
    "cancelled".to_owned()
}

/// Logs `words` as a warning.
#[mcp_tool]
fn say(ctx: Context, words: String) -> String {
    ctx.log(LogLevel::Warning, &words);
    "said".to_owned()
}

/// Logs `words` for debugging.
#[mcp_tool]
fn whisper(ctx: Context, words: String) -> String {
    ctx.log(LogLevel::Debug, &words);
    "whispered".to_owned()
}

/// The count so far.
#[mcp_resource(uri = "counter://value", changes)]
fn value() -> String {
    "1".to_owned()
}

/// Greet the user.
#[mcp_prompt]
fn greeting() -> &'static str {
    "Hello!"
}

/// The mounted server, over HTTP on a free port: its URL, its handle, and what stops it.
async fn upstream() -> (String, ServerHandle, oneshot::Sender<()>) {
    let server = Server::new("upstream", "1.0.0").registry(Registry::collect().unwrap());
    let handle = server.handle();
    let bound = server
        .bind_http("127.0.0.1:0", Http::new())
        .await
        .expect("a free port on 127.0.0.1");
    let url = bound.url();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(bound.run_until(async {
        let _ = stopped.await;
    }));
    (url, handle, stop)
}

/// A gateway serving nothing of its own, mounting the server at `url` as `up`.
async fn gateway(url: &str, versions: Versions) -> TestClient {
    Server::new("gateway", "1.0.0")
        .registry(Registry::from_registrations([]).unwrap())
        .mount("up", Upstream::url(url).versions(versions))
        .test_client()
        .await
        .expect("the gateway starts")
}

/// Whether the gateway lists `name`.
async fn lists(client: &TestClient, name: &str) -> bool {
    client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .any(|tool| tool["name"] == name)
}

/// Waits up to ten seconds, asking again every `every`, for `done` to say it is; `what` says
/// what did not happen.
async fn within_ten_seconds(what: &str, every: Duration, mut done: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done().await {
        assert!(Instant::now() < deadline, "{what} within ten seconds");
        tokio::time::sleep(every).await;
    }
}

/// Waits up to ten seconds for the gateway to list `name` (`listed`) or not.
async fn until_listed(client: &TestClient, name: &str, listed: bool) {
    let what = format!(
        "the gateway did not {} `{name}`",
        if listed { "list" } else { "stop listing" }
    );
    within_ten_seconds(&what, Duration::from_millis(50), async || {
        lists(client, name).await == listed
    })
    .await;
}

/// How many `notification`s the gateway sent its client since last asked.
fn told(client: &TestClient, notification: &str) -> usize {
    client
        .sent()
        .iter()
        .filter(|message: &&Value| message["method"] == notification)
        .count()
}

/// The `field` of each of the `list` the gateway's `method` (`prompts/list`, ...) answers now.
async fn listed(client: &TestClient, method: &str, list: &str, field: &str) -> Vec<String> {
    let listed = client.request(method, json!({})).await.unwrap();
    listed[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item[field].as_str().unwrap().to_owned())
        .collect()
}

async fn a_tool_taken_away_is_held_back_until_it_is_back(versions: Versions) {
    let (url, handle, _stop) = upstream().await;
    let client = gateway(&url, versions).await;
    assert!(lists(&client, "up__add").await);
    let _ = client.sent();

    handle.disable_tool("add").unwrap();
    until_listed(&client, "up__add", false).await;
    let refused = client
        .call("up__add", json!({"a": 1, "b": 2}))
        .await
        .unwrap_err();
    assert_eq!(refused.code, -32602);
    assert_eq!(
        refused.message,
        "tool `up__add` is held back: its server no longer lists it\nIt is served again once \
         its server lists it as it was approved; a change a person approves in the gateway's \
         lock (`toolwright-gateway --approve`) is served from the gateway's next start."
    );
    assert_eq!(
        told(&client, "notifications/tools/list_changed"),
        1,
        "the gateway's client is told"
    );

    handle.enable_tool("add").unwrap();
    until_listed(&client, "up__add", true).await;
    let added = client
        .call("up__add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(added.text(), "3");
    assert_eq!(
        told(&client, "notifications/tools/list_changed"),
        1,
        "the gateway's client is told again"
    );
}

#[tokio::test]
async fn a_tool_taken_away_in_the_handshake_era_is_held_back_until_it_is_back() {
    a_tool_taken_away_is_held_back_until_it_is_back(Versions::Handshake).await;
}

#[tokio::test]
async fn a_tool_taken_away_in_2026_07_28_is_held_back_until_it_is_back() {
    a_tool_taken_away_is_held_back_until_it_is_back(Versions::Stateless).await;
}

async fn a_followed_resource_that_changes_is_told_under_its_uri_here(versions: Versions) {
    let (url, handle, _stop) = upstream().await;
    let client = gateway(&url, versions).await;
    let read = client
        .request("resources/read", json!({"uri": "counter://up/value"}))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["uri"], "counter://up/value", "{read}");
    assert_eq!(read["contents"][0]["text"], "1", "{read}");
    client
        .request("resources/subscribe", json!({"uri": "counter://up/value"}))
        .await
        .unwrap();
    let _ = client.sent();
    // In 2026-07-28 the server is asked on a stream the gateway opens again with the resource,
    // which takes a moment: the change is told until the gateway's client hears of it.
    let told = "the gateway's client was not told of the change";
    within_ten_seconds(told, Duration::ZERO, async || {
        handle.resource_updated("counter://value");
        tokio::time::sleep(Duration::from_millis(100)).await;
        let told = client
            .sent()
            .into_iter()
            .find(|m| m["method"] == "notifications/resources/updated");
        told.inspect(|told| assert_eq!(told["params"], json!({"uri": "counter://up/value"})))
            .is_some()
    })
    .await;
}

#[tokio::test]
async fn a_followed_resource_that_changes_in_the_handshake_era_is_told_here() {
    a_followed_resource_that_changes_is_told_under_its_uri_here(Versions::Handshake).await;
}

#[tokio::test]
async fn a_followed_resource_that_changes_in_2026_07_28_is_told_here() {
    a_followed_resource_that_changes_is_told_under_its_uri_here(Versions::Stateless).await;
}

async fn a_call_given_up_here_is_cancelled_on_its_server(versions: Versions, tag: &str) {
    let (url, _handle, _stop) = upstream().await;
    let bound = Server::new("gateway", "1.0.0")
        .registry(Registry::from_registrations([]).unwrap())
        .mount("up", Upstream::url(&url).versions(versions))
        .bind_http("127.0.0.1:0", Http::new())
        .await
        .expect("the gateway starts");
    let gateway = bound.url();
    let (stop, stopped) = oneshot::channel::<()>();
    let served = tokio::spawn(bound.run_until(async {
        let _ = stopped.await;
    }));
    let client = Client::builder()
        .versions(versions)
        .connect(Endpoint::url(&gateway))
        .await
        .expect("the gateway answers");

    let given_up = client
        .call_tool("up__wait", json!({ "tag": tag }))
        .timeout(Some(Duration::from_millis(500)))
        .await;
    assert!(
        matches!(given_up, Err(Error::Timeout { .. })),
        "{given_up:?}"
    );
    let ended = "the call on the mounted server did not end after its client gave it up";
    within_ten_seconds(ended, Duration::from_millis(20), async || {
        ENDED.lock().unwrap().iter().any(|ended| ended == tag)
    })
    .await;
    // The gateway and its connection to the mounted server go on serving.
    let added = client
        .call_tool("up__add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(added.text(), "3");
    client.close().await;
    let _ = stop.send(());
    served.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_call_given_up_in_the_handshake_era_is_cancelled_on_its_server() {
    a_call_given_up_here_is_cancelled_on_its_server(Versions::Handshake, "handshake").await;
}

#[tokio::test]
async fn a_call_given_up_in_2026_07_28_is_cancelled_on_its_server() {
    a_call_given_up_here_is_cancelled_on_its_server(Versions::Stateless, "2026-07-28").await;
}

async fn a_resource_taken_away_is_listed_no_more_and_the_clients_told(versions: Versions) {
    let (url, handle, _stop) = upstream().await;
    let client = gateway(&url, versions).await;
    let uris = async || listed(&client, "resources/list", "resources", "uri").await;
    assert_eq!(uris().await, ["counter://up/value"]);
    let _ = client.sent();

    handle.disable_resource("counter://value").unwrap();
    let every = Duration::from_millis(50);
    within_ten_seconds(
        "the resource disabled was still listed",
        every,
        async || uris().await.is_empty(),
    )
    .await;
    let told = told(&client, "notifications/resources/list_changed");
    assert!(told >= 1, "the gateway's client is told the list changed");

    handle.enable_resource("counter://value").unwrap();
    within_ten_seconds(
        "the resource enabled was not listed again",
        every,
        async || !uris().await.is_empty(),
    )
    .await;
}

#[tokio::test]
async fn a_resource_taken_away_in_the_handshake_era_is_listed_no_more() {
    a_resource_taken_away_is_listed_no_more_and_the_clients_told(Versions::Handshake).await;
}

#[tokio::test]
async fn a_resource_taken_away_in_2026_07_28_is_listed_no_more() {
    a_resource_taken_away_is_listed_no_more_and_the_clients_told(Versions::Stateless).await;
}

async fn a_prompt_taken_away_is_listed_no_more_and_the_clients_told(versions: Versions) {
    let (url, handle, _stop) = upstream().await;
    let client = gateway(&url, versions).await;
    let names = async || listed(&client, "prompts/list", "prompts", "name").await;
    assert_eq!(names().await, ["up__greeting"]);
    let _ = client.sent();

    handle.disable_prompt("greeting").unwrap();
    let every = Duration::from_millis(50);
    within_ten_seconds("the prompt disabled was still listed", every, async || {
        names().await.is_empty()
    })
    .await;
    let told = told(&client, "notifications/prompts/list_changed");
    assert!(told >= 1, "the gateway's client is told the list changed");
    let gone = client
        .request("prompts/get", json!({"name": "up__greeting"}))
        .await
        .unwrap_err();
    assert!(
        gone.message.contains("unknown prompt `up__greeting`"),
        "{gone:?}"
    );

    handle.enable_prompt("greeting").unwrap();
    within_ten_seconds(
        "the prompt enabled was not listed again",
        every,
        async || !names().await.is_empty(),
    )
    .await;
    let got = client
        .request("prompts/get", json!({"name": "up__greeting"}))
        .await
        .unwrap();
    assert_eq!(got["messages"][0]["content"]["text"], "Hello!");
}

#[tokio::test]
async fn a_prompt_taken_away_in_the_handshake_era_is_listed_no_more() {
    a_prompt_taken_away_is_listed_no_more_and_the_clients_told(Versions::Handshake).await;
}

#[tokio::test]
async fn a_prompt_taken_away_in_2026_07_28_is_listed_no_more() {
    a_prompt_taken_away_is_listed_no_more_and_the_clients_told(Versions::Stateless).await;
}

async fn a_calls_log_messages_reach_its_client(versions: Versions) {
    let (url, _handle, _stop) = upstream().await;
    let client = gateway(&url, versions).await;
    let _ = client.sent();
    let said = client
        .call("up__say", json!({"words": "mind the gap"}))
        .await
        .unwrap();
    assert_eq!(said.text(), "said");
    let logged: Vec<Value> = client
        .sent()
        .into_iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(
        (&logged[0]["params"]["level"], &logged[0]["params"]["data"]),
        (&json!("warning"), &json!("mind the gap"))
    );
}

/// A message below the server's default level (`info`) reaches a client that asked for it
/// through the gateway, and not one that did not.
async fn a_calls_debug_messages_reach_a_client_that_asked_for_them(versions: Versions) {
    let (url, _handle, _stop) = upstream().await;
    let quiet = gateway(&url, versions).await;
    let listening = gateway(&url, versions).await;
    listening
        .request("logging/setLevel", json!({"level": "debug"}))
        .await
        .unwrap();
    let whispered = |client: TestClient| async move {
        let _ = client.sent();
        let answer = client
            .call("up__whisper", json!({"words": "a cache miss"}))
            .await
            .unwrap();
        assert_eq!(answer.text(), "whispered");
        client
            .sent()
            .into_iter()
            .filter(|m| m["method"] == "notifications/message")
            .map(|m| (m["params"]["level"].clone(), m["params"]["data"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        whispered(listening).await,
        [(json!("debug"), json!("a cache miss"))]
    );
    assert_eq!(whispered(quiet).await, []);
}

#[tokio::test]
async fn a_calls_debug_messages_in_the_handshake_era_reach_a_client_that_asked() {
    a_calls_debug_messages_reach_a_client_that_asked_for_them(Versions::Handshake).await;
}

#[tokio::test]
async fn a_calls_debug_messages_in_2026_07_28_reach_a_client_that_asked() {
    a_calls_debug_messages_reach_a_client_that_asked_for_them(Versions::Stateless).await;
}

#[tokio::test]
async fn a_calls_log_messages_in_the_handshake_era_reach_its_client() {
    a_calls_log_messages_reach_its_client(Versions::Handshake).await;
}

#[tokio::test]
async fn a_calls_log_messages_in_2026_07_28_reach_its_client() {
    a_calls_log_messages_reach_its_client(Versions::Stateless).await;
}
