//! The call pipeline: a `tower::Layer` given to `Server::layer` sees every tool call, prompt get
//! and resource read of a client, in order, and may refuse a call or answer it without running
//! it. (A binary of its own: `inventory` collects per binary.)

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};

use serde_json::{Value, json};
use toolwright::auth::Principal;
use toolwright::pipeline::{BoxError, Call, Layer, Operation, Outcome, Refusal, Select, Service};
use toolwright::registry::Conflict;
use toolwright::{Server, ToolResult, mcp_prompt, mcp_resource, mcp_tool};

/// Add two integers.
#[mcp_tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Wait, then say so: a call that is not done when first polled.
#[mcp_tool]
async fn later(ms: u64) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    "later".to_owned()
}

/// Remove everything.
#[mcp_tool(destructive)]
fn wipe() -> String {
    "wiped".to_owned()
}

/// How much is owed.
#[mcp_tool(read_only, tags = ["billing"])]
fn balance() -> u64 {
    12
}

/// Charge the card on file.
#[mcp_tool(destructive, tags = ["billing"])]
fn charge(cents: u64) -> String {
    format!("charged {cents}")
}

/// Say hello to someone.
#[mcp_prompt]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// A note by its id.
#[mcp_resource(uri = "notes://{id}")]
fn note(id: u64) -> String {
    format!("note {id}")
}

type Seen = Arc<Mutex<Vec<String>>>;

/// Writes down each call it sees (`<name>: <operation> <target> <arguments>`) and, once it has
/// run, its outcome (`<name>: <operation> ok` or `<name>: error <message>`).
#[derive(Clone)]
struct Record {
    name: &'static str,
    seen: Seen,
}

impl<S> Layer<S> for Record {
    type Service = Recorded<S>;

    fn layer(&self, next: S) -> Recorded<S> {
        Recorded {
            next,
            record: self.clone(),
        }
    }
}

#[derive(Clone)]
struct Recorded<S> {
    next: S,
    record: Record,
}

type Answer = Pin<Box<dyn Future<Output = Result<Outcome, BoxError>> + Send>>;

impl<S> Service<Call> for Recorded<S>
where
    S: Service<Call, Response = Outcome, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Outcome;
    type Error = BoxError;
    type Future = Answer;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.next.poll_ready(cx)
    }

    fn call(&mut self, call: Call) -> Answer {
        let Record { name, seen } = self.record.clone();
        let who = call
            .context()
            .principal()
            .and_then(Principal::subject)
            .map_or(String::new(), |subject| format!(" by {subject}"));
        seen.lock().unwrap().push(format!(
            "{name}: {} {} {}{who}",
            call.operation(),
            call.target(),
            call.arguments()
        ));
        let answer = self.next.call(call);
        Box::pin(async move {
            let outcome = answer.await;
            let entry = match &outcome {
                Ok(outcome) => format!("{name}: {} ok", outcome.operation()),
                Err(error) => format!("{name}: error {error}"),
            };
            seen.lock().unwrap().push(entry);
            outcome
        })
    }
}

/// Refuses destructive tools, answers `add` itself with 42, and lets the rest run.
#[derive(Clone)]
struct Guard;

impl<S> Layer<S> for Guard {
    type Service = Guarded<S>;

    fn layer(&self, next: S) -> Guarded<S> {
        Guarded { next }
    }
}

#[derive(Clone)]
struct Guarded<S> {
    next: S,
}

impl<S> Service<Call> for Guarded<S>
where
    S: Service<Call, Response = Outcome, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Outcome;
    type Error = BoxError;
    type Future = Answer;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.next.poll_ready(cx)
    }

    fn call(&mut self, call: Call) -> Answer {
        match (call.operation(), call.target()) {
            (Operation::CallTool, "wipe") => Box::pin(async {
                Err(Refusal::new(-32001, "destructive tools are off today")
                    .with_data(json!({"tool": "wipe"}))
                    .into())
            }),
            (Operation::CallTool, "add") => {
                Box::pin(async { Ok(Outcome::Tool(ToolResult::text("42"))) })
            }
            (Operation::GetPrompt, _) => Box::pin(async { Err("out of prompts".into()) }),
            _ => Box::pin(self.next.call(call)),
        }
    }
}

