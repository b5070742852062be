//! Resources made with `#[mcp_resource]`, as a client lists and reads them, in both protocol
//! eras, beside an MCP Apps view. (A binary of its own: `inventory` collects per binary.)

use serde_json::{Value, json};
use toolwright::apps::UiResource;
use toolwright::completion::Completion;
use toolwright::content::ResourceContents;
use toolwright::resource::Json;
use toolwright::{Server, State, mcp_resource, mcp_tool};
use toolwright_tests::stdio::{Client, PROTOCOL_VERSION, initialize_params};

/// The notebook's notes, by id.
struct Notes(Vec<(u64, &'static str)>);

/// Add two integers.
#[mcp_tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

toolwright::apps::ui_resource!(UiResource::new(
    "ui://notes/board.html",
    "<!doctype html><p>board"
));

/// The tags in use.
#[mcp_resource(uri = "notes://tags", title = "Tags", audience = ["user"], priority = 0.5)]
fn tags() -> Json<Vec<&'static str>> {
    Json(vec!["home", "work"])
}

/// The notebook's logo.
#[mcp_resource(uri = "notes://logo.png", mime_type = "image/png")]
fn logo() -> Vec<u8> {
    vec![0x89, b'P', b'N', b'G']
}

/// One note, as Markdown.
#[mcp_resource(
    uri = "notes://{id}",
    name = "note",
    mime_type = "text/markdown",
    changes,
    complete(id = note_ids)
)]
fn note(notes: State<Notes>, id: u64) -> Option<String> {
    let (_, text) = notes.0.iter().find(|(n, _)| *n == id)?;
    Some(format!("# Note {id}\n\n{text}"))
}

/// The ids of the notes that start with what was typed.
fn note_ids(request: &Completion) -> Vec<String> {
    let notes = request.state::<Notes>().expect("the server has its notes");
    notes
        .0
        .iter()
        .map(|(id, _)| id.to_string())
        .filter(|id| id.starts_with(request.value()))
        .collect()
}

/// A file of a repository, at a path of any depth.
#[mcp_resource(uri = "repo://{owner}/{+path}")]
async fn file(owner: String, path: String) -> Result<ResourceContents, String> {
    if path.starts_with("secret") {
        return Err(format!("{owner} keeps `{path}` private"));
    }
    Ok(ResourceContents::text(format!("{owner}:{path}")).with_mime_type("text/plain"))
}

/// A resource whose function panics.
#[mcp_resource(uri = "notes://broken/{id}")]
fn broken(id: String) -> String {
    panic!("no note {id} here")
}

fn server() -> Server {
    Server::new("resource-tests", "0.0.1").state(Notes(vec![(1, "tea"), (12, "coffee")]))
}

#[tokio::test]
async fn resources_and_templates_are_listed() {
    let client = server().test_client().await.unwrap();
    let listed = client.request("resources/list", json!({})).await.unwrap();
    assert_eq!(
        listed,
        json!({"resources": [
            {"uri": "notes://logo.png", "name": "logo", "description": "The notebook's logo.", "mimeType": "image/png"},
            {
                "uri": "notes://tags", "name": "tags", "title": "Tags",
                "description": "The tags in use.",
                "annotations": {"audience": ["user"], "priority": 0.5}
            },
            {"uri": "ui://notes/board.html", "name": "ui://notes/board.html", "mimeType": "text/html;profile=mcp-app"}
        ]})
    );
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    assert_eq!(
        templates,
        json!({"resourceTemplates": [
            {"uriTemplate": "notes://broken/{id}", "name": "broken", "description": "A resource whose function panics."},
            {"uriTemplate": "notes://{id}", "name": "note", "description": "One note, as Markdown.", "mimeType": "text/markdown"},
            {"uriTemplate": "repo://{owner}/{+path}", "name": "file", "description": "A file of a repository, at a path of any depth."}
        ]})
    );
}

#[tokio::test]
async fn a_resource_is_read_as_its_function_returns_it() {
    let client = server().test_client().await.unwrap();
    let read = |uri: &'static str| {
        let client = &client;
        async move {
            client
                .request("resources/read", json!({ "uri": uri }))
                .await
                .unwrap()
        }
    };
    assert_eq!(
        read("notes://tags").await,
        json!({"contents": [{"uri": "notes://tags", "mimeType": "application/json", "text": "[\"home\",\"work\"]"}]})
    );
    assert_eq!(
        read("notes://logo.png").await,
        json!({"contents": [{"uri": "notes://logo.png", "mimeType": "image/png", "blob": "iVBORw=="}]})
    );
    assert_eq!(
        read("notes://12").await,
        json!({"contents": [{"uri": "notes://12", "mimeType": "text/markdown", "text": "# Note 12\n\ncoffee"}]})
    );
    // `{+path}` takes slashes; each value is percent-decoded.
    assert_eq!(
        read("repo://ada/src/caf%C3%A9.rs").await,
        json!({"contents": [{"uri": "repo://ada/src/caf%C3%A9.rs", "mimeType": "text/plain", "text": "ada:src/café.rs"}]})
    );
    assert_eq!(
        read("ui://notes/board.html").await["contents"][0]["mimeType"],
        "text/html;profile=mcp-app"
    );
}

