//! Requests a tool sends to the client (`sampling/createMessage`, `elicitation/create`), with
//! the test playing the client: it reads the server's request, checks it, and answers.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use toolwright::Server;
use toolwright::registry::Registry;
use toolwright_tests::stdio::{Client, TIMEOUT};

mod tools {
    use serde_json::{Value, json};
    use toolwright::context::{ClientRequestError, ElicitAction, Elicitation};
    use toolwright::{Context, mcp_tool};

    /// Ask the client's model a question; returns its answer.
    #[mcp_tool]
    async fn ask_model(
        ctx: &Context,
        /// The question.
        prompt: String,
    ) -> Result<String, ClientRequestError> {
        ctx.sample_text(&prompt, 100).await
    }

    /// Ask the user for their name and email.
    #[mcp_tool]
    async fn ask_user(
        ctx: &Context,
        /// What to tell the user.
        message: String,
    ) -> Result<String, ClientRequestError> {
        let form = json!({
            "type": "object",
            "properties": {
                "username": {"type": "string"},
                "email": {"type": "string", "format": "email"}
            },
            "required": ["username", "email"]
        });
        let result = ctx.elicit(Elicitation::with_schema(message, form)).await?;
        let field = |name: &str| {
            let content = result.content().and_then(|content| content.get(name));
            content.and_then(Value::as_str).unwrap_or("?").to_owned()
        };
        Ok(match result.action() {
            ElicitAction::Accept => {
                format!("accepted: {} <{}>", field("username"), field("email"))
            }
            other => format!("the user chose to {other}"),
        })
    }

    /// Ask the client's model, or say so when it cannot be asked.
    #[mcp_tool]
    async fn ask_or_guess(ctx: &Context) -> String {
        ctx.sample_text("Hi", 10)
            .await
            .unwrap_or_else(|error| format!("guessed, since {error}"))
    }

    /// Say who the client is and what it can do.
    #[mcp_tool]
    fn whoami(ctx: Context) -> String {
        let name = ctx.client_info().map_or(Value::Null, |i| i["name"].clone());
        let capabilities = ctx.client_capabilities().cloned().unwrap_or(Value::Null);
        format!("{name} {capabilities}")
    }
}

/// A client that declared `capabilities` in `initialize`.
async fn initialized(capabilities: Value) -> Client {
    initialized_with(Server::new("test-server", "0.0.1"), capabilities).await
}

/// A client of `server` that declared `capabilities` in `initialize`.
async fn initialized_with(server: Server, capabilities: Value) -> Client {
    let mut client = Client::with(server);
    client
        .initialize_with(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "client-requests-tests", "version": "1.0.0"}
        }))
        .await;
    client
}

fn response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

fn tool_error(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

fn sampled(text: &str) -> Value {
    json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": "test-model",
        "stopReason": "endTurn"
    })
}

#[tokio::test]
async fn a_tool_samples_the_clients_model_and_returns_the_text() {
    let mut client = initialized(json!({"sampling": {}})).await;
    client
        .send_call(1, "ask_model", json!({"prompt": "What is 2 + 2?"}))
        .await;
    let request = client.recv().await;
    assert_eq!(
        request,
        json!({
            "jsonrpc": "2.0",
            "id": "tw-1",
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "What is 2 + 2?"}}],
                "maxTokens": 100
            }
        })
    );
    client.send(response(json!("tw-1"), sampled("4"))).await;
    assert_eq!(client.recv().await, response(json!(1), text_result("4")));

    // The next request of the session gets the next id.
    client
        .send_call(2, "ask_model", json!({"prompt": "And 3 + 3?"}))
        .await;
    assert_eq!(client.recv().await["id"], "tw-2");
    client.send(response(json!("tw-2"), sampled("6"))).await;
    assert_eq!(client.recv().await, response(json!(2), text_result("6")));
    assert_eq!(client.finish().await, Vec::<Value>::new());
}