fn record(name: &'static str, seen: &Seen) -> Record {
    Record {
        name,
        seen: Arc::clone(seen),
    }
}

fn taken(seen: &Seen) -> Vec<String> {
    std::mem::take(&mut *seen.lock().unwrap())
}

#[tokio::test]
async fn a_layer_sees_every_call_prompt_and_read_and_its_outcome_in_order() {
    let seen = Seen::default();
    let client = Server::new("pipeline-tests", "0.0.1")
        .layer(record("outer", &seen))
        .layer(record("inner", &seen))
        .test_client_as(Principal::new("https://as.example.com").with_subject("ada"))
        .await
        .unwrap();

    let added = client.call("add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(added.text(), "5");
    assert_eq!(
        taken(&seen),
        [
            r#"outer: tools/call add {"a":2,"b":3} by ada"#,
            r#"inner: tools/call add {"a":2,"b":3} by ada"#,
            "inner: tools/call ok",
            "outer: tools/call ok",
        ]
    );

    let later = client.call("later", json!({"ms": 20})).await.unwrap();
    assert_eq!(later.text(), "later");
    assert_eq!(
        taken(&seen)[..2],
        [
            r#"outer: tools/call later {"ms":20} by ada"#,
            r#"inner: tools/call later {"ms":20} by ada"#,
        ]
    );

    let greeted = client
        .request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await
        .unwrap();
    assert_eq!(greeted["messages"][0]["content"]["text"], "Hello, Ada!");
    assert_eq!(
        taken(&seen),
        [
            r#"outer: prompts/get greet {"name":"Ada"} by ada"#,
            r#"inner: prompts/get greet {"name":"Ada"} by ada"#,
            "inner: prompts/get ok",
            "outer: prompts/get ok",
        ]
    );

    let read = client
        .request("resources/read", json!({"uri": "notes://7"}))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "note 7");
    assert_eq!(
        taken(&seen),
        [
            r#"outer: resources/read notes://7 {"id":"7"} by ada"#,
            r#"inner: resources/read notes://7 {"id":"7"} by ada"#,
            "inner: resources/read ok",
            "outer: resources/read ok",
        ]
    );

    // What the server refuses before running anything does not reach the layers.
    let refused = client.call("add", json!({"a": "two"})).await.unwrap();
    assert!(refused.is_error());
    let unknown = client.call("nope", json!({})).await.unwrap_err();
    assert_eq!(unknown.message, "unknown tool `nope`");
    assert!(taken(&seen).is_empty());
}

#[tokio::test]
async fn a_layer_refuses_or_answers_a_call_itself() {
    let seen = Seen::default();
    let client = Server::new("pipeline-tests", "0.0.1")
        .layer(Guard)
        .layer(record("inner", &seen))
        .test_client()
        .await
        .unwrap();

    // A refusal is the error the client reads, with its code and data.
    let refused = client.call("wipe", json!({})).await.unwrap_err();
    assert_eq!(refused.code, -32001);
    assert_eq!(refused.message, "destructive tools are off today");
    assert_eq!(refused.data, Some(json!({"tool": "wipe"})));

    // Answered by the layer: the tool does not run.
    let added = client.call("add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(added.text(), "42");

    // Any other error of a layer: an internal error for a prompt.
    let failed = client
        .request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(failed.code, -32603);
    assert_eq!(failed.message, "the prompt failed: out of prompts");
    assert!(taken(&seen).is_empty(), "nothing passed the guard");

    // The rest runs through the inner layer.
    let read = client
        .request("resources/read", json!({"uri": "notes://1"}))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], Value::from("note 1"));
    assert_eq!(taken(&seen).len(), 2);
}

