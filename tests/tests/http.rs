//! The Streamable HTTP transport in process: a server on a free port of 127.0.0.1, spoken to
//! with an HTTP client as an MCP client would, header by header.

use std::sync::Mutex;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use toolwright::Server;
use toolwright::http::Http as Transport;
use toolwright::registry::Registry;

mod tools {
    use std::time::Duration;

    use schemars::JsonSchema;
    use serde::Serialize;
    use toolwright::{Context, LogLevel, mcp_resource, mcp_tool};

    /// The weather now, which changes.
    #[mcp_resource(uri = "weather://now", changes)]
    fn weather_now() -> &'static str {
        "sunny"
    }

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

    /// Count to `n`, reporting progress at each step, then log that it is done.
    #[mcp_tool]
    async fn count_up(
        ctx: Context,
        /// Where to stop.
        n: u32,
    ) -> u32 {
        for i in 1..=n {
            ctx.progress(f64::from(i), Some(f64::from(n)), None);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        ctx.log(LogLevel::Info, "counted");
        n
    }

    /// Forecast the weather of a region, some days ahead.
    #[mcp_tool(read_only)]
    fn forecast(
        /// The region, mirrored in `Mcp-Param-Region`.
        #[arg(header = "Region")]
        region: String,
        /// How many days ahead, mirrored in `Mcp-Param-Days`.
        #[arg(header = "Days")]
        days: Option<u32>,
    ) -> String {
        format!("{region} in {} day(s): sun", days.unwrap_or(1))
    }

    /// Answer after a while.
    #[mcp_tool]
    async fn slow(
        /// How long to take, in milliseconds.
        ms: u64,
    ) -> String {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        "done".to_owned()
    }

    /// Wait until the client cancels the call.
    #[mcp_tool]
    async fn wait_for_cancel(ctx: &Context) -> String {
        tokio::select! {
            () = ctx.cancelled() => "cancelled".to_owned(),
            () = tokio::time::sleep(Duration::from_secs(60)) => "never cancelled".to_owned(),
        }
    }

    /// Log, end the stream, wait, log again and answer.
    #[mcp_tool]
    async fn poll_later(
        ctx: Context,
        /// How long to wait after ending the stream, in milliseconds.
        ms: u64,
    ) -> &'static str {
        ctx.log(LogLevel::Info, "before");
        ctx.close_sse_stream();
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ctx.log(LogLevel::Info, "after");
        "answered"
    }

    /// The calls of `hold` that ended before their time (cancelled), by the `key` they were
    /// given.
    pub(crate) static ENDED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

    /// Records its key in `ENDED` when dropped: when the call ends, whichever way.
    struct Ends(String);

    impl Drop for Ends {
        fn drop(&mut self) {
            ENDED.lock().unwrap().push(std::mem::take(&mut self.0));
        }
    }

    /// Sleep `ms` milliseconds, as a task when the client asks for one.
    #[mcp_tool(task = "optional")]
    async fn nap(ms: u64) -> String {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        format!("slept {ms} ms")
    }

    /// Ask the user's name, as a task when the client asks for one.
    #[mcp_tool(task = "optional")]
    async fn ask_name(ctx: Context) -> Result<String, toolwright::context::ClientRequestError> {
        let form =
            serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let answer = ctx
            .elicit(toolwright::context::Elicitation::with_schema("Name?", form))
            .await?;
        let name = answer.content().and_then(|c| c.get("name")).cloned();
        Ok(format!("hello {}", name.unwrap_or_default()))
    }

    /// The session's id, as the call's context has it.
    #[mcp_tool]
    fn session_id(ctx: &Context) -> String {
        ctx.session_id().unwrap_or("none").to_owned()
    }

    /// The address the call came from, as its context has it.
    #[mcp_tool]
    fn client_address(ctx: &Context) -> String {
        ctx.client_address()
            .map_or_else(|| "none".to_owned(), |a| a.to_string())
    }

    /// Report progress if asked, then take 30 seconds.
    #[mcp_tool]
    async fn hold(
        ctx: Context,
        /// Recorded when the call ends.
        key: String,
    ) -> &'static str {
        let _ends = Ends(key);
        ctx.progress(1.0, None, None);
        tokio::time::sleep(Duration::from_secs(30)).await;
        "held"
    }
}

const TIMEOUT: Duration = Duration::from_secs(10);
const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// A server on a free port, and a client for it.
struct Http {
    url: String,
    port: u16,
    client: reqwest::Client,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    server: JoinHandle<Result<(), toolwright::Error>>,
}

/// What came back, read whole.
#[derive(Debug)]
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }

    fn content_type(&self) -> Option<&str> {
        self.header(CONTENT_TYPE.as_str())
    }

    fn json(&self) -> Value {
        assert_eq!(self.content_type(), Some("application/json"), "{self:?}");
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }

    /// The JSON-RPC error a refusal carries: its code and id.
    fn error(&self) -> (i64, Value) {
        let body = self.json();
        (
            body["error"]["code"]
                .as_i64()
                .unwrap_or_else(|| panic!("{body}")),
            body["id"].clone(),
        )
    }

    /// The `retry` field of the first event that has one.
    fn retry(&self) -> Option<u64> {
        self.body
            .lines()
            .find_map(|line| line.strip_prefix("retry: "))
            .map(|ms| ms.parse().unwrap())
    }

    /// The server-sent events of the body: each one's id and data (and no other field than
    /// `retry`).
    fn events(&self) -> Vec<(Option<String>, String)> {
        assert_eq!(self.content_type(), Some("text/event-stream"), "{self:?}");
        self.body
            .split("\n\n")
            .filter(|event| !event.is_empty())
            .map(|event| {
                let mut id = None;
                let mut data = Vec::new();
                for line in event.lines() {
                    let (field, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    match field {
                        "id" => id = Some(value.to_owned()),
                        "data" => data.push(value),
                        "retry" => {}
                        other => panic!("unexpected field `{other}` in {event:?}"),
                    }
                }
                (id, data.join("\n"))
            })
            .collect()
    }
}

impl Http {
    async fn start() -> Http {
        Http::with(Server::new("http-tests", "0.0.1")).await
    }

    async fn with(server: Server) -> Http {
        Http::carried(server, Transport::new()).await
    }

    /// The server carried by a transport configured as `transport` says.
    async fn carried(server: Server, transport: Transport) -> Http {
        let registry = Registry::collect().expect("the test tools do not conflict");
        let bound = server
            .registry(registry)
            .bind_http("127.0.0.1:0", transport)
            .await
            .expect("a free port on 127.0.0.1");
        let addr = bound.local_addr();
        assert_eq!(bound.url(), format!("http://{addr}/mcp"));
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(bound.run_until(async {
            let _ = stopped.await;
        }));
        Http {
            url: format!("http://{addr}/mcp"),
            port: addr.port(),
            client: reqwest::Client::builder()
                .no_proxy()
                .timeout(TIMEOUT)
                .build()
                .unwrap(),
            stop: Mutex::new(Some(stop)),
            server,
        }
    }