#[tokio::test]
async fn a_tool_elicits_input_from_the_user() {
    let mut client = initialized(json!({"elicitation": {}})).await;
    client
        .send_call(1, "ask_user", json!({"message": "Who are you?"}))
        .await;
    let request = client.recv().await;
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Who are you?");
    assert_eq!(
        request["params"]["requestedSchema"]["required"],
        json!(["username", "email"])
    );
    client
        .send(response(
            request["id"].clone(),
            json!({"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}),
        ))
        .await;
    assert_eq!(
        client.recv().await,
        response(json!(1), text_result("accepted: ada <ada@example.com>"))
    );

    client
        .send_call(2, "ask_user", json!({"message": "Who are you?"}))
        .await;
    let request = client.recv().await;
    client
        .send(response(
            request["id"].clone(),
            json!({"action": "decline"}),
        ))
        .await;
    assert_eq!(
        client.recv().await,
        response(json!(2), text_result("the user chose to decline"))
    );
    assert_eq!(client.finish().await, Vec::<Value>::new());
}

#[tokio::test]
async fn the_context_sees_what_the_client_declared() {
    let mut client = initialized(json!({"sampling": {}, "roots": {}})).await;
    client.send_call(1, "whoami", json!({})).await;
    assert_eq!(
        client.recv().await,
        response(
            json!(1),
            text_result(r#""client-requests-tests" {"roots":{},"sampling":{}}"#)
        )
    );
    client.finish().await;
}

#[tokio::test]
async fn without_the_capability_no_request_is_sent_and_the_tool_is_told_why() {
    let mut client = initialized(json!({"sampling": {}})).await;
    client
        .send_call(1, "ask_user", json!({"message": "Who are you?"}))
        .await;
    // The first thing written is the call's result: no request went out.
    assert_eq!(
        client.recv().await,
        response(
            json!(1),
            tool_error(
                "the client did not declare the `elicitation` capability, so \
                 `elicitation/create` cannot be sent to it"
            )
        )
    );
    let mut client = initialized(json!({})).await;
    client
        .send_call(1, "ask_model", json!({"prompt": "Hi"}))
        .await;
    assert_eq!(
        client.recv().await,
        response(
            json!(1),
            tool_error(
                "the client did not declare the `sampling` capability, so \
                 `sampling/createMessage` cannot be sent to it"
            )
        )
    );
    client.finish().await;
}

#[tokio::test]
async fn a_client_error_reaches_the_tool_with_its_code_and_message() {
    let mut client = initialized(json!({"sampling": {}})).await;
    client
        .send_call(1, "ask_model", json!({"prompt": "Hi"}))
        .await;
    let request = client.recv().await;
    client
        .send(json!({"jsonrpc": "2.0", "id": request["id"],
            "error": {"code": -1, "message": "User rejected sampling request"}}))
        .await;
    assert_eq!(
        client.recv().await,
        response(
            json!(1),
            tool_error("the client answered with error -1: User rejected sampling request")
        )
    );
    client.finish().await;
}

#[tokio::test]
async fn cancelling_a_waiting_call_withdraws_its_request() {
    let mut client = initialized(json!({"sampling": {}})).await;
    client
        .send_call(7, "ask_model", json!({"prompt": "Hi"}))
        .await;
    let request = client.recv().await;
    assert_eq!(request["id"], "tw-1");
    client
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7}}),
        )
        .await;
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "tw-1", "reason": "the tool call no longer waits for it"}})
    );
    // A late answer is dropped; the cancelled call sends no response, and the session goes on.
    client.send(response(json!("tw-1"), sampled("late"))).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}))
        .await;
    assert_eq!(client.recv().await, response(json!(8), json!({})));
    assert_eq!(client.finish().await, Vec::<Value>::new());
}

#[tokio::test]
async fn an_unanswered_request_times_out() {
    let server =
        Server::new("test-server", "0.0.1").client_request_timeout(Duration::from_millis(50));
    let mut client = initialized_with(server, json!({"sampling": {}})).await;
    client
        .send_call(1, "ask_model", json!({"prompt": "Hi"}))
        .await;
    assert_eq!(client.recv().await["method"], "sampling/createMessage");
    let withdrawn = client.recv().await;
    assert_eq!(withdrawn["method"], "notifications/cancelled");
    assert_eq!(withdrawn["params"]["requestId"], "tw-1");
    assert_eq!(
        client.recv().await,
        response(
            json!(1),
            tool_error("the client did not answer within 50ms")
        )
    );
    client.finish().await;
}