#[tokio::test]
async fn layers_for_some_tools_see_their_calls_alone_in_the_order_given() {
    let seen = Seen::default();
    let client = Server::new("pipeline-tests", "0.0.1")
        .layer_for(Select::tagged("billing"), record("billing", &seen))
        .layer(record("every", &seen))
        .layer_for(Select::destructive(), record("destructive", &seen))
        .layer_for(Select::tools(["add"]), record("add", &seen))
        .test_client()
        .await
        .unwrap();

    // Tagged `billing` and read-only: the billing layer, then the one for every call.
    assert_eq!(
        client.call("balance", json!({})).await.unwrap().text(),
        "12"
    );
    assert_eq!(
        taken(&seen),
        [
            "billing: tools/call balance {}",
            "every: tools/call balance {}",
            "every: tools/call ok",
            "billing: tools/call ok",
        ]
    );

    // Tagged and destructive: three layers, as they were given.
    let charged = client.call("charge", json!({"cents": 5})).await.unwrap();
    assert_eq!(charged.text(), "charged 5");
    assert_eq!(
        taken(&seen),
        [
            r#"billing: tools/call charge {"cents":5}"#,
            r#"every: tools/call charge {"cents":5}"#,
            r#"destructive: tools/call charge {"cents":5}"#,
            "destructive: tools/call ok",
            "every: tools/call ok",
            "billing: tools/call ok",
        ]
    );

    // `add` says nothing of its effects: a client takes it to be destructive, and so does
    // `Select::destructive`; it is named, too.
    assert_eq!(
        client
            .call("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap()
            .text(),
        "3"
    );
    assert_eq!(
        taken(&seen)[..3],
        [
            r#"every: tools/call add {"a":1,"b":2}"#,
            r#"destructive: tools/call add {"a":1,"b":2}"#,
            r#"add: tools/call add {"a":1,"b":2}"#,
        ]
    );

    // A prompt is no tool: only the layer for every call sees it.
    client
        .request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        taken(&seen),
        [
            r#"every: prompts/get greet {"name":"Ada"}"#,
            "every: prompts/get ok",
        ]
    );
}

#[tokio::test]
async fn a_layer_for_some_tools_refuses_theirs_and_lets_the_others_run() {
    let client = Server::new("pipeline-tests", "0.0.1")
        .layer_for(Select::tools(["wipe", "add"]), Guard)
        .test_client()
        .await
        .unwrap();
    let refused = client.call("wipe", json!({})).await.unwrap_err();
    assert_eq!(refused.message, "destructive tools are off today");
    // Answered by the guard, which the named `add` passes through.
    assert_eq!(
        client
            .call("add", json!({"a": 2, "b": 3}))
            .await
            .unwrap()
            .text(),
        "42"
    );
    // The guard refuses every prompt; but it is not on this path.
    assert_eq!(
        client.call("balance", json!({})).await.unwrap().text(),
        "12"
    );
    let greeted = client
        .request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await
        .unwrap();
    assert_eq!(greeted["messages"][0]["content"]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn a_layer_for_a_tool_the_server_does_not_have_stops_it_at_start() {
    let started = Server::new("pipeline-tests", "0.0.1")
        .layer_for(
            Select::tools(["charge", "mcp::toolwright-tests::wipe", "chrage", "wpie"]),
            Guard,
        )
        .test_client()
        .await;
    let Err(toolwright::Error::Registry(error)) = started else {
        panic!("the server started");
    };
    assert_eq!(
        error.conflicts(),
        [
            Conflict::UnknownLayerTool {
                name: "chrage".to_owned()
            },
            Conflict::UnknownLayerTool {
                name: "wpie".to_owned()
            },
        ]
    );
    assert!(
        error.to_string().contains(
            "a layer is given for the tool `chrage` (`Select::tools`), which the server does \
             not have"
        ),
        "{error}"
    );
}
