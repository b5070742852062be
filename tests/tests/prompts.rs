//! Prompts made with `#[mcp_prompt]`, as a client lists and gets them, in both protocol eras.
//! (A binary of its own: `inventory` collects per binary.)

use serde_json::{Value, json};
use toolwright::completion::Completion;
use toolwright::prompt::PromptMessage;
use toolwright::{Content, Server, State, mcp_prompt, mcp_tool};
use toolwright_tests::stdio::{Client, PROTOCOL_VERSION, initialize_params};

/// The names a team's tags go by.
struct Tags(Vec<&'static str>);

/// Add two integers.
#[mcp_tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Say hello.
#[mcp_prompt]
fn hello() -> &'static str {
    "Hello!"
}

/// The tags that start with what was typed, for another `words` than `0`.
fn tag_names(request: &Completion) -> Vec<String> {
    assert_eq!(request.argument(), "tag");
    if request.other("words") == Some("0") {
        return Vec::new();
    }
    let tags = request.state::<Tags>().expect("the server has its tags");
    tags.0
        .iter()
        .filter(|t| t.starts_with(request.value()))
        .map(|t| (*t).to_owned())
        .collect()
}

/// A hundred and one suggestions, whatever was typed.
fn many(_: &Completion) -> Vec<String> {
    (0..101).map(|n| format!("v{n}")).collect()
}

/// Summarise the notes that carry a tag.
#[mcp_prompt(title = "Summarise a tag", complete(tag = tag_names))]
async fn summarise(
    /// The tag whose notes to summarise.
    tag: &str,
    /// How long the summary may be, in words.
    words: Option<u32>,
    tags: State<Tags>,
) -> Result<Vec<PromptMessage>, String> {
    if !tags.0.contains(&tag) {
        return Err(format!(
            "no tag `{tag}`; the tags are {}",
            tags.0.join(", ")
        ));
    }
    let words = words.unwrap_or(100);
    Ok(vec![
        PromptMessage::user(format!(
            "Summarise the notes tagged `{tag}` in {words} words."
        )),
        PromptMessage::assistant(Content::resource_text(
            format!("notes://tags/{tag}"),
            "text/plain",
            "the notes",
        )),
    ])
}

/// Ask about a file.
#[mcp_prompt(name = "ask-file", complete(fileUri = many))]
fn ask_file(
    /// The file.
    #[arg(rename = "fileUri")]
    file_uri: String,
) -> PromptMessage {
    PromptMessage::user(Content::resource_link(file_uri, "the file"))
}

/// Fail loudly.
#[mcp_prompt]
fn broken() -> String {
    panic!("the template is missing")
}

fn server() -> Server {
    Server::new("prompt-tests", "0.0.1").state(Tags(vec!["home", "work"]))
}

#[tokio::test]
async fn prompts_are_listed_with_their_arguments() {
    let client = server().test_client().await.unwrap();
    let listed = client.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(
        listed,
        json!({"prompts": [
            {"name": "ask-file", "description": "Ask about a file.", "arguments": [
                {"name": "fileUri", "description": "The file.", "required": true}
            ]},
            {"name": "broken", "description": "Fail loudly."},
            {"name": "hello", "description": "Say hello."},
            {
                "name": "summarise",
                "title": "Summarise a tag",
                "description": "Summarise the notes that carry a tag.",
                "arguments": [
                    {"name": "tag", "description": "The tag whose notes to summarise.", "required": true},
                    {"name": "words", "description": "How long the summary may be, in words."}
                ]
            }
        ]})
    );
    let cursor = client
        .request("prompts/list", json!({"cursor": "x"}))
        .await
        .unwrap_err();
    assert_eq!(cursor.code, -32602);
}