    /// POSTs `body` with the headers a client sends, `headers` replacing them.
    async fn post(&self, body: &Value, headers: &[(&str, &str)]) -> Answer {
        let mut all = HeaderMap::new();
        all.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
        all.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes()).unwrap();
            all.insert(name, HeaderValue::from_str(value).unwrap());
        }
        read(
            self.client
                .post(&self.url)
                .headers(all)
                .body(body.to_string()),
        )
        .await
    }

    /// `initialize` then `notifications/initialized`; returns the session id.
    async fn initialize(&self) -> String {
        self.initialize_at("2025-11-25").await
    }

    /// `initialize` at this protocol version, then `notifications/initialized`.
    async fn initialize_at(&self, version: &str) -> String {
        let mut request = initialize();
        request["params"]["protocolVersion"] = json!(version);
        let answer = self.post(&request, &[]).await;
        assert_eq!(answer.status, StatusCode::OK, "{answer:?}");
        assert_eq!(answer.json()["result"]["protocolVersion"], version);
        let session = answer
            .header("mcp-session-id")
            .expect("initialize names the session")
            .to_owned();
        let answer = self
            .in_session(
                &session,
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .await;
        assert_eq!(answer.status, StatusCode::ACCEPTED);
        session
    }

    /// POSTs in a session, at protocol 2025-11-25.
    async fn in_session(&self, session: &str, body: &Value) -> Answer {
        self.in_session_at(session, "2025-11-25", body).await
    }

    /// POSTs in a session with this `MCP-Protocol-Version` header.
    async fn in_session_at(&self, session: &str, version: &str, body: &Value) -> Answer {
        self.post(
            body,
            &[
                ("mcp-session-id", session),
                ("mcp-protocol-version", version),
            ],
        )
        .await
    }

    async fn call(&self, session: &str, id: i64, params: Value) -> Answer {
        self.in_session(
            session,
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
        )
        .await
    }

    /// GETs the endpoint with these headers, and `Accept: text/event-stream`.
    async fn get(&self, headers: &[(&str, &str)]) -> Answer {
        let mut request = self
            .client
            .get(&self.url)
            .header(ACCEPT, "text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        read(request).await
    }

    /// POSTs a request of protocol 2026-07-28: `params._meta` carries the envelope, and the
    /// headers mirror the body as a client sends them; `headers` replace those.
    async fn stateless(&self, body: &Value, headers: &[(&str, &str)]) -> Answer {
        let mut all = vec![
            ("mcp-protocol-version", "2026-07-28".to_owned()),
            ("mcp-method", body["method"].as_str().unwrap().to_owned()),
        ];
        if let Some(name) = body["params"]["name"].as_str() {
            all.push(("mcp-name", name.to_owned()));
        }
        all.retain(|(name, _)| !headers.iter().any(|(n, _)| n == name));
        let mut all: Vec<(&str, &str)> = all.iter().map(|(n, v)| (*n, v.as_str())).collect();
        all.extend(headers.iter().filter(|(_, v)| !v.is_empty()));
        self.post(body, &all).await
    }

    async fn delete(&self, headers: &[(&str, &str)]) -> Answer {
        let mut request = self.client.delete(&self.url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        read(request).await
    }

    /// Asks the server to stop, as Ctrl-C does.
    fn signal_stop(&self) {
        if let Some(stop) = self.stop.lock().unwrap().take() {
            let _ = stop.send(());
        }
    }

    /// Stops the server and checks that it returns `Ok`.
    async fn stop(self) {
        self.signal_stop();
        tokio::time::timeout(TIMEOUT, self.server)
            .await
            .expect("the server stops in time")
            .expect("the server does not panic")
            .expect("the server stops with Ok");
    }
}

async fn read(request: reqwest::RequestBuilder) -> Answer {
    let response = request.send().await.expect("the server answers");
    Answer {
        status: response.status(),
        headers: response.headers().clone(),
        body: response.text().await.expect("the body is read whole"),
    }
}

fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "http-tests", "version": "1.0.0"}
        }
    })
}

/// A request of protocol 2026-07-28, its envelope in `params._meta`.
fn enveloped(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "http-tests", "version": "1.0.0"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Reads the body of a streamed answer until `events` events are in, and drops the rest (the
/// client goes away). Returns each event's id and data.
async fn read_events(response: reqwest::Response, events: usize) -> Vec<(Option<String>, String)> {
    let mut response = response;
    let mut text = String::new();
    while text.matches("\n\n").count() < events {
        let chunk = response.chunk().await.unwrap().expect("more events come");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let answer = Answer {
        status: StatusCode::OK,
        headers: response.headers().clone(),
        body: text,
    };
    answer.events()
}

fn tools_list(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}})
}

#[tokio::test]
async fn initialize_opens_a_session_that_later_requests_name() {
    let http = Http::start().await;
    let answer = http.post(&initialize(), &[]).await;
    assert_eq!(answer.status, StatusCode::OK);
    let result = &answer.json()["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "http-tests");
    let session = answer.header("mcp-session-id").unwrap().to_owned();
    assert_eq!(session.len(), 32, "{session}");
    assert!(session.bytes().all(|b| b.is_ascii_hexdigit()), "{session}");

    // Every session gets its own id.
    let other = http.initialize().await;
    assert_ne!(other, session);

    let answer = http.in_session(&session, &tools_list(1)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header("mcp-session-id"), None);
    let body = answer.json();
    assert_eq!(body["id"], 1);
    let names = toolwright_tests::tool_names(&body["result"]);
    assert_eq!(
        names,
        [
            "add",
            "ask_name",
            "client_address",
            "count_up",
            "forecast",
            "hold",
            "nap",
            "poll_later",
            "session_id",
            "slow",
            "wait_for_cancel"
        ]
    );

    // Without the version header the client is taken to speak 2025-03-26, which is served.
    let answer = http
        .post(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
            &[("mcp-session-id", &session)],
        )
        .await;
    assert_eq!(
        answer.json(),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );

    // A failed `initialize` opens no session.
    let answer = http
        .post(
            &json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {}}),
            &[],
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.error(), (-32602, json!(3)));
    assert_eq!(answer.header("mcp-session-id"), None);
    http.stop().await;
}

#[tokio::test]
async fn a_missing_session_is_400_and_an_unknown_one_404() {
    let http = Http::start().await;
    let answer = http.post(&tools_list(7), &[]).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.error(), (-32600, json!(7)));
    let answer = http
        .post(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            &[],
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);

    let answer = http
        .post(&tools_list(8), &[("mcp-session-id", "no-such-session")])
        .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(answer.error(), (-32600, json!(8)));

    // A client whose session is gone starts another with `initialize`.
    let answer = http
        .post(&initialize(), &[("mcp-session-id", "no-such-session")])
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(answer.header("mcp-session-id").is_some());
    http.stop().await;
}

#[tokio::test]
async fn delete_ends_the_session() {
    let http = Http::start().await;
    let session = http.initialize().await;
    let kept = http.initialize().await;
    let answer = http
        .delete(&[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
        ])
        .await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
    assert_eq!(answer.body, "");

    assert_eq!(
        http.in_session(&session, &tools_list(1)).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        http.delete(&[("mcp-session-id", &session)]).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(http.delete(&[]).await.status, StatusCode::BAD_REQUEST);
    // Other sessions go on.
    assert_eq!(
        http.in_session(&kept, &tools_list(2)).await.status,
        StatusCode::OK
    );
    http.stop().await;
}

#[tokio::test]
async fn notifications_and_responses_are_accepted_with_no_body() {
    let http = Http::start().await;
    let session = http.initialize().await;
    for message in [
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}),
        json!({"jsonrpc": "2.0", "method": "notifications/unknown"}),
        json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
    ] {
        let answer = http.in_session(&session, &message).await;
        assert_eq!(answer.status, StatusCode::ACCEPTED, "{message}");
        assert_eq!(answer.body, "", "{message}");
        assert_eq!(answer.content_type(), None, "{message}");
    }
    http.stop().await;
}

