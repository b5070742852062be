//! The notes tools as a model calls them, through a server in this process: the same argument
//! checks, state and context as over the wire, without pipes or processes.

use notes_tools::{Note, Notebook};
use serde_json::{Value, json};
use toolwright::testing::TestClient;

async fn client() -> TestClient {
    toolwright::server!(notes_tools)
        .state(Notebook::in_memory())
        .test_client()
        .await
        .expect("the notes tools serve")
}

#[tokio::test]
async fn a_note_added_is_found_listed_and_searched() {
    let client = client().await;
    let added = client
        .call(
            "add_note",
            json!({"title": "Groceries", "body": "Milk, eggs", "tags": ["Home", "shop"]}),
        )
        .await
        .unwrap();
    let note: Note = added.output().unwrap();
    assert_eq!(note.id, 1);
    assert_eq!(note.tags, ["home", "shop"]);
    let got: Note = client
        .call("get_note", json!({"id": 1}))
        .await
        .unwrap()
        .output()
        .unwrap();
    assert_eq!(got, note);
    let listed = client
        .call("list_notes", json!({"tag": "shop"}))
        .await
        .unwrap();
    assert_eq!(listed.structured().unwrap()["total"], 1);
    let found = client
        .call("search_notes", json!({"query": "EGGS"}))
        .await
        .unwrap();
    assert_eq!(found.structured().unwrap()["matches"][0]["id"], 1);
}

#[tokio::test]
async fn mistakes_are_errors_the_model_reads() {
    let client = client().await;
    let missing = client.call("get_note", json!({"id": 9})).await.unwrap();
    assert!(missing.is_error());
    assert_eq!(
        missing.text(),
        "no note with id 9; `list_notes` or `search_notes` shows the ids that exist"
    );
    let long = client
        .call("add_note", json!({"title": "t".repeat(201), "body": ""}))
        .await
        .unwrap();
    assert_eq!(
        long.text(),
        "the title is 201 characters long; the most is 200: shorten it"
    );
    let tags: Vec<String> = (0..21).map(|n| format!("t{n}")).collect();
    let many = client
        .call("add_note", json!({"title": "x", "body": "", "tags": tags}))
        .await
        .unwrap();
    assert!(
        many.text().starts_with("a note carries at most 20 tags"),
        "{}",
        many.text()
    );
    let wrong = client.call("get_note", json!({"id": "one"})).await.unwrap();
    assert_eq!(
        wrong.text(),
        r#"invalid arguments for tool `get_note`: argument `id`: "one" is not of type "integer""#
    );
    // The schema holds each integer to its Rust type's range, and says so.
    let beyond = client
        .call("list_notes", json!({"limit": 4_294_967_296u64}))
        .await
        .unwrap();
    assert_eq!(
        beyond.text(),
        "invalid arguments for tool `list_notes`: argument `limit`: 4294967296 is greater than \
         the maximum of 4294967295"
    );
}

#[tokio::test]
async fn an_integral_float_is_an_integer() {
    let client = client().await;
    client
        .call("add_note", json!({"title": "One", "body": ""}))
        .await
        .unwrap();
    let got = client.call("get_note", json!({"id": 1.0})).await.unwrap();
    assert!(!got.is_error(), "{}", got.text());
    assert_eq!(got.output::<Note>().unwrap().title, "One");
}

