//! Several servers sharing one session store, as replicas behind a load balancer do: each
//! request of a session may go to any of them. With a `MemoryStore` shared in process, and with
//! a real Redis server (`redis-server`, started by the tests on a free port of 127.0.0.1; set
//! `TOOLWRIGHT_REDIS_SERVER` to use another binary than the one on the `PATH`).
//!
//! The tests with Redis are ignored by default, so that `cargo test --workspace` passes with the
//! Rust toolchain alone; with `redis-server` installed, run them too with
//! `cargo test -p toolwright-tests --test replicas -- --include-ignored` (without it they fail
//! saying what to install).

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use toolwright::Server;
use toolwright::http::Http;
use toolwright::registry::Registry;
use toolwright::store::{MemoryStore, RedisStore, SessionStore};
use toolwright_tests::redis::Redis;

mod tools {
    use std::time::Duration;

    use toolwright::context::ClientRequestError;
    use toolwright::{Context, LogLevel, mcp_tool};

    /// Ask the client's model a question; returns its answer.
    #[mcp_tool]
    async fn ask_model(
        ctx: &Context,
        /// The question.
        prompt: String,
    ) -> Result<String, ClientRequestError> {
        ctx.sample_text(&prompt, 100).await
    }

    /// Log `n` messages a tenth of a second apart, then answer.
    #[mcp_tool]
    async fn count_slowly(
        ctx: &Context,
        /// How many messages.
        n: u32,
    ) -> String {
        for i in 1..=n {
            ctx.log(LogLevel::Info, format!("step {i}"));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        "counted".to_owned()
    }

    /// Wait until the client cancels the call.
    #[mcp_tool]
    async fn wait_for_cancel(ctx: &Context) -> String {
        tokio::select! {
            () = ctx.cancelled() => "cancelled".to_owned(),
            () = tokio::time::sleep(Duration::from_secs(60)) => "never cancelled".to_owned(),
        }
    }

    /// Add two integers.
    #[mcp_tool(read_only)]
    fn add(
        /// The first term.
        a: i64,
        /// The second term.
        b: i64,
    ) -> i64 {
        a + b
    }

    /// Log at `info` that it was called, then answer.
    #[mcp_tool(read_only)]
    fn chatty(ctx: &Context) -> &'static str {
        ctx.log(LogLevel::Info, "called");
        "answered"
    }
}

const ACCEPT: &str = "application/json, text/event-stream";

/// A server of the test tools on a free port, sharing `store`, until dropped.
struct Replica {
    url: String,
    _stop: oneshot::Sender<()>,
}

impl Replica {
    async fn start(store: impl SessionStore, lifetime: Option<Duration>) -> Replica {
        let server = Server::new("replicas", "0.0.1")
            .registry(Registry::collect().expect("the test tools do not conflict"));
        let mut http = Http::new().session_store(store);
        if let Some(lifetime) = lifetime {
            http = http.session_lifetime(lifetime);
        }
        let bound = server.bind_http("127.0.0.1:0", http).await.unwrap();
        let url = bound.url();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(bound.run_until(async {
            let _ = stopped.await;
        }));
        Replica { url, _stop: stop }
    }
}

/// What came back: the status, a header, and the body.
#[derive(Debug)]
struct Answer {
    status: StatusCode,
    retry_after: Option<String>,
    session: Option<String>,
    content_type: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        assert_eq!(self.content_type, "application/json", "{self:?}");
        serde_json::from_str(&self.body).unwrap()
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

async fn send(request: reqwest::RequestBuilder) -> Answer {
    let response = request.send().await.expect("the server answers");
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    Answer {
        status: response.status(),
        retry_after: header("retry-after"),
        session: header("mcp-session-id"),
        content_type: header("content-type").unwrap_or_default(),
        body: response.text().await.unwrap(),
    }
}

/// POSTs `body` to `replica`, in `session` when one is named.
async fn post(replica: &Replica, session: Option<&str>, body: Value) -> Answer {
    let mut request = client()
        .post(&replica.url)
        .header("accept", ACCEPT)
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    send(request).await
}

async fn delete(replica: &Replica, session: &str) -> Answer {
    send(
        client()
            .delete(&replica.url)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25"),
    )
    .await
}

/// `initialize` on `replica`; the session's id.
async fn initialize(replica: &Replica) -> String {
    let answer = post(
        replica,
        None,
        json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"sampling": {}},
                "clientInfo": {"name": "replicas-test", "version": "1"},
            },
        }),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{answer:?}");
    answer.session.expect("initialize names the session")
}