#[tokio::test]
async fn a_call_without_notifications_is_answered_with_json() {
    let http = Http::start().await;
    let session = http.initialize().await;
    let answer = http
        .call(
            &session,
            3,
            json!({"name": "add", "arguments": {"a": 2, "b": 40}}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let body = answer.json();
    assert_eq!(body["id"], 3);
    assert_eq!(body["result"]["structuredContent"], json!({"sum": 42}));
    // Without a progress token, `count_up` sends only its log message, which takes a stream.
    let answer = http
        .call(
            &session,
            4,
            json!({"name": "count_up", "arguments": {"n": 2}}),
        )
        .await;
    let events = answer.events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(events[1].1.contains("notifications/message"));
    http.stop().await;
}

#[tokio::test]
async fn a_call_knows_its_session_by_the_id_the_client_holds() {
    let http = Http::start().await;
    let session = http.initialize().await;
    let answer = http
        .call(&session, 1, json!({"name": "session_id", "arguments": {}}))
        .await;
    assert_eq!(answer.json()["result"]["content"][0]["text"], session);
    // A 2026-07-28 request has no session.
    let body = enveloped(
        2,
        "tools/call",
        json!({"name": "session_id", "arguments": {}}),
    );
    let answer = http
        .stateless(
            &body,
            &[("mcp-method", "tools/call"), ("mcp-name", "session_id")],
        )
        .await;
    assert_eq!(answer.json()["result"]["content"][0]["text"], "none");
    http.stop().await;
}

#[tokio::test]
async fn a_call_that_reports_progress_is_answered_with_events() {
    let http = Http::start().await;
    let session = http.initialize().await;
    let answer = http
        .call(
            &session,
            9,
            json!({"name": "count_up", "arguments": {"n": 3}, "_meta": {"progressToken": "p"}}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header("cache-control"), Some("no-cache"));
    let events = answer.events();
    assert_eq!(events.len(), 6, "{events:?}");

    // The first event primes reconnection: an id, no data, and how long to wait before
    // reconnecting.
    let (priming, data) = &events[0];
    assert_eq!(data, "");
    assert_eq!(answer.header("x-accel-buffering"), Some("no"));
    assert_eq!(answer.retry(), Some(500));
    let priming = priming.as_deref().expect("the priming event has an id");
    let mut ids: Vec<&str> = events
        .iter()
        .map(|(id, _)| id.as_deref().unwrap())
        .collect();
    ids.dedup();
    assert_eq!(ids.len(), events.len(), "event ids are unique: {ids:?}");
    assert!(
        ids.iter()
            .all(|id| id.split('-').next() == priming.split('-').next())
    );

    let messages: Vec<Value> = events[1..]
        .iter()
        .map(|(_, data)| serde_json::from_str(data).unwrap())
        .collect();
    for (n, message) in messages[..3].iter().enumerate() {
        assert_eq!(
            message,
            &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "p", "progress": n as f64 + 1.0, "total": 3.0}})
        );
    }
    assert_eq!(messages[3]["method"], "notifications/message");
    assert_eq!(messages[3]["params"]["data"], "counted");
    // The last event is the response; the stream ends with it.
    assert_eq!(
        messages[4],
        json!({"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", "text": "3"}]}})
    );

    // A client that negotiated 2025-06-18 gets no priming event, which it would take for a
    // broken message.
    let session = http.initialize_at("2025-06-18").await;
    let answer = http
        .in_session_at(
            &session,
            "2025-06-18",
            &json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
                "params": {"name": "count_up", "arguments": {"n": 1}}}),
        )
        .await;
    let events = answer.events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events.iter().all(|(_, data)| !data.is_empty()));
    assert_eq!(answer.retry(), None);
    http.stop().await;
}

#[tokio::test]
async fn a_cancelled_call_is_accepted_without_a_response() {
    let http = Http::start().await;
    let session = http.initialize().await;
    let call = http.call(&session, 11, json!({"name": "wait_for_cancel"}));
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        http.in_session(
            &session,
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 11, "reason": "changed my mind"}}),
        )
        .await
    };
    let (answer, cancelled) = tokio::join!(call, cancel);
    assert_eq!(cancelled.status, StatusCode::ACCEPTED);
    assert_eq!(answer.status, StatusCode::ACCEPTED);
    assert_eq!(answer.body, "");
    http.stop().await;
}

#[tokio::test]
async fn an_unsupported_protocol_version_header_is_400() {
    let http = Http::start().await;
    let session = http.initialize().await;
    for version in ["invalid-protocol-version", "2000-01-01", "2099-01-01"] {
        let answer = http.in_session_at(&session, version, &tools_list(1)).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{version}");
        assert_eq!(answer.error(), (-32600, json!(1)));
        // Before initialize too.
        let answer = http
            .post(&tools_list(1), &[("mcp-protocol-version", version)])
            .await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{version}");
    }
    for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let answer = http.in_session_at(&session, version, &tools_list(2)).await;
        assert_eq!(answer.status, StatusCode::OK, "{version}");
    }
    http.stop().await;
}

#[tokio::test]
async fn a_foreign_origin_is_403_and_a_local_one_served() {
    let http = Http::start().await;
    let answer = http
        .post(&initialize(), &[("origin", "http://evil.example.com")])
        .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(answer.error(), (-32600, Value::Null));
    assert_eq!(answer.header("mcp-session-id"), None);
    for origin in [
        "http://localhost:6274",
        "http://127.0.0.1:3000",
        "https://[::1]",
    ] {
        let answer = http.post(&initialize(), &[("origin", origin)]).await;
        assert_eq!(answer.status, StatusCode::OK, "{origin}");
    }
    http.stop().await;
}

#[tokio::test]
async fn a_foreign_host_is_403_and_localhost_served() {
    let http = Http::start().await;
    // What the conformance suite's dns-rebinding-protection scenario sends.
    let answer = http
        .post(
            &initialize(),
            &[
                ("host", "evil.example.com"),
                ("origin", "http://evil.example.com"),
            ],
        )
        .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    let answer = http
        .post(&initialize(), &[("host", "evil.example.com")])
        .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    let port = http.port;
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_owned(),
    ] {
        let answer = http.post(&initialize(), &[("host", &host)]).await;
        assert_eq!(answer.status, StatusCode::OK, "{host}");
        let origin = format!("http://{host}");
        let answer = http
            .post(&initialize(), &[("host", &host), ("origin", &origin)])
            .await;
        assert_eq!(answer.status, StatusCode::OK, "{host} from {origin}");
    }
    http.stop().await;
}