#[tokio::test]
async fn the_board_moves_a_card_between_columns() {
    // `move_note` is the board view's: a client calls it when it shows views.
    let apps = json!({
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    });
    let client = toolwright::server!(notes_tools)
        .state(Notebook::in_memory())
        .test_client_with(apps)
        .await
        .unwrap();
    client
        .call(
            "add_note",
            json!({"title": "Ship it", "body": "", "tags": ["todo"]}),
        )
        .await
        .unwrap();
    let board = client
        .call("move_note", json!({"id": 1, "from": "todo", "to": "done"}))
        .await
        .unwrap();
    let columns: Vec<&Value> = board.structured().unwrap()["columns"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(columns.len(), 1);
    assert_eq!(columns[0]["tag"], "done");
    assert_eq!(columns[0]["notes"][0]["id"], 1);
}

#[tokio::test]
async fn the_summary_prompt_embeds_a_tags_notes() {
    let client = client().await;
    for (title, tags) in [("Milk", ["home"]), ("Rent", ["home"]), ("Slides", ["work"])] {
        client
            .call(
                "add_note",
                json!({"title": title, "body": "b", "tags": tags}),
            )
            .await
            .unwrap();
    }
    let got = client
        .request(
            "prompts/get",
            json!({"name": "summarise_tag", "arguments": {"tag": "Home", "limit": "1"}}),
        )
        .await
        .unwrap();
    let messages = got["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{got}");
    assert_eq!(
        messages[0]["content"]["text"],
        "Summarise the 1 newest of the 2 notes tagged `home` below: what they are about, what \
         is decided, and what is still open. Cite notes by their id."
    );
    assert_eq!(
        messages[1]["content"]["resource"],
        json!({"uri": "notes://2", "mimeType": "text/markdown", "text": "# Rent (note 2)\n\nb"})
    );
    // The tag completes from the tags in use, the most used first.
    let completed = client
        .request(
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": "summarise_tag"},
                "argument": {"name": "tag", "value": ""}
            }),
        )
        .await
        .unwrap();
    assert_eq!(completed["completion"]["values"], json!(["home", "work"]));
    let none = client
        .request(
            "prompts/get",
            json!({"name": "summarise_tag", "arguments": {"tag": "garden"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        none.message,
        "prompt `summarise_tag` failed: no note is tagged `garden`; `list_tags` shows the tags \
         in use"
    );
}

#[tokio::test]
async fn each_note_is_a_resource_that_tells_its_subscribers_when_it_changes() {
    let client = client().await;
    client
        .call(
            "add_note",
            json!({"title": "Groceries", "body": "Milk, eggs", "tags": ["home"]}),
        )
        .await
        .unwrap();
    let read = client
        .request("resources/read", json!({"uri": "notes://1"}))
        .await
        .unwrap();
    assert_eq!(
        read,
        json!({"contents": [{
            "uri": "notes://1",
            "mimeType": "text/markdown",
            "text": "# Groceries\n\nTags: `home`\n\nMilk, eggs"
        }]})
    );
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "notes://{id}"
    );
    let missing = client
        .request("resources/read", json!({"uri": "notes://9"}))
        .await
        .unwrap_err();
    assert_eq!(
        (missing.code, missing.data),
        (-32002, Some(json!({"uri": "notes://9"})))
    );

    // A subscriber is told of each change to the note, and of nothing else.
    client
        .request("resources/subscribe", json!({"uri": "notes://1"}))
        .await
        .unwrap();
    client
        .call("tag_note", json!({"id": 1, "tags": ["shop"]}))
        .await
        .unwrap();
    client
        .call("add_note", json!({"title": "Other", "body": "x"}))
        .await
        .unwrap();
    assert_eq!(
        client.sent(),
        [json!({
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "notes://1"}
        })]
    );
    client
        .request("resources/unsubscribe", json!({"uri": "notes://1"}))
        .await
        .unwrap();
    client.call("delete_note", json!({"id": 1})).await.unwrap();
    assert_eq!(client.sent(), Vec::<Value>::new());
}

#[tokio::test]
async fn a_note_id_completes_from_the_ids_in_use() {
    let client = client().await;
    for title in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"] {
        client
            .call("add_note", json!({"title": title, "body": ""}))
            .await
            .unwrap();
    }
    let completed = client
        .request(
            "completion/complete",
            json!({
                "ref": {"type": "ref/resource", "uri": "notes://{id}"},
                "argument": {"name": "id", "value": "1"}
            }),
        )
        .await
        .unwrap();
    assert_eq!(
        completed["completion"]["values"],
        json!(["12", "11", "10", "1"])
    );
}

#[tokio::test]
async fn search_notes_finds_words_by_their_start_best_first() {
    let client = client().await;
    for (title, body, tags) in [
        ("Groceries", "Milk, eggs and bread", json!(["home"])),
        ("Begged", "He begged for bread", json!([])),
        ("Eggplant", "Roast it with milk", json!(["recipe"])),
    ] {
        let added = client
            .call(
                "add_note",
                json!({"title": title, "body": body, "tags": tags}),
            )
            .await
            .unwrap();
        assert!(!added.is_error(), "{}", added.text());
    }
    let found = client
        .call("search_notes", json!({"query": "EGG milk \"AND\" *"}))
        .await
        .unwrap();
    assert!(!found.is_error(), "{}", found.text());
    // `"AND"` is a word like another (the body's "and"), `*` none; "begged" does not start
    // with "egg".
    assert_eq!(
        found.structured().unwrap(),
        &json!({"matches": [
            {"id": 1, "title": "Groceries", "snippet": "Milk, eggs and bread", "score": 3},
            {"id": 3, "title": "Eggplant", "snippet": "Roast it with milk", "score": 2},
        ]})
    );
    let found = client
        .call("search_notes", json!({"query": "bread recipe", "limit": 2}))
        .await
        .unwrap();
    let ids: Vec<&Value> = found.structured().unwrap()["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["id"])
        .collect();
    assert_eq!(ids, [&json!(3), &json!(2)]);
}