fn call(id: i64, name: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    })
}

/// One session, each of its requests on the next replica in turn, as a round-robin balancer
/// sends them; ended on one replica, it is gone from all.
async fn round_robin(replicas: &[Replica]) {
    let session = initialize(&replicas[0]).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = post(&replicas[1], Some(&session), initialized).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{answer:?}");
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let answer = post(&replicas[2 % replicas.len()], Some(&session), list).await;
    let listed = answer.json();
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "add",
            "ask_model",
            "chatty",
            "count_slowly",
            "wait_for_cancel"
        ]
    );
    for (n, replica) in replicas.iter().cycle().take(6).enumerate() {
        let answer = post(
            replica,
            Some(&session),
            call(10 + n as i64, "add", json!({"a": n, "b": 1})),
        )
        .await;
        assert_eq!(
            answer.json()["result"]["content"][0]["text"],
            (n + 1).to_string(),
            "{answer:?}"
        );
    }
    let answer = delete(replicas.last().unwrap(), &session).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT, "{answer:?}");
    for replica in replicas {
        let answer = post(
            replica,
            Some(&session),
            call(99, "add", json!({"a": 1, "b": 1})),
        )
        .await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{answer:?}");
        assert_eq!(answer.json()["id"], 99, "the refusal names the request");
        let answer = delete(replica, &session).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{answer:?}");
    }
}

/// The log level a client sets on one replica holds for its calls on another: `chatty` logs at
/// `info`, which a level of `error` silences.
async fn log_level_travels(replicas: &[Replica]) {
    let session = initialize(&replicas[0]).await;
    let answer = post(&replicas[1], Some(&session), call(1, "chatty", json!({}))).await;
    assert_eq!(answer.content_type, "text/event-stream", "{answer:?}");
    assert!(answer.body.contains("\"called\""), "{answer:?}");
    let level = json!({
        "jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"},
    });
    let answer = post(&replicas[0], Some(&session), level).await;
    assert_eq!(answer.json()["result"], json!({}), "{answer:?}");
    let answer = post(&replicas[1], Some(&session), call(3, "chatty", json!({}))).await;
    assert_eq!(
        answer.json()["result"]["content"][0]["text"],
        "answered",
        "no log message before the result: {answer:?}"
    );
}