#[tokio::test]
async fn a_token_is_required_when_set() {
    let transport = Transport::new().bearer_token("s3cret-t0ken");
    let http = Http::carried(Server::new("http-tests", "0.0.1"), transport).await;
    let answer = http.post(&initialize(), &[]).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(answer.header("www-authenticate"), Some("Bearer"));
    let answer = http
        .post(
            &initialize(),
            &[("authorization", "Bearer s3cret-t0ken-not")],
        )
        .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        answer.header("www-authenticate"),
        Some(r#"Bearer error="invalid_token""#)
    );
    let answer = http
        .post(&initialize(), &[("authorization", "Bearer s3cret-t0ken")])
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let session = answer.header("mcp-session-id").unwrap().to_owned();

    // Every request needs it, the session's too.
    let answer = http.in_session(&session, &tools_list(1)).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    let answer = http
        .post(
            &tools_list(1),
            &[
                ("mcp-session-id", &session),
                ("authorization", "Bearer s3cret-t0ken"),
            ],
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let answer = http.delete(&[("mcp-session-id", &session)]).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    http.stop().await;
}

/// A client told `401` goes on to its next request on the same connection (the server's
/// metadata, under OAuth): the refused request's body is read, even when it comes after the
/// headers, so the connection carries the next one.
#[tokio::test]
async fn a_refused_request_leaves_its_connection_to_the_next() {
    let transport = Transport::new().bearer_token("s3cret-t0ken");
    let http = Http::carried(Server::new("http-tests", "0.0.1"), transport).await;
    let token = "Authorization: Bearer s3cret-t0ken\r\n";
    // Refused before the body is needed: for want of a token; for a method that carries no
    // message, whose body is not read at all; for a path nothing is served at.
    assert_eq!(
        after_a_late_body(&http, "POST /mcp", "").await,
        ["HTTP/1.1 401 Unauthorized", "HTTP/1.1 200 OK"]
    );
    assert_eq!(
        after_a_late_body(&http, "PUT /mcp", token).await,
        ["HTTP/1.1 405 Method Not Allowed", "HTTP/1.1 200 OK"]
    );
    assert_eq!(
        after_a_late_body(&http, "POST /elsewhere", token).await,
        ["HTTP/1.1 404 Not Found", "HTTP/1.1 200 OK"]
    );
    http.stop().await;
}

/// The status lines of the answers to a request (`target`: its method and path) with the
/// `extra` headers whose body arrives 100 ms after its headers, as a client's two writes may,
/// then to an authorised `initialize` sent on the same connection.
async fn after_a_late_body(http: &Http, target: &str, extra: &str) -> Vec<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = initialize().to_string();
    let head = |target: &str, extra: &str| {
        format!(
            "{target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\r\n",
            body.len()
        )
    };
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", http.port))
        .await
        .unwrap();
    socket
        .write_all(head(target, extra).as_bytes())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // A connection the server closed fails these writes: the answers read below say so.
    let _ = socket.write_all(body.as_bytes()).await;
    let next = head(
        "POST /mcp",
        "Authorization: Bearer s3cret-t0ken\r\nConnection: close\r\n",
    ) + &body;
    let _ = socket.write_all(next.as_bytes()).await;
    let mut answers = Vec::new();
    let _ = tokio::time::timeout(TIMEOUT, socket.read_to_end(&mut answers)).await;
    let answers = String::from_utf8_lossy(&answers);
    // Each answer's status line, wherever it starts: a body ends without a newline.
    answers
        .match_indices("HTTP/1.1 ")
        .filter_map(|(at, _)| answers[at..].lines().next())
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_get_opens_the_session_stream_that_tells_what_changes() {
    let server = Server::new("http-tests", "0.0.1");
    let handle = server.handle();
    let http = Http::with(server).await;
    let session = http.initialize().await;
    let stream = http
        .client
        .get(&http.url)
        .header(ACCEPT, "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    assert_eq!(
        stream.headers()[CONTENT_TYPE],
        HeaderValue::from_static("text/event-stream")
    );
    handle.disable_tool("add").unwrap();
    let events = read_events(stream, 2).await;
    // A priming event, for the client to resume from; then the change.
    assert_eq!(events[0].1, "");
    let told: Value = serde_json::from_str(&events[1].1).unwrap();
    assert_eq!(
        told,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})
    );
    let listed = http.in_session(&session, &tools_list(1)).await.json();
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"add"), "{names:?}");
    // Without a session, a GET names none.
    let answer = http.get(&[("mcp-protocol-version", "2025-11-25")]).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let answer = read(http.client.put(&http.url)).await;
    assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answer.header("allow"), Some("GET, POST, DELETE"));
    // Only `/mcp` is served.
    let other = http.url.replace("/mcp", "/other");
    assert_eq!(
        read(http.client.post(&other)).await.status,
        StatusCode::NOT_FOUND
    );
    http.stop().await;
}

#[tokio::test]
async fn subscriptions_listen_streams_what_it_asked_for_tagged_with_its_id() {
    let server = Server::new("http-tests", "0.0.1");
    let handle = server.handle();
    let http = Http::with(server).await;
    let listen = enveloped(
        41,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true}}),
    );
    let response = http
        .client
        .post(&http.url)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(listen.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    handle.disable_tool("add").unwrap();
    handle.enable_tool("add").unwrap();
    let events = read_events(response, 3).await;
    let data: Vec<Value> = events
        .iter()
        .map(|(_, data)| serde_json::from_str(data).unwrap())
        .collect();
    // This server has no prompts: the acknowledgement says what it will tell.
    assert_eq!(
        data[0],
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": 41},
            "notifications": {"toolsListChanged": true}
        }})
    );
    for told in &data[1..] {
        assert_eq!(
            *told,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": 41}
            }})
        );
    }
    // A malformed filter is refused.
    let refused = http
        .stateless(
            &enveloped(
                42,
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": 1}}),
            ),
            &[],
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        refused.json()["error"]["message"],
        "`notifications.toolsListChanged` must be a boolean, not 1"
    );
    http.stop().await;
}

#[tokio::test]
async fn an_oversized_body_is_413() {
    let http = Http::with(Server::new("http-tests", "0.0.1").max_message_size(1024)).await;
    let session = http.initialize().await;
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"pad": "x".repeat(2000)}}});
    let answer = http.in_session(&session, &big).await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(answer.error(), (-32600, Value::Null));
    assert!(
        answer.body.contains("the limit is 1024 bytes"),
        "{}",
        answer.body
    );

    // Sent in chunks, with no length announced, it is refused as it passes the limit.
    let chunks: Vec<Result<String, std::io::Error>> = vec![Ok(big.to_string())];
    let answer = read(
        http.client
            .post(&http.url)
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json")
            .header("mcp-session-id", &session)
            .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
                chunks,
            ))),
    )
    .await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        answer.body.contains("more than 1024 bytes"),
        "{}",
        answer.body
    );

    // The session goes on.
    assert_eq!(
        http.in_session(&session, &tools_list(2)).await.status,
        StatusCode::OK
    );
    http.stop().await;
}

#[tokio::test]
async fn malformed_posts_are_refused() {
    let http = Http::start().await;
    let session = http.initialize().await;
    let answer = http
        .post(&initialize(), &[("accept", "application/json")])
        .await;
    assert_eq!(answer.status, StatusCode::NOT_ACCEPTABLE);
    let answer = http
        .post(&initialize(), &[("accept", "text/event-stream")])
        .await;
    assert_eq!(answer.status, StatusCode::NOT_ACCEPTABLE);
    let answer = http
        .post(&initialize(), &[("content-type", "text/plain")])
        .await;
    assert_eq!(answer.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    // A batch, or no JSON at all: 400 with the JSON-RPC error.
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]);
    let answer = http.in_session(&session, &batch).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.error(), (-32600, Value::Null));
    let answer = read(
        http.client
            .post(&http.url)
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json")
            .header("mcp-session-id", &session)
            .body("{not json"),
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.error(), (-32700, Value::Null));
    http.stop().await;
}

#[tokio::test]
async fn stopping_lets_calls_under_way_answer() {
    let http = Http::start().await;
    let session = http.initialize().await;
    let call = http.call(
        &session,
        1,
        json!({"name": "slow", "arguments": {"ms": 400}}),
    );
    let (answer, ()) = tokio::join!(call, async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        http.signal_stop();
    });
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.json()["result"]["content"][0]["text"], "done");
    let (url, client) = (http.url.clone(), http.client.clone());
    http.stop().await;
    // No new connections once stopped.
    let refused = client.post(&url).body("{}").send().await;
    assert!(refused.is_err(), "{refused:?}");
}