#[tokio::test]
async fn what_names_no_resource_is_not_found_and_a_failure_says_why() {
    let client = server().test_client().await.unwrap();
    let refused = |uri: &'static str| {
        let client = &client;
        async move {
            let error = client
                .request("resources/read", json!({ "uri": uri }))
                .await
                .unwrap_err();
            (error.code, error.message, error.data)
        }
    };
    let (code, message, data) = refused("notes://nope/nope").await;
    assert_eq!(
        (code, data),
        (-32002, Some(json!({"uri": "notes://nope/nope"})))
    );
    assert_eq!(
        message,
        "resource not found: `notes://nope/nope`; this server has `notes://logo.png`, \
         `notes://tags`, `ui://notes/board.html`, `notes://broken/{id}`, `notes://{id}`, \
         `repo://{owner}/{+path}`"
    );
    // The function found nothing, or the variable does not parse: not found either.
    assert_eq!(
        refused("notes://7").await,
        (
            -32002,
            "resource not found: `notes://7` (notes://{id}): the resource's function found \
             nothing at this URI"
                .to_owned(),
            Some(json!({"uri": "notes://7"}))
        )
    );
    assert_eq!(
        refused("notes://abc").await.1,
        "resource not found: `notes://abc` (notes://{id}): its variable `id` is `abc`: invalid \
         digit found in string"
    );
    // The function's error, and its panic, which the server survives.
    assert_eq!(
        refused("repo://ada/secret/key").await,
        (
            -32603,
            "resource `repo://ada/secret/key` could not be read: ada keeps `secret/key` private"
                .to_owned(),
            Some(json!({"uri": "repo://ada/secret/key"}))
        )
    );
    assert_eq!(
        refused("notes://broken/3").await.1,
        "resource `notes://broken/3` panicked while being read: no note 3 here"
    );
    let error = client
        .request("resources/read", json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        (error.code, error.message.as_str()),
        (-32602, "`resources/read` needs a `uri` string")
    );
    assert!(client.request("resources/list", json!({})).await.is_ok());
}

#[tokio::test]
async fn a_template_variable_completes_from_its_completer() {
    let client = server().test_client().await.unwrap();
    let complete = |reference: Value, argument: Value| {
        let client = &client;
        async move {
            client
                .request(
                    "completion/complete",
                    json!({"ref": reference, "argument": argument}),
                )
                .await
        }
    };
    let notes = json!({"type": "ref/resource", "uri": "notes://{id}"});
    assert_eq!(
        complete(notes.clone(), json!({"name": "id", "value": "1"}))
            .await
            .unwrap(),
        json!({"completion": {"values": ["1", "12"], "total": 2, "hasMore": false}})
    );
    let error = complete(notes, json!({"name": "title", "value": ""}))
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        "resource template `notes://{id}` has no variable `title`"
    );
    let error = complete(
        json!({"type": "ref/resource", "uri": "notes://{nope}"}),
        json!({"name": "id", "value": ""}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error.message,
        "unknown resource template `notes://{nope}`; this server has `notes://broken/{id}`, \
         `notes://{id}`, `repo://{owner}/{+path}`"
    );
}

#[tokio::test]
async fn only_a_resource_that_changes_can_be_subscribed_to() {
    let client = server().test_client().await.unwrap();
    assert_eq!(
        client
            .request("resources/subscribe", json!({"uri": "notes://1"}))
            .await
            .unwrap(),
        json!({})
    );
    assert_eq!(
        client
            .request("resources/unsubscribe", json!({"uri": "notes://1"}))
            .await
            .unwrap(),
        json!({})
    );
    let error = client
        .request("resources/subscribe", json!({"uri": "notes://tags"}))
        .await
        .unwrap_err();
    assert_eq!(
        (error.code, error.message.as_str()),
        (
            -32602,
            "`resources/subscribe`: resource `notes://tags` does not change while the server \
             runs, so there is nothing to be told about it"
        )
    );
}

#[tokio::test]
async fn both_eras_declare_resources_and_2026_reads_carry_caching_hints() {
    let mut handshake = Client::with(server());
    let initialized = handshake
        .result(0, "initialize", initialize_params(PROTOCOL_VERSION))
        .await;
    assert_eq!(
        initialized["capabilities"]["resources"],
        json!({"listChanged": true, "subscribe": true})
    );
    assert_eq!(initialized["capabilities"]["completions"], json!({}));
    handshake.finish().await;

    let mut stdio = Client::with(server());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let tags = stdio
        .result(
            1,
            "resources/read",
            json!({"uri": "notes://tags", "_meta": meta}),
        )
        .await;
    assert_eq!(tags["resultType"], "complete");
    assert_eq!(tags["cacheScope"], "public");
    assert!(tags["ttlMs"].as_u64().unwrap() > 0, "{tags}");
    // A resource that changes is cached for no time.
    let note = stdio
        .result(
            2,
            "resources/read",
            json!({"uri": "notes://1", "_meta": meta}),
        )
        .await;
    assert_eq!(note["ttlMs"], 0, "{note}");
    let missing = stdio
        .request(
            3,
            "resources/read",
            json!({"uri": "notes://9", "_meta": meta}),
        )
        .await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert_eq!(missing["error"]["data"], json!({"uri": "notes://9"}));
    stdio.finish().await;
}

#[tokio::test]
async fn a_resource_whose_state_was_not_given_stops_the_server() {
    let error = Server::new("resource-tests", "0.0.1")
        .test_client()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("resource `notes://{id}` at tests/tests/resources.rs:"),
        "{error}"
    );
    assert!(
        error.contains(
            "takes `State<resources::Notes>`, but the server was given no `resources::Notes`"
        ),
        "{error}"
    );
}