/// The POST of `body` in `session` on `replica`, its answer not read yet.
async fn start_post(replica: &Replica, session: &str, body: Value) -> reqwest::Response {
    client()
        .post(&replica.url)
        .header("accept", ACCEPT)
        .header("content-type", "application/json")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

/// What comes on `response` until an event holds `needle`.
async fn read_raw_until(response: &mut reqwest::Response, needle: &str) -> String {
    let mut text = String::new();
    while !(text.contains(needle) && text.ends_with("\n\n")) {
        let chunk = response.chunk().await.unwrap().expect("more events come");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    text
}

/// The data of the events that come on `response` until one holds `needle`.
async fn read_until(response: &mut reqwest::Response, needle: &str) -> Vec<Value> {
    events_of(&read_raw_until(response, needle).await)
        .into_iter()
        .filter(|(_, data)| !data.is_empty())
        .map(|(_, data)| serde_json::from_str(&data).unwrap())
        .collect()
}

/// A tool on one replica asks the client's model; the client's answer reaches another replica,
/// which sends it on to the call that awaits it.
async fn answers_find_their_call(replicas: &[Replica]) {
    let session = initialize(&replicas[0]).await;
    let mut asking = start_post(
        &replicas[0],
        &session,
        call(1, "ask_model", json!({"prompt": "six times seven?"})),
    )
    .await;
    let events = read_until(&mut asking, "sampling/createMessage").await;
    let request = events.last().unwrap();
    assert_eq!(request["method"], "sampling/createMessage", "{events:?}");
    let id = request["id"].clone();
    let answer = json!({
        "jsonrpc": "2.0", "id": id,
        "result": {
            "role": "assistant", "model": "test",
            "content": {"type": "text", "text": "forty-two"},
        },
    });
    let relayed = post(&replicas[1], Some(&session), answer).await;
    assert_eq!(relayed.status, StatusCode::ACCEPTED, "{relayed:?}");
    let events = read_until(&mut asking, "forty-two").await;
    assert_eq!(
        events.last().unwrap()["result"]["content"][0]["text"],
        "forty-two",
        "{events:?}"
    );
}

/// The events of a body, each with its id.
fn events_of(text: &str) -> Vec<(Option<String>, String)> {
    text.split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| {
            let id = event
                .lines()
                .find_map(|l| l.strip_prefix("id: "))
                .map(str::to_owned);
            let data = event
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap_or("")
                .to_owned();
            (id, data)
        })
        .collect()
}

/// A stream cut on one replica is resumed on another with `Last-Event-ID`: every event after
/// the one named comes, once, and the answer last.
async fn streams_resume_elsewhere(replicas: &[Replica]) {
    let session = initialize(&replicas[0]).await;
    let mut counting = start_post(
        &replicas[0],
        &session,
        call(3, "count_slowly", json!({"n": 6})),
    )
    .await;
    let received = events_of(&read_raw_until(&mut counting, "step 2").await);
    // The connection drops after the second step.
    drop(counting);
    let datas: Vec<&str> = received.iter().map(|(_, data)| data.as_str()).collect();
    assert_eq!(
        datas.len(),
        3,
        "the priming event and two steps: {received:?}"
    );
    let last = received
        .last()
        .unwrap()
        .0
        .clone()
        .expect("events carry ids");
    let mut resumed = client()
        .get(&replicas[1].url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .header("last-event-id", &last)
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), StatusCode::OK);
    let rest = events_of(&read_raw_until(&mut resumed, "counted").await);
    let steps: Vec<String> = rest
        .iter()
        .map(|(_, data)| {
            let message: Value = serde_json::from_str(data).unwrap();
            message["params"]["data"]
                .as_str()
                .or(message["result"]["content"][0]["text"].as_str())
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        steps,
        ["step 3", "step 4", "step 5", "step 6", "counted"],
        "each event after the one named, once: {rest:?}"
    );
    // The ids go on from the one named.
    let (stream, n) = last.split_once('-').unwrap();
    let n: u64 = n.parse().unwrap();
    let ids: Vec<String> = rest.iter().map(|(id, _)| id.clone().unwrap()).collect();
    let expected: Vec<String> = (n + 1..n + 6).map(|k| format!("{stream}-{k}")).collect();
    assert_eq!(ids, expected);
}

/// A call runs on one replica; the client's cancellation reaches another, and stops it.
async fn cancellations_find_their_call(replicas: &[Replica]) {
    let session = initialize(&replicas[0]).await;
    let started = Instant::now();
    let waiting = start_post(
        &replicas[0],
        &session,
        call(5, "wait_for_cancel", json!({})),
    );
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let cancelled = json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 5, "reason": "changed my mind"},
        });
        post(&replicas[1], Some(&session), cancelled).await
    };
    let (waited, cancelled) = tokio::join!(waiting, cancel);
    assert_eq!(cancelled.status, StatusCode::ACCEPTED, "{cancelled:?}");
    // A cancelled call is answered with nothing.
    assert_eq!(waited.status(), StatusCode::ACCEPTED);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn replicas_sharing_a_memory_store_serve_each_others_sessions() {
    let store = MemoryStore::new();
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(Replica::start(store.clone(), None).await);
    }
    round_robin(&replicas).await;
    log_level_travels(&replicas).await;
    assert_eq!(store.len(), 1, "the ended session is gone, the other kept");
    answers_find_their_call(&replicas).await;
    cancellations_find_their_call(&replicas).await;
    streams_resume_elsewhere(&replicas).await;
}

