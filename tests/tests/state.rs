//! Application state, what a session keeps, and who calls: taken by tools as parameters and from
//! their context, given in `main`, checked at start. (A binary of its own: `inventory` collects
//! per binary.)

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use toolwright::{Context, Server, State, mcp_tool};
use toolwright_tests::stdio::{Client, initialize_params};

/// A counter every call shares.
struct Counter(AtomicU64);

/// A greeting the server is configured with.
struct Greeting(String);

/// The line of the `#[mcp_tool]` below.
const COUNT_LINE: u32 = line!() + 3;

/// Count one more, and say how many so far.
#[mcp_tool]
fn count(counter: State<Counter>) -> u64 {
    counter.0.fetch_add(1, Ordering::SeqCst) + 1
}

/// Greet someone, counting the greetings.
#[mcp_tool]
async fn greet(
    /// Whom to greet.
    name: String,
    greeting: &State<Greeting>,
    counter: State<Counter>,
) -> String {
    counter.0.fetch_add(1, Ordering::SeqCst);
    format!("{}, {name}!", greeting.0)
}

/// The session's notes so far.
struct Notes(Mutex<Vec<String>>);

/// Keep a note for the rest of the session; returns every note the session kept.
#[mcp_tool]
fn remember(ctx: &Context, note: String) -> Result<Vec<String>, &'static str> {
    let session = ctx.session().ok_or("no session")?;
    let notes = session.get_or_insert_with(|| Notes(Mutex::new(Vec::new())));
    let mut notes = notes.0.lock().unwrap();
    notes.push(note);
    Ok(notes.clone())
}

/// Who is calling, as the context says.
#[mcp_tool]
fn caller(ctx: Context) -> Value {
    json!({
        "client": ctx.client_name(),
        "version": ctx.client_version(),
        "protocol": ctx.protocol_version(),
        "session": ctx.session_id(),
        "has_session": ctx.session().is_some(),
    })
}

fn server() -> Server {
    Server::new("state-server", "1.0.0")
        .state(Counter(AtomicU64::new(0)))
        .state(Greeting("Hello".into()))
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .expect("a text result")
}

#[tokio::test]
async fn tools_share_the_state_the_server_was_given() {
    let mut client = Client::with(server());
    client.initialize().await;
    assert_eq!(text(&client.call(1, "count", json!({})).await), "1");
    let greeted = client.call(2, "greet", json!({"name": "Ada"})).await;
    assert_eq!(text(&greeted), "Hello, Ada!");
    assert_eq!(text(&client.call(3, "count", json!({})).await), "3");
    // The state is no argument: the schema has only `name`.
    let listed = client.result(4, "tools/list", json!({})).await;
    let greet = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "greet")
        .unwrap();
    assert_eq!(
        greet["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["name"]
    );
    assert_eq!(greet["inputSchema"]["required"], json!(["name"]));
}

#[tokio::test]
async fn state_built_at_start_is_served_and_a_failed_build_stops_the_server() {
    let built = Server::new("state-server", "1.0.0")
        .state(Greeting("Hi".into()))
        .state_from(async { Ok::<_, std::io::Error>(Counter(AtomicU64::new(41))) });
    let mut client = Client::with(built);
    client.initialize().await;
    assert_eq!(text(&client.call(1, "count", json!({})).await), "42");

    let failing = Server::new("state-server", "1.0.0")
        .state(Greeting("Hi".into()))
        .state_from(async {
            Err::<Counter, _>(std::io::Error::other("the database is not there"))
        });
    let mut client = Client::with(failing);
    let error = client.served().await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot build the server's state `state::Counter`: the database is not there"
    );
}

#[tokio::test]
async fn a_tool_whose_state_was_not_given_stops_the_server_naming_both() {
    let mut client =
        Client::with(Server::new("state-server", "1.0.0").state(Greeting("Hi".into())));
    let error = client.served().await.unwrap_err();
    let expected = |tool: &str, line: u32| {
        format!(
            "tool `{tool}` at {}:{line}:1 takes `State<state::Counter>`, but the server was \
             given no `state::Counter`: give it one before serving, with `.state(value)`, or \
             `.state_from(future)` to build it at start",
            file!()
        )
    };
    let message = error.to_string();
    assert!(
        message.starts_with("the tools cannot be served:"),
        "{message}"
    );
    assert!(
        message.contains(&expected("count", COUNT_LINE)),
        "{message}"
    );
    assert!(message.contains("tool `greet` at "), "{message}");
}

#[tokio::test]
async fn a_session_keeps_what_its_calls_put_until_it_ends() {
    let mut first = Client::with(server());
    first.initialize().await;
    let kept = first.call(1, "remember", json!({"note": "a"})).await;
    assert_eq!(kept["structuredContent"], Value::Null);
    assert_eq!(text(&kept), r#"["a"]"#);
    let kept = first.call(2, "remember", json!({"note": "b"})).await;
    assert_eq!(text(&kept), r#"["a","b"]"#);
    // Another connection is another session.
    let mut second = Client::with(server());
    second.initialize().await;
    let kept = second.call(1, "remember", json!({"note": "c"})).await;
    assert_eq!(text(&kept), r#"["c"]"#);
}

#[tokio::test]
async fn the_context_says_who_calls_and_in_which_protocol() {
    let mut client = Client::with(server());
    client
        .initialize_with(initialize_params("2025-06-18"))
        .await;
    let called = client.call(1, "caller", json!({})).await;
    assert_eq!(
        serde_json::from_str::<Value>(text(&called)).unwrap(),
        json!({
            "client": "toolwright-tests",
            "version": "1.0.0",
            "protocol": "2025-06-18",
            "session": null,
            "has_session": true,
        })
    );
    // Protocol 2026-07-28 has no sessions, and each request says who calls.
    let mut stateless = Client::with(server());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "9"},
    });
    let called = stateless
        .result(
            1,
            "tools/call",
            json!({"name": "caller", "arguments": {}, "_meta": meta}),
        )
        .await;
    assert_eq!(
        serde_json::from_str::<Value>(text(&called)).unwrap(),
        json!({
            "client": "probe",
            "version": "9",
            "protocol": "2026-07-28",
            "session": null,
            "has_session": false,
        })
    );
}