#[tokio::test]
async fn calls_past_the_grace_period_are_stopped_with_an_error() {
    let server = Server::new("http-tests", "0.0.1").shutdown_grace(Duration::from_millis(200));
    let http = Http::with(server).await;
    let session = http.initialize().await;
    let call = http.call(
        &session,
        1,
        json!({"name": "slow", "arguments": {"ms": 30000}}),
    );
    let (answer, ()) = tokio::join!(call, async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        http.signal_stop();
    });
    assert_eq!(answer.error(), (-32603, json!(1)));
    let started = std::time::Instant::now();
    http.stop().await;
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_tool_that_ends_its_stream_is_resumed_with_last_event_id() {
    let http = Http::start().await;
    let session = http.initialize().await;
    let answer = http
        .call(
            &session,
            21,
            json!({"name": "poll_later", "arguments": {"ms": 300}}),
        )
        .await;
    // The stream ends after the priming event and the message sent before the tool ended it.
    assert_eq!(answer.retry(), Some(500));
    let events = answer.events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0].1, "");
    let message: Value = serde_json::from_str(&events[1].1).unwrap();
    assert_eq!(message["params"]["data"], "before");
    let last = events[1].0.clone().unwrap();

    // The call went on: resuming after the last event received gives the rest, to the response.
    let resumed = http
        .get(&[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
            ("last-event-id", &last),
        ])
        .await;
    assert_eq!(resumed.status, StatusCode::OK);
    let rest = resumed.events();
    assert_eq!(rest.len(), 2, "{rest:?}");
    let stream = |id: &Option<String>| id.as_deref().unwrap().split('-').next().unwrap().to_owned();
    assert!(
        rest.iter()
            .all(|(id, _)| stream(id) == stream(&events[0].0))
    );
    let after: Value = serde_json::from_str(&rest[0].1).unwrap();
    assert_eq!(after["params"]["data"], "after");
    assert_eq!(
        serde_json::from_str::<Value>(&rest[1].1).unwrap(),
        json!({"jsonrpc": "2.0", "id": 21,
            "result": {"content": [{"type": "text", "text": "answered"}]}})
    );

    // Delivered whole, the stream is still kept in the session store, for a client that lost
    // the end of what was sent: resuming again gives the same events.
    let again = http
        .get(&[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
            ("last-event-id", &last),
        ])
        .await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.events(), rest);
    // An event of no stream of the session is refused.
    let unknown = http
        .get(&[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-11-25"),
            ("last-event-id", "7-0"),
        ])
        .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert_eq!(unknown.error(), (-32600, Value::Null));
    http.stop().await;
}

#[tokio::test]
async fn a_client_that_disconnects_resumes_where_it_stopped() {
    let http = Http::start().await;
    let session = http.initialize().await;
    let response = http
        .client
        .post(&http.url)
        .header(ACCEPT, ACCEPT_BOTH)
        .header(CONTENT_TYPE, "application/json")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(
            json!({"jsonrpc": "2.0", "id": 22, "method": "tools/call",
                "params": {"name": "poll_later", "arguments": {"ms": 0}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    // The client goes away after the priming event: that is no cancellation.
    let events = read_events(response, 1).await;
    let priming = events[0].0.clone().unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let resumed = http
        .get(&[("mcp-session-id", &session), ("last-event-id", &priming)])
        .await;
    let datas: Vec<Value> = resumed
        .events()
        .iter()
        .map(|(_, data)| serde_json::from_str(data).unwrap())
        .collect();
    assert_eq!(datas.len(), 3, "{datas:?}");
    assert_eq!(datas[0]["params"]["data"], "before");
    assert_eq!(datas[1]["params"]["data"], "after");
    assert_eq!(datas[2]["result"]["content"][0]["text"], "answered");
    http.stop().await;
}

#[tokio::test]
async fn a_resumption_names_a_stream_of_the_session() {
    let http = Http::start().await;
    let session = http.initialize().await;
    let other = http.initialize().await;
    let answer = http
        .call(
            &session,
            1,
            json!({"name": "poll_later", "arguments": {"ms": 2000}}),
        )
        .await;
    let last = answer.events()[1].0.clone().unwrap();

    // Another session's event, an id never issued, a malformed one: 400.
    for (sid, id) in [
        (other.as_str(), last.as_str()),
        (&session, "999999-0"),
        (&session, "not-an-id"),
    ] {
        let answer = http
            .get(&[("mcp-session-id", sid), ("last-event-id", id)])
            .await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{sid} {id}");
    }
    // No session, an unknown session, no Accept for events.
    let answer = http.get(&[("last-event-id", &last)]).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let answer = http
        .get(&[("mcp-session-id", "gone"), ("last-event-id", &last)])
        .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    let answer = read(
        http.client
            .get(&http.url)
            .header(ACCEPT, "application/json")
            .header("mcp-session-id", &session)
            .header("last-event-id", &last),
    )
    .await;
    assert_eq!(answer.status, StatusCode::NOT_ACCEPTABLE);
    http.stop().await;
}

#[tokio::test]
async fn a_client_before_2025_11_25_gets_its_stream_whole() {
    let http = Http::start().await;
    let session = http.initialize_at("2025-06-18").await;
    let answer = http
        .in_session_at(
            &session,
            "2025-06-18",
            &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "poll_later", "arguments": {"ms": 10}}}),
        )
        .await;
    // It could not resume: the request to end the stream is ignored.
    let events = answer.events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(events[2].1.contains("answered"), "{events:?}");
    assert_eq!(answer.retry(), None);
    http.stop().await;
}

#[tokio::test]
async fn a_2026_request_is_served_without_a_session() {
    let http = Http::start().await;
    let answer = http
        .stateless(&enveloped(1, "server/discover", json!({})), &[])
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{answer:?}");
    assert_eq!(answer.header("mcp-session-id"), None);
    let result = &answer.json()["result"];
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "http-tests"
    );

    let answer = http
        .stateless(&enveloped(2, "tools/list", json!({})), &[])
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.json()["result"]["cacheScope"], "public");
    assert_eq!(
        answer.json()["result"]["tools"].as_array().unwrap().len(),
        11
    );

    let call = enveloped(
        3,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
    );
    let answer = http.stateless(&call, &[]).await;
    assert_eq!(
        answer.json(),
        json!({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "{\"sum\":3}"}],
            "structuredContent": {"sum": 3},
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "http-tests", "version": "0.0.1"}},
        }})
    );

    // A session id is no part of the era: it is ignored, and none is issued.
    let answer = http
        .stateless(&call, &[("mcp-session-id", "not-a-session")])
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header("mcp-session-id"), None);

    // A call that reports progress answers with events: no ids, no priming, the response last.
    let mut call = enveloped(
        4,
        "tools/call",
        json!({"name": "count_up", "arguments": {"n": 2}}),
    );
    call["params"]["_meta"]["progressToken"] = json!(7);
    let answer = http.stateless(&call, &[]).await;
    let events = answer.events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(events.iter().all(|(id, _)| id.is_none()), "{events:?}");
    let last: Value = serde_json::from_str(&events[2].1).unwrap();
    assert_eq!(last["result"]["content"][0]["text"], "2");
    assert_eq!(last["result"]["resultType"], "complete");

    // The era has no GET stream and no sessions to DELETE.
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let answer = read(
            http.client
                .request(method.clone(), &http.url)
                .header(ACCEPT, "text/event-stream")
                .header("mcp-protocol-version", "2026-07-28"),
        )
        .await;
        assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(answer.header("allow"), Some("POST"), "{method}");
    }

    // A notification is taken and dropped.
    let answer = http
        .post(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}}),
            &[("mcp-protocol-version", "2026-07-28")],
        )
        .await;
    assert_eq!(answer.status, StatusCode::ACCEPTED);
    assert_eq!(answer.body, "");
    http.stop().await;
}