#[tokio::test]
async fn an_unused_session_expires_on_every_replica() {
    let store = MemoryStore::new();
    let lifetime = Some(Duration::from_secs(1));
    let one = Replica::start(store.clone(), lifetime).await;
    let two = Replica::start(store.clone(), lifetime).await;
    let session = initialize(&one).await;
    let used = post(
        &two,
        Some(&session),
        call(1, "add", json!({"a": 1, "b": 2})),
    )
    .await;
    assert_eq!(used.status, StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for replica in [&two, &one] {
        let answer = post(
            replica,
            Some(&session),
            call(2, "add", json!({"a": 1, "b": 2})),
        )
        .await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{answer:?}");
    }
    assert!(store.is_empty());
}

#[tokio::test]
async fn a_session_id_that_is_none_of_ours_is_unknown() {
    let one = Replica::start(MemoryStore::new(), None).await;
    for id in ["nope", "0123456789abcdef0123456789abcdeg", &"a".repeat(32)] {
        let answer = post(&one, Some(id), call(1, "add", json!({"a": 1, "b": 2}))).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{id}: {answer:?}");
    }
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn replicas_sharing_redis_serve_each_others_sessions() {
    let redis = Redis::start(env!("CARGO_TARGET_TMPDIR"));
    let store = RedisStore::new(&redis.url()).unwrap().prefix("test:");
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(
            Replica::start(RedisStore::new(&redis.url()).unwrap().prefix("test:"), None).await,
        );
    }
    round_robin(&replicas).await;
    log_level_travels(&replicas).await;
    answers_find_their_call(&replicas).await;
    cancellations_find_their_call(&replicas).await;
    streams_resume_elsewhere(&replicas).await;
    // The session is one key, which expires after the session's lifetime unused.
    let session = initialize(&replicas[0]).await;
    let mut connection = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let ttl: i64 = redis::cmd("TTL")
        .arg(format!("test:session:{session}"))
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!((86_300..=86_400).contains(&ttl), "a day: {ttl}");
    assert!(
        store
            .load(&session, Duration::from_secs(60))
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn without_redis_requests_are_refused_with_503_and_served_again_when_it_returns() {
    let mut redis = Redis::start(env!("CARGO_TARGET_TMPDIR"));
    let one = Replica::start(RedisStore::new(&redis.url()).unwrap().prefix("test:"), None).await;
    let two = Replica::start(RedisStore::new(&redis.url()).unwrap().prefix("test:"), None).await;
    let session = initialize(&one).await;
    redis.stop();
    let answer = post(
        &two,
        Some(&session),
        call(7, "add", json!({"a": 1, "b": 2})),
    )
    .await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE, "{answer:?}");
    assert_eq!(answer.retry_after.as_deref(), Some("1"));
    let body = answer.json();
    assert_eq!(body["id"], 7, "{body}");
    assert_eq!(
        body["error"]["message"],
        "the session store did not answer: try again shortly"
    );
    let answer = post(
        &one,
        None,
        json!({
            "jsonrpc": "2.0", "id": 8, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}},
        }),
    )
    .await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE, "{answer:?}");
    assert_eq!(answer.json()["id"], 8);
    // Redis comes back with what it had: the session goes on, on either replica.
    redis.run();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let answer = post(
            &two,
            Some(&session),
            call(9, "add", json!({"a": 2, "b": 2})),
        )
        .await;
        if answer.status == StatusCode::OK {
            assert_eq!(answer.json()["result"]["content"][0]["text"], "4");
            break;
        }
        assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE, "{answer:?}");
        assert!(
            Instant::now() < deadline,
            "the replica did not reconnect: {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let answer = post(
        &one,
        Some(&session),
        call(10, "add", json!({"a": 3, "b": 2})),
    )
    .await;
    assert_eq!(answer.json()["result"]["content"][0]["text"], "5");
}