#[tokio::test]
async fn a_prompt_is_filled_in_from_its_arguments_and_state() {
    let client = server().test_client().await.unwrap();
    let got = client
        .request(
            "prompts/get",
            json!({"name": "summarise", "arguments": {"tag": "home", "words": "50"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        got,
        json!({
            "description": "Summarise the notes that carry a tag.",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Summarise the notes tagged `home` in 50 words."}},
                {"role": "assistant", "content": {"type": "resource", "resource": {
                    "uri": "notes://tags/home", "mimeType": "text/plain", "text": "the notes"
                }}}
            ]
        })
    );
    let hello = client
        .request("prompts/get", json!({"name": "hello"}))
        .await
        .unwrap();
    assert_eq!(
        hello["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Hello!"}}])
    );
    let link = client
        .request(
            "prompts/get",
            json!({"name": "ask-file", "arguments": {"fileUri": "file:///a.txt"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        link["messages"][0]["content"],
        json!({"type": "resource_link", "uri": "file:///a.txt", "name": "the file"})
    );
}

#[tokio::test]
async fn what_a_prompt_cannot_take_is_refused_naming_it() {
    let client = server().test_client().await.unwrap();
    let refused = |params: Value| {
        let client = &client;
        async move {
            let error = client.request("prompts/get", params).await.unwrap_err();
            (error.code, error.message)
        }
    };
    let invalid = |message: &str| (-32602, message.to_owned());
    assert_eq!(
        refused(json!({"name": "nope"})).await,
        invalid(
            "unknown prompt `nope`; this server has `ask-file`, `broken`, `hello`, `summarise`"
        )
    );
    assert_eq!(
        refused(json!({"name": "summarise", "arguments": {}})).await,
        invalid("prompt `summarise` needs the argument `tag`")
    );
    assert_eq!(
        refused(json!({"name": "summarise", "arguments": {"tag": "home", "words": "many"}})).await,
        invalid("invalid argument `words` for prompt `summarise`: invalid digit found in string")
    );
    assert_eq!(
        refused(json!({"name": "summarise", "arguments": {"tag": 7}})).await,
        invalid(
            "invalid argument `tag` for prompt `summarise`: 7 is not a string; prompt arguments \
             are strings"
        )
    );
    assert_eq!(
        refused(json!({"name": "summarise", "arguments": {"tag": "home", "topic": "x"}})).await,
        invalid("unknown argument `topic` for prompt `summarise`; it takes `tag`, `words`")
    );
    assert_eq!(
        refused(json!({"name": "hello", "arguments": {"x": "y"}})).await,
        invalid("prompt `hello` takes no arguments, and was given `x`")
    );
    // The prompt's own error, and a panic, which the server survives.
    assert_eq!(
        refused(json!({"name": "summarise", "arguments": {"tag": "garden"}})).await,
        invalid("prompt `summarise` failed: no tag `garden`; the tags are home, work")
    );
    assert_eq!(
        refused(json!({"name": "broken"})).await,
        (
            -32603,
            "prompt `broken` panicked: the template is missing".to_owned()
        )
    );
    assert!(client.request("prompts/list", json!({})).await.is_ok());
}

#[tokio::test]
async fn both_eras_declare_prompts_and_2026_lists_carry_caching_hints() {
    let mut handshake = Client::with(server());
    let initialized = handshake
        .result(0, "initialize", initialize_params(PROTOCOL_VERSION))
        .await;
    assert_eq!(
        initialized["capabilities"]["prompts"],
        json!({"listChanged": true})
    );
    handshake.finish().await;

    let mut stdio = Client::with(server());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let discover = stdio
        .result(1, "server/discover", json!({"_meta": meta}))
        .await;
    assert_eq!(
        discover["capabilities"]["prompts"],
        json!({"listChanged": true})
    );
    let listed = stdio
        .result(2, "prompts/list", json!({"_meta": meta}))
        .await;
    assert_eq!(listed["cacheScope"], "public", "{listed}");
    assert!(listed["ttlMs"].is_u64(), "{listed}");
    assert_eq!(listed["resultType"], "complete");
    assert_eq!(listed["prompts"].as_array().unwrap().len(), 4);
    let got = stdio
        .result(3, "prompts/get", json!({"name": "hello", "_meta": meta}))
        .await;
    assert_eq!(got["resultType"], "complete");
    assert_eq!(got["messages"][0]["content"]["text"], "Hello!");
    stdio.finish().await;
}

#[tokio::test]
async fn a_prompt_whose_state_was_not_given_stops_the_server() {
    let error = Server::new("prompt-tests", "0.0.1")
        .test_client()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("prompt `summarise` at tests/tests/prompts.rs:"),
        "{error}"
    );
    assert!(
        error.contains("takes `State<prompts::Tags>`, but the server was given no `prompts::Tags`"),
        "{error}"
    );
}

#[tokio::test]
async fn an_argument_completes_from_its_completer() {
    let client = server().test_client().await.unwrap();
    let complete = |reference: Value, argument: Value, context: Value| {
        let client = &client;
        async move {
            client
                .request(
                    "completion/complete",
                    json!({"ref": reference, "argument": argument, "context": context}),
                )
                .await
        }
    };
    let summarise = json!({"type": "ref/prompt", "name": "summarise"});
    assert_eq!(
        complete(
            summarise.clone(),
            json!({"name": "tag", "value": "h"}),
            json!({})
        )
        .await
        .unwrap(),
        json!({"completion": {"values": ["home"], "total": 1, "hasMore": false}})
    );
    // The other arguments filled in reach the completer.
    assert_eq!(
        complete(
            summarise.clone(),
            json!({"name": "tag", "value": ""}),
            json!({"arguments": {"words": "0"}})
        )
        .await
        .unwrap()["completion"]["values"],
        json!([])
    );
    // An argument without a completer has nothing to suggest.
    assert_eq!(
        complete(
            summarise.clone(),
            json!({"name": "words", "value": "1"}),
            json!({})
        )
        .await
        .unwrap()["completion"],
        json!({"values": [], "total": 0, "hasMore": false})
    );
    // The first hundred, and how many there are.
    let many = complete(
        json!({"type": "ref/prompt", "name": "ask-file"}),
        json!({"name": "fileUri", "value": ""}),
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(many["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!(many["completion"]["total"], 101);
    assert_eq!(many["completion"]["hasMore"], true);
    let refused = |reference: Value, argument: Value| async move {
        let error = complete(reference, argument, json!({})).await.unwrap_err();
        (error.code, error.message)
    };
    assert_eq!(
        refused(
            json!({"type": "ref/prompt", "name": "nope"}),
            json!({"name": "x", "value": ""})
        )
        .await,
        (-32602, "unknown prompt `nope`".to_owned())
    );
    assert_eq!(
        refused(summarise.clone(), json!({"name": "topic", "value": ""})).await,
        (
            -32602,
            "prompt `summarise` has no argument `topic`".to_owned()
        )
    );
    assert_eq!(
        refused(summarise, json!({"name": "tag"})).await,
        (
            -32602,
            "`argument` needs a `name` and a `value` string".to_owned()
        )
    );
}

#[tokio::test]
async fn a_server_with_completers_declares_completions() {
    let mut handshake = Client::with(server());
    let initialized = handshake
        .result(0, "initialize", initialize_params(PROTOCOL_VERSION))
        .await;
    assert_eq!(initialized["capabilities"]["completions"], json!({}));
    handshake.finish().await;
}