#[tokio::test]
async fn headers_that_do_not_mirror_the_body_are_400() {
    let http = Http::start().await;
    let call = enveloped(
        5,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
    );
    for headers in [
        [("mcp-protocol-version", "")],
        [("mcp-protocol-version", "2025-11-25")],
        [("mcp-method", "")],
        [("mcp-method", "tools/list")],
        [("mcp-name", "")],
        [("mcp-name", "slow")],
        [("mcp-name", "=?base64?c2xvdw==?=")],
        [("mcp-name", "=?base64?not base64?=")],
    ] {
        let answer = http.stateless(&call, &headers).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{headers:?}");
        assert_eq!(answer.error(), (-32020, json!(5)), "{headers:?}");
    }
    // The name may come base64-encoded.
    let answer = http
        .stateless(&call, &[("mcp-name", "=?base64?YWRk?=")])
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{answer:?}");

    // A header sent twice is refused too.
    let answer = read(
        http.client
            .post(&http.url)
            .header(ACCEPT, ACCEPT_BOTH)
            .header(CONTENT_TYPE, "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "add")
            .header("mcp-name", "add")
            .body(call.to_string()),
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.error().0, -32020);
    http.stop().await;
}

#[tokio::test]
async fn versions_methods_and_envelopes_are_checked_in_the_2026_era() {
    let http = Http::start().await;
    // A version this server does not speak: 400, with the versions it does.
    let mut discover = enveloped(6, "server/discover", json!({}));
    discover["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let answer = http
        .stateless(&discover, &[("mcp-protocol-version", "2099-01-01")])
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.error(), (-32022, json!(6)));
    assert_eq!(
        answer.json()["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2099-01-01"})
    );

    // A method this server does not serve: 404 with -32601.
    for method in ["prompts/list", "ping", "initialize/nope"] {
        let answer = http.stateless(&enveloped(7, method, json!({})), &[]).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{method}");
        assert_eq!(answer.error(), (-32601, json!(7)), "{method}");
    }

    // The era's header on a request without the envelope: 400 naming what is missing.
    let answer = http
        .post(
            &tools_list(8),
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/list"),
            ],
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.error(), (-32602, json!(8)));
    assert!(answer.body.contains("protocolVersion"), "{}", answer.body);

    // An unknown tool is a protocol error: 400 with -32602.
    let call = enveloped(9, "tools/call", json!({"name": "nope", "arguments": {}}));
    let answer = http.stateless(&call, &[]).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.error(), (-32602, json!(9)));

    // The handshake era goes on beside it.
    let session = http.initialize().await;
    let answer = http.in_session(&session, &tools_list(10)).await;
    assert_eq!(answer.status, StatusCode::OK);
    http.stop().await;
}

#[tokio::test]
async fn initialize_under_the_2026_header_is_not_found_with_its_id() {
    let http = Http::start().await;
    let mut request = initialize();
    request["id"] = json!("init-1");
    let answer = http
        .post(&request, &[("mcp-protocol-version", "2026-07-28")])
        .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(answer.error(), (-32601, json!("init-1")));
    assert!(
        answer
            .body
            .contains("`initialize` is not a method of protocol 2026-07-28"),
        "{}",
        answer.body
    );
    assert!(answer.headers.get("mcp-session-id").is_none());
    http.stop().await;
}

#[tokio::test]
async fn ids_come_back_as_written_and_unreadable_requests_keep_theirs() {
    let http = Http::start().await;
    let session = http.initialize().await;
    let raw = |body: String| {
        http.client
            .post(&http.url)
            .header(ACCEPT, ACCEPT_BOTH)
            .header(CONTENT_TYPE, "application/json")
            .header("mcp-session-id", session.as_str())
            .body(body)
    };
    // An id beyond 64 bits is answered as written, not as a float.
    let big = "123456789012345678901234567890";
    let answer = read(raw(format!(
        r#"{{"jsonrpc":"2.0","id":{big},"method":"tools/list"}}"#
    )))
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(
        answer.body.contains(&format!(r#""id":{big},"#)),
        "{}",
        answer.body
    );
    // Valid JSON the parser does not take: the answer carries the request's id.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{{"name":"add","arguments":{{"a":{}0{}}}}}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    let answer = read(raw(deep)).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.error(), (-32700, json!("deep")));
    let lone = r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"add","arguments":{"a":"\ud800"}}}"#;
    let answer = read(raw(lone.to_owned())).await;
    assert_eq!(answer.error(), (-32700, json!(12)));
    // The session goes on.
    assert_eq!(
        http.in_session(&session, &tools_list(13)).await.status,
        StatusCode::OK
    );
    http.stop().await;
}

/// Waits (two seconds at most) until the call of `hold` given `key` ends.
async fn cancelled(key: &str) -> bool {
    for _ in 0..100 {
        if tools::ENDED.lock().unwrap().iter().any(|k| k == key) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn closing_a_2026_stream_cancels_the_call() {
    let http = Http::start().await;
    let mut call = enveloped(
        11,
        "tools/call",
        json!({"name": "hold", "arguments": {"key": "streamed"}}),
    );
    call["params"]["_meta"]["progressToken"] = json!("p");
    let response = http
        .client
        .post(&http.url)
        .header(ACCEPT, ACCEPT_BOTH)
        .header(CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "hold")
        .body(call.to_string())
        .send()
        .await
        .unwrap();
    let events = read_events(response, 1).await;
    assert!(events[0].1.contains("notifications/progress"), "{events:?}");
    assert!(cancelled("streamed").await, "the call was not cancelled");

    // Before the answer has begun, going away cancels the call too.
    let call = enveloped(
        12,
        "tools/call",
        json!({"name": "hold", "arguments": {"key": "quiet"}}),
    );
    let gone = http
        .client
        .post(&http.url)
        .timeout(Duration::from_millis(300))
        .header(ACCEPT, ACCEPT_BOTH)
        .header(CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "hold")
        .body(call.to_string())
        .send()
        .await;
    assert!(gone.is_err(), "{gone:?}");
    assert!(cancelled("quiet").await, "the call was not cancelled");

    // In the handshake era going away is no cancellation.
    let session = http.initialize().await;
    let gone = http
        .client
        .post(&http.url)
        .timeout(Duration::from_millis(300))
        .header(ACCEPT, ACCEPT_BOTH)
        .header(CONTENT_TYPE, "application/json")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(
            json!({"jsonrpc": "2.0", "id": 13, "method": "tools/call",
                "params": {"name": "hold", "arguments": {"key": "kept"}}})
            .to_string(),
        )
        .send()
        .await;
    assert!(gone.is_err(), "{gone:?}");
    assert!(!cancelled("kept").await, "the call was cancelled");
    http.stop().await;
}

#[tokio::test]
async fn mirrored_arguments_must_match_their_headers() {
    let http = Http::start().await;
    let call = |arguments: Value| {
        enveloped(
            7,
            "tools/call",
            json!({"name": "forecast", "arguments": arguments}),
        )
    };
    let listed = http
        .stateless(&enveloped(1, "tools/list", json!({})), &[])
        .await
        .json();
    let forecast = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "forecast")
        .unwrap()
        .clone();
    assert_eq!(
        forecast["inputSchema"]["properties"]["region"]["x-mcp-header"],
        "Region"
    );
    let ok =
        |answer: &Answer| answer.status == StatusCode::OK && answer.json()["result"].is_object();
    // As the client sends them: plain, in base64, with the integer as decimal digits.
    for (arguments, headers) in [
        (
            json!({"region": "Paris"}),
            vec![("mcp-param-region", "Paris")],
        ),
        (
            json!({"region": "Zürich"}),
            vec![("Mcp-Param-Region", "=?base64?WsO8cmljaA==?=")],
        ),
        (
            json!({"region": "Oslo", "days": 3}),
            vec![("mcp-param-region", "Oslo"), ("mcp-param-days", "3")],
        ),
    ] {
        let answer = http.stateless(&call(arguments.clone()), &headers).await;
        assert!(ok(&answer), "{arguments} {headers:?}: {answer:?}");
    }
    for (arguments, headers, message) in [
        (
            json!({"region": "Paris"}),
            vec![],
            "header `Mcp-Param-Region` is missing: it mirrors the argument `region`, which is \"Paris\"",
        ),
        (
            json!({"region": "Paris"}),
            vec![("mcp-param-region", "Lyon")],
            "header `Mcp-Param-Region` (`Lyon`) does not match the argument `region` it mirrors \
             (\"Paris\")",
        ),
        (
            json!({"region": "Paris"}),
            vec![("mcp-param-region", "=?base64?UGFyaXM?=")],
            "header `Mcp-Param-Region` holds `=?base64?...?=` around what is not canonical \
             base64 of UTF-8",
        ),
        (
            json!({"region": "Oslo", "days": 3}),
            vec![("mcp-param-region", "Oslo"), ("mcp-param-days", "4")],
            "header `Mcp-Param-Days` (`4`) does not match the argument `days` it mirrors (3)",
        ),
        (
            json!({"region": "Oslo"}),
            vec![("mcp-param-region", "Oslo"), ("mcp-param-days", "4")],
            "header `Mcp-Param-Days` is sent, but the argument `days` it mirrors is not",
        ),
    ] {
        let answer = http.stateless(&call(arguments.clone()), &headers).await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{arguments} {headers:?}"
        );
        assert_eq!(answer.error(), (-32020, json!(7)));
        assert_eq!(answer.json()["error"]["message"], message);
    }
    http.stop().await;
}

