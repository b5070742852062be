//! What a server serves, changed while it runs through its `ServerHandle`, and who is told: a
//! handshake-era client on its connection, a 2026-07-28 client on the `subscriptions/listen`
//! stream it opened. (A binary of its own: `inventory` collects per binary.)

use serde_json::{Value, json};
use toolwright::completion::Completion;
use toolwright::registry::Conflict;
use toolwright::server::ChangeError;
use toolwright::{Context, Server, mcp_prompt, mcp_resource, mcp_tool};
use toolwright_tests::stdio::Client;

/// Add two integers.
#[mcp_tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Take `add` away, or give it back.
#[mcp_tool]
fn toggle_add(ctx: Context, on: bool) -> Result<&'static str, ChangeError> {
    if on {
        ctx.server().enable_tool("add")?;
    } else {
        ctx.server().disable_tool("add")?;
    }
    Ok("done")
}

/// A prompt that takes itself out of the list as it is got.
#[mcp_prompt]
fn once(ctx: Context) -> String {
    ctx.server()
        .disable_prompt("once")
        .expect("the prompt is served");
    "Only once.".to_owned()
}

/// Say hello.
#[mcp_prompt(complete(name = names))]
fn hello(
    /// Whom to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

fn names(_: &Completion) -> Vec<String> {
    vec!["Ada".to_owned()]
}

/// A note.
#[mcp_resource(uri = "notes://{id}", changes)]
fn note(id: u64) -> String {
    format!("note {id}")
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn names_in(list: &Value, member: &str, key: &str) -> Vec<String> {
    list[member]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry[key].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_disabled_tool_is_unlisted_and_unknown_until_enabled_and_clients_are_told() {
    let server = Server::new("test-server", "0.0.1");
    let handle = server.handle();
    let mut client = Client::with(server);
    client.initialize().await;
    handle.disable_tool("add").unwrap();
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})
    );
    // Disabling it again changes nothing, and tells nobody.
    handle.disable_tool("add").unwrap();
    let listed = client.result(1, "tools/list", json!({})).await;
    assert_eq!(names_in(&listed, "tools", "name"), ["toggle_add"]);
    let refused = client
        .request(
            2,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        )
        .await;
    assert_eq!(
        refused["error"],
        json!({"code": -32602, "message": "unknown tool `add`"})
    );
    // A tool enables it again, through its context.
    let (done, told) = client
        .call_notified(3, json!({"name": "toggle_add", "arguments": {"on": true}}))
        .await;
    assert_eq!(done["content"][0]["text"], "done", "{done}");
    assert_eq!(
        told,
        [json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})]
    );
    let listed = client.result(4, "tools/list", json!({})).await;
    assert_eq!(names_in(&listed, "tools", "name"), ["add", "toggle_add"]);
    assert_eq!(
        handle.disable_tool("nope"),
        Err(ChangeError::Unknown {
            kind: "tool",
            name: "nope".to_owned()
        })
    );
    client.finish().await;
}

#[tokio::test]
async fn a_plain_prompt_may_change_the_prompts_while_it_is_got() {
    let mut client = Client::with(Server::new("test-server", "0.0.1"));
    client.initialize().await;
    client
        .send_request(1, "prompts/get", json!({"name": "once"}))
        .await;
    // The change is told as it happens, before the answer.
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed", "params": {}})
    );
    let got = client.recv().await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"],
        "Only once."
    );
    let listed = client.result(2, "prompts/list", json!({})).await;
    assert_eq!(names_in(&listed, "prompts", "name"), ["hello"]);
    let gone = client
        .request(3, "prompts/get", json!({"name": "once"}))
        .await;
    assert_eq!(
        gone["error"]["message"],
        "unknown prompt `once`; this server has `hello`"
    );
    client.finish().await;
}

#[tokio::test]
async fn a_disabled_prompt_or_resource_is_unknown_everywhere() {
    let server = Server::new("test-server", "0.0.1");
    let handle = server.handle();
    let mut client = Client::with(server);
    client.initialize().await;
    handle.disable_prompt("hello").unwrap();
    handle.disable_resource("notes://{id}").unwrap();
    let told: Vec<Value> = vec![client.recv().await, client.recv().await];
    assert_eq!(
        told,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed", "params": {}}),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed", "params": {}}),
        ]
    );
    let completion = client
        .request(
            1,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "hello"}, "argument": {"name": "name", "value": ""}}),
        )
        .await;
    assert_eq!(completion["error"]["message"], "unknown prompt `hello`");
    let templates = client
        .result(2, "resources/templates/list", json!({}))
        .await;
    assert_eq!(templates["resourceTemplates"], json!([]));
    let read = client
        .request(3, "resources/read", json!({"uri": "notes://1"}))
        .await;
    assert_eq!(read["error"]["code"], -32002, "{read}");
    handle.enable_resource("notes://{id}").unwrap();
    client.recv().await;
    let read = client
        .result(4, "resources/read", json!({"uri": "notes://1"}))
        .await;
    assert_eq!(read["contents"][0]["text"], "note 1");
    client.finish().await;
}

#[tokio::test]
async fn a_listen_stream_is_told_only_what_it_asked_for_tagged_with_its_id() {
    let server = Server::new("test-server", "0.0.1");
    let handle = server.handle();
    let mut client = Client::with(server);
    client
        .send_request(
            7,
            "subscriptions/listen",
            json!({"_meta": meta(), "notifications": {
                "promptsListChanged": true,
                "resourceSubscriptions": ["notes://1", "notes://nope/2", "other://3"]
            }}),
        )
        .await;
    // Only the resources that change, of those it names, are followed.
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": 7},
            "notifications": {"promptsListChanged": true, "resourceSubscriptions": ["notes://1"]}
        }})
    );
    handle.disable_tool("add").unwrap();
    handle.resource_updated("notes://2");
    handle.resource_updated("notes://1");
    handle.disable_prompt("hello").unwrap();
    let tagged = json!({"io.modelcontextprotocol/subscriptionId": 7});
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"uri": "notes://1", "_meta": tagged}})
    );
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed",
               "params": {"_meta": tagged}})
    );
    // When the input closes, the stream ends with its answer, still tagged.
    let rest = client.finish().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 7);
    assert_eq!(rest[0]["result"]["resultType"], "complete");
    assert_eq!(
        rest[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    assert!(rest[0]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
}

#[tokio::test]
async fn a_name_disabled_before_serving_must_be_served() {
    let server = Server::new("test-server", "0.0.1");
    server.handle().disable_tool("ad").unwrap();
    server.handle().disable_resource("notes://{id}").unwrap();
    let error = server.test_client().await.unwrap_err();
    let toolwright::Error::Registry(error) = error else {
        panic!("{error}");
    };
    assert_eq!(
        error.conflicts(),
        [Conflict::UnknownDisabled {
            kind: "tool",
            name: "ad".to_owned()
        }]
    );
    assert_eq!(
        error.to_string(),
        "the tools cannot be served:\n  - the server was asked to disable the tool `ad`, which \
         it does not have"
    );
}