#[tokio::test]
async fn a_closed_connection_ends_the_wait() {
    let mut client = initialized(json!({"sampling": {}})).await;
    client
        .send_call(1, "ask_model", json!({"prompt": "Hi"}))
        .await;
    assert_eq!(client.recv().await["method"], "sampling/createMessage");
    // The input closes; the call still answers, within the grace period.
    assert_eq!(
        client.finish().await,
        vec![response(
            json!(1),
            tool_error("the client went away before it answered")
        )]
    );
}

#[tokio::test]
async fn protocol_2026_07_28_refuses_a_call_that_fails_for_a_capability_not_declared() {
    let mut client = Client::with(Server::new("test-server", "0.0.1"));
    let call = |id: u64, name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }})
    };
    client
        .send(call(1, "ask_model", json!({"prompt": "Hi"})))
        .await;
    let answer = client.recv().await;
    assert_eq!(
        answer["error"],
        json!({
            "code": -32021,
            "message": "tool `ask_model` needs the client's `sampling` capability, which this \
                        request's `io.modelcontextprotocol/clientCapabilities` does not declare",
            "data": {"requiredCapabilities": {"sampling": {}}}
        }),
        "{answer}"
    );
    // A tool that does without the answer succeeds, and is answered as it returned.
    client.send(call(2, "ask_or_guess", json!({}))).await;
    let answer = client.recv().await;
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "guessed, since the client did not declare the `sampling` capability, so \
         `sampling/createMessage` cannot be sent to it",
        "{answer}"
    );
    client.finish().await;
}

#[tokio::test]
async fn over_http_the_request_comes_on_the_calls_stream_and_the_answer_is_posted() {
    let registry = Registry::collect().expect("the test tools do not conflict");
    let bound = Server::new("http-tests", "0.0.1")
        .registry(registry)
        .bind_http("127.0.0.1:0", toolwright::http::Http::new())
        .await
        .unwrap();
    let url = bound.url();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(bound.run_until(async {
        let _ = stopped.await;
    }));
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let post = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };

    let initialized = post(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "http-tests", "version": "1.0.0"}
        }}),
        None,
    )
    .await
    .unwrap();
    let session = initialized.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();

    let call = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "ask_model", "arguments": {"prompt": "Hi"}}}),
        Some(&session),
    )
    .await
    .unwrap();
    assert_eq!(call.headers()["content-type"], "text/event-stream");
    let mut body = call.bytes_stream();
    let mut buffer = String::new();
    let mut messages = Vec::new();
    // Reads events until one holds a message with an id: the request, then the response.
    let mut next_message = async || -> Value {
        loop {
            if let Some(end) = buffer.find("\n\n") {
                let event: String = buffer.drain(..end + 2).collect();
                let data = event
                    .lines()
                    .find_map(|line| line.strip_prefix("data: "))
                    .unwrap_or("");
                if !data.is_empty() {
                    let message: Value = serde_json::from_str(data).unwrap();
                    messages.push(message.clone());
                    if message.get("id").is_some() {
                        return message;
                    }
                }
                continue;
            }
            let chunk = tokio::time::timeout(TIMEOUT, body.next())
                .await
                .expect("the stream goes on in time")
                .expect("the stream is open")
                .unwrap();
            buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    };
    let request = next_message().await;
    assert_eq!(request["method"], "sampling/createMessage");
    // Over HTTP a request names the server process that sent it, for replicas sharing a store:
    // `tw-<8 hex digits>-<n>`.
    let id = request["id"].as_str().unwrap();
    let (replica, n) = id.strip_prefix("tw-").unwrap().split_once('-').unwrap();
    assert!(
        replica.len() == 8 && replica.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    assert_eq!(n, "1");

    let answered = post(
        response(request["id"].clone(), sampled("Hello!")),
        Some(&session),
    )
    .await
    .unwrap();
    assert_eq!(answered.status(), reqwest::StatusCode::ACCEPTED);
    assert_eq!(
        next_message().await,
        response(json!(1), text_result("Hello!"))
    );
    assert_eq!(messages.len(), 2, "{messages:?}");

    let _ = stop.send(());
    tokio::time::timeout(TIMEOUT, server)
        .await
        .expect("the server stops in time")
        .unwrap()
        .unwrap();
}