#[tokio::test]
async fn a_listen_stream_takes_no_call_slot_and_ends_answered_when_the_server_stops() {
    let http = Http::with(Server::new("http-tests", "0.0.1").max_concurrent_calls(1)).await;
    let listen = enveloped(
        9,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let stream = http
        .client
        .post(&http.url)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(listen.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    // The one call slot is free: the stream does not hold it.
    let add = enveloped(
        10,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    let answer = http.stateless(&add, &[]).await;
    assert_eq!(
        answer.json()["result"]["structuredContent"],
        json!({"sum": 5})
    );
    http.signal_stop();
    let events = read_events(stream, 2).await;
    let end: Value = serde_json::from_str(&events[1].1).unwrap();
    assert_eq!(end["id"], 9);
    assert_eq!(
        end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 9,
        "{end}"
    );
    assert_eq!(end["result"]["resultType"], "complete");
    http.stop().await;
}

#[tokio::test]
async fn a_session_stream_tells_the_resources_the_session_subscribed_to() {
    let server = Server::new("http-tests", "0.0.1");
    let handle = server.handle();
    let http = Http::with(server).await;
    let session = http.initialize().await;
    let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe",
                           "params": {"uri": "weather://now"}});
    let answer = http.in_session(&session, &subscribe).await;
    assert_eq!(answer.json()["result"], json!({}));
    let stream = http
        .client
        .get(&http.url)
        .header(ACCEPT, "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    handle.resource_updated("weather://later");
    handle.resource_updated("weather://now");
    let events = read_events(stream, 2).await;
    let told: Value = serde_json::from_str(&events[1].1).unwrap();
    assert_eq!(
        told,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"uri": "weather://now"}})
    );
    http.stop().await;
}

/// Sends `request` as written on a connection of its own, and reads the status line back.
async fn raw_status(port: u16, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(TIMEOUT, socket.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    answer.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn the_host_is_named_once_and_by_the_request_line_too() {
    let http = Http::start().await;
    let body = initialize().to_string();
    let request = |target: &str, hosts: &[&str]| {
        let hosts: String = hosts.iter().map(|h| format!("Host: {h}\r\n")).collect();
        format!(
            "POST {target} HTTP/1.1\r\n{hosts}Content-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nConnection: close\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    assert_eq!(
        raw_status(http.port, &request("/mcp", &["localhost"])).await,
        "HTTP/1.1 200 OK"
    );
    // A second `Host` header, as a rebinding page might add behind a proxy.
    assert_eq!(
        raw_status(
            http.port,
            &request("/mcp", &["localhost", "evil.example.com"])
        )
        .await,
        "HTTP/1.1 400 Bad Request"
    );
    // The request line names another host than the `Host` header.
    let target = "http://evil.example.com/mcp";
    assert_eq!(
        raw_status(http.port, &request(target, &["localhost"])).await,
        "HTTP/1.1 400 Bad Request"
    );
    http.stop().await;
}

#[tokio::test]
async fn idle_and_slow_connections_cannot_keep_a_client_out() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let timeout = Duration::from_millis(400);
    let transport = Transport::new()
        .max_connections(4)
        .timeouts(timeout, timeout);
    let http = Http::carried(Server::new("http-tests", "0.0.1"), transport).await;
    let connect = || tokio::net::TcpStream::connect(("127.0.0.1", http.port));
    // Connections that send nothing, half a request line, or headers and then a body that never
    // comes: three times the ceiling.
    let mut held = Vec::new();
    for n in 0..12 {
        let mut socket = connect().await.unwrap();
        match n % 3 {
            0 => {}
            1 => socket.write_all(b"POST /mcp HTT").await.unwrap(),
            _ => socket
                .write_all(
                    b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
                      Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{",
                )
                .await
                .unwrap(),
        }
        held.push(socket);
    }
    // A client that sends its request at once is served all the same.
    let answer = http.post(&initialize(), &[]).await;
    assert_eq!(answer.status, StatusCode::OK, "{answer:?}");
    // Past the deadlines, each held connection is closed: a body too slow with `408`.
    let mut statuses = Vec::new();
    for mut socket in held {
        let mut read = Vec::new();
        let closed = tokio::time::timeout(TIMEOUT, socket.read_to_end(&mut read)).await;
        assert!(closed.is_ok(), "a held connection was left open");
        let text = String::from_utf8_lossy(&read).into_owned();
        statuses.push(text.lines().next().unwrap_or("closed").to_owned());
    }
    assert!(
        statuses
            .iter()
            .all(|s| s == "closed" || s.starts_with("HTTP/1.1 408")),
        "{statuses:?}"
    );
    http.stop().await;
}

#[tokio::test]
async fn when_every_connection_works_a_new_one_is_refused_with_503() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let transport = Transport::new().max_connections(1);
    let http = Http::carried(Server::new("http-tests", "0.0.1"), transport).await;
    let session = http.initialize().await;
    // The one connection holds a call under way.
    let slow = http.call(
        &session,
        1,
        json!({"name": "slow", "arguments": {"ms": 1500}}),
    );
    let refused = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", http.port))
            .await
            .unwrap();
        let _ = socket
            .write_all(b"GET /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await;
        let mut read = Vec::new();
        let _ = tokio::time::timeout(TIMEOUT, socket.read_to_end(&mut read)).await;
        String::from_utf8_lossy(&read).into_owned()
    };
    let (answer, refusal) = tokio::join!(slow, refused);
    assert_eq!(answer.status, StatusCode::OK);
    assert!(
        refusal.starts_with("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"),
        "{refusal}"
    );
    http.stop().await;
}

#[tokio::test]
async fn a_client_keeps_at_most_its_streams_and_its_sessions() {
    let transport = Transport::new()
        .max_sessions_per_client(2)
        .max_streams_per_client(2);
    let http = Http::carried(Server::new("http-tests", "0.0.1"), transport).await;
    let first = http.initialize().await;
    let second = http.initialize().await;
    let own_stream = |session: &str| {
        http.client
            .get(&http.url)
            .header(ACCEPT, "text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
    };
    let one = own_stream(&first).await.unwrap();
    let two = own_stream(&second).await.unwrap();
    assert_eq!(
        (one.status(), two.status()),
        (StatusCode::OK, StatusCode::OK)
    );
    // A third stream, of another kind, is refused under the request's id.
    let listen = enveloped(
        7,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let refused = http.stateless(&listen, &[]).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        refused.json()["error"]["message"],
        "this client has 2 streams open, the most it may: close one (or end a session) before \
         opening another"
    );
    assert_eq!(refused.error(), (-32600, json!(7)));
    // A session opens its own stream again in the place it has.
    drop(one);
    let again = own_stream(&first).await.unwrap();
    assert_eq!(again.status(), StatusCode::OK);
    // Calls are not streams: they are served.
    let answer = http
        .call(
            &second,
            3,
            json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        )
        .await;
    assert_eq!(
        answer.json()["result"]["structuredContent"],
        json!({"sum": 3})
    );
    // A third session ends this client's session unused the longest, and its stream with it.
    let third = http.initialize().await;
    let ended = http.in_session(&first, &tools_list(4)).await;
    assert_eq!(ended.status, StatusCode::NOT_FOUND, "{ended:?}");
    assert_eq!(
        http.in_session(&second, &tools_list(5)).await.status,
        StatusCode::OK
    );
    let listening = http
        .client
        .post(&http.url)
        .header(ACCEPT, ACCEPT_BOTH)
        .header(CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(listen.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(
        listening.status(),
        StatusCode::OK,
        "the ended session's place is free"
    );
    drop((again, two, listening, third));
    http.stop().await;
}

/// A request of a session at 2025-11-25.
fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn a_task_is_its_sessions_alone() {
    let http = Http::start().await;
    let mine = http.initialize().await;
    let theirs = http.initialize().await;
    let created = http
        .call(
            &mine,
            1,
            json!({"name": "nap", "arguments": {"ms": 50}, "task": {"ttl": 60000}}),
        )
        .await
        .json();
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    for (id, method) in [(2, "tasks/get"), (3, "tasks/result"), (4, "tasks/cancel")] {
        let refused = http
            .in_session(&theirs, &rpc(id, method, json!({"taskId": task})))
            .await
            .json();
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
        assert_eq!(
            refused["error"]["message"],
            format!(
                "unknown task `{task}`: it does not exist, it was forgotten after its TTL, or \
                 it is not yours"
            )
        );
    }
    let listed = http
        .in_session(&theirs, &rpc(5, "tasks/list", json!({})))
        .await
        .json();
    assert_eq!(listed["result"]["tasks"], json!([]));
    let result = http
        .in_session(&mine, &rpc(6, "tasks/result", json!({"taskId": task})))
        .await;
    let answer = result.json();
    assert_eq!(
        answer["result"]["content"][0]["text"], "slept 50 ms",
        "{answer}"
    );
    http.stop().await;
}

#[tokio::test]
async fn a_tasks_question_goes_out_on_the_stream_of_its_tasks_result() {
    let http = Http::start().await;
    let mut opening = initialize();
    opening["params"]["capabilities"] = json!({"elicitation": {}});
    let answer = http.post(&opening, &[]).await;
    let session = answer.header("mcp-session-id").unwrap().to_owned();
    let created = http
        .call(
            &session,
            1,
            json!({"name": "ask_name", "arguments": {}, "task": {"ttl": 60000}}),
        )
        .await
        .json();
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    // The call's own stream ended with the task's creation: the question waits for a stream.
    let mut status = Value::Null;
    for id in 2..100 {
        let got = http
            .in_session(&session, &rpc(id, "tasks/get", json!({"taskId": task})))
            .await
            .json();
        status = got["result"]["status"].clone();
        if status == "input_required" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, "input_required");
    // `tasks/result` opens one: the question comes on it, naming the task.
    let waiting = http
        .client
        .post(&http.url)
        .header(ACCEPT, ACCEPT_BOTH)
        .header(CONTENT_TYPE, "application/json")
        .header("mcp-session-id", session.as_str())
        .header("mcp-protocol-version", "2025-11-25")
        .body(rpc(100, "tasks/result", json!({"taskId": task})).to_string())
        .send()
        .await
        .unwrap();
    let mut waiting = waiting;
    let mut text = String::new();
    let question = loop {
        let chunk = waiting.chunk().await.unwrap().expect("the question comes");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
        let found = text
            .split("\n\n")
            .filter_map(|event| event.lines().find_map(|l| l.strip_prefix("data: ")))
            .filter_map(|data| serde_json::from_str::<Value>(data).ok())
            .find(|message| message["method"] == "elicitation/create");
        if let Some(found) = found {
            break found;
        }
    };
    assert_eq!(
        question["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": task})
    );
    let answered = http
        .in_session(
            &session,
            &json!({"jsonrpc": "2.0", "id": question["id"],
                    "result": {"action": "accept", "content": {"name": "Ada"}}}),
        )
        .await;
    assert_eq!(answered.status, StatusCode::ACCEPTED);
    let rest = waiting.text().await.unwrap();
    let result = rest
        .split("\n\n")
        .filter_map(|event| event.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|message| message["id"] == 100)
        .expect("tasks/result answers once the task ends");
    assert_eq!(
        result["result"]["content"][0]["text"], "hello \"Ada\"",
        "{result}"
    );
    http.stop().await;
}

#[tokio::test]
async fn a_call_knows_the_address_it_came_from_and_is_limited_by_it() {
    let limit = toolwright::pipeline::RateLimit::per_caller(2, Duration::from_secs(60));
    let http = Http::with(Server::new("http-tests", "0.0.1").layer(limit)).await;
    let session = http.initialize().await;
    let answer = http
        .call(
            &session,
            1,
            json!({"name": "client_address", "arguments": {}}),
        )
        .await;
    assert_eq!(answer.json()["result"]["content"][0]["text"], "127.0.0.1");
    // A 2026-07-28 request from the same address counts against the same budget.
    let body = enveloped(
        2,
        "tools/call",
        json!({"name": "client_address", "arguments": {}}),
    );
    let headers = [("mcp-method", "tools/call"), ("mcp-name", "client_address")];
    let answer = http.stateless(&body, &headers).await;
    assert_eq!(answer.json()["result"]["content"][0]["text"], "127.0.0.1");
    // Refused as a whole request: 429, and when to come back.
    let answer = http.stateless(&body, &headers).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(answer.header("retry-after"), Some("30"));
    let error = &answer.json()["error"];
    assert_eq!(error["code"], toolwright::pipeline::RATE_LIMITED, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("rate limit reached: at most 2 calls every 1m for each caller"),
        "{error}"
    );
    // In a session, the call is refused, not the request: a JSON-RPC error in a 200.
    let answer = http
        .call(
            &session,
            4,
            json!({"name": "client_address", "arguments": {}}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.json()["error"]["code"],
        toolwright::pipeline::RATE_LIMITED
    );
    http.stop().await;
}
