//! notes-server mounted by a gateway: its tools served under the mount's name beside the
//! gateway's own, each call forwarded with its progress, and a server that dies mid-call
//! answered for and started again.

use std::time::Duration;

use serde_json::{Value, json};
use toolwright::Server;
use toolwright::gateway::{Lock, NewTools, Upstream, list_all};
use toolwright::registry::Registry;
use toolwright::testing::TestClient;

const NOTES: &str = env!("CARGO_BIN_EXE_notes-server");

/// A gateway that serves nothing of its own and mounts `upstream` as `notes`.
async fn gateway(upstream: Upstream) -> TestClient {
    locked_gateway(upstream, None).await
}

/// [`gateway`], serving the mounted tools as `lock` approved them, if given.
async fn locked_gateway(upstream: Upstream, lock: Option<Lock>) -> TestClient {
    let mut server = Server::new("gateway", "1.0.0")
        .registry(Registry::from_registrations([]).unwrap())
        .mount("notes", upstream);
    if let Some(lock) = lock {
        server = server.lock(lock);
    }
    server.test_client().await.expect("the gateway starts")
}

async fn listed_names(client: &TestClient) -> Vec<String> {
    let tools = client.list_tools().await.unwrap();
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_tool_that_changed_since_it_was_approved_is_held_back_until_approved_again() {
    let notes = || Upstream::command(NOTES, Vec::<String>::new());
    let listed = list_all(&[("notes".to_owned(), notes())]).await.unwrap();
    let now = &listed[0].tools;
    // What a person approved differs from what the server lists now: `add_note`'s description
    // changed since (as in a rug pull), and `get_note` is new.
    let mut then = now.clone();
    let add_note = then.iter_mut().find(|t| t["name"] == "add_note").unwrap();
    add_note["description"] = json!("Add a note.");
    then.retain(|t| t["name"] != "get_note");
    let mut lock = Lock::default();
    lock.approve("notes", &then);

    let client = locked_gateway(notes(), Some(lock.clone())).await;
    let names = listed_names(&client).await;
    assert!(!names.contains(&"notes__add_note".to_owned()), "{names:?}");
    assert!(!names.contains(&"notes__get_note".to_owned()), "{names:?}");
    assert!(names.contains(&"notes__list_notes".to_owned()), "{names:?}");
    let approve = "It is served once a person approves it in the gateway's lock \
                   (`toolwright-gateway --approve` prints the change and approves it).";
    let changed = client
        .call("notes__add_note", json!({"title": "t", "body": "b"}))
        .await
        .unwrap_err();
    assert_eq!(changed.code, -32602);
    assert_eq!(
        changed.message,
        format!(
            "tool `notes__add_note` is held back: it changed since it was approved:\n  \
             cosmetic: add_note: description changed\n{approve}"
        )
    );
    let new = client
        .call("notes__get_note", json!({"id": 1}))
        .await
        .unwrap_err();
    assert_eq!(
        new.message,
        format!(
            "tool `notes__get_note` is held back: it is new since the gateway's lock was \
             written\n{approve}"
        )
    );

    // A mount that admits new tools serves `get_note`, not the changed `add_note`.
    let admitting = locked_gateway(notes().new_tools(NewTools::Admit), Some(lock.clone())).await;
    let names = listed_names(&admitting).await;
    assert!(names.contains(&"notes__get_note".to_owned()), "{names:?}");
    assert!(!names.contains(&"notes__add_note".to_owned()), "{names:?}");

    // Approved as they are now, both are served.
    let changes: Vec<String> = lock
        .approve("notes", now)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        changes,
        [
            "additive: get_note: tool added",
            "cosmetic: add_note: description changed"
        ]
    );
    let approved = locked_gateway(notes(), Some(lock)).await;
    let names = listed_names(&approved).await;
    assert!(names.contains(&"notes__add_note".to_owned()), "{names:?}");
    assert!(names.contains(&"notes__get_note".to_owned()), "{names:?}");
}

#[tokio::test]
async fn a_mounted_servers_tools_are_served_under_its_name_and_forwarded() {
    let client = gateway(Upstream::command(NOTES, Vec::<String>::new())).await;
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"notes__add_note"), "{names:?}");
    assert!(
        names.iter().all(|name| name.starts_with("notes__")),
        "{names:?}"
    );
    // What notes-server says of its tool, under the mounted name.
    let add_note = tools
        .iter()
        .find(|t| t["name"] == "notes__add_note")
        .unwrap();
    assert_eq!(
        add_note["description"],
        "Add a note to the notebook and return it with its new id."
    );
    assert_eq!(
        add_note["inputSchema"]["required"],
        json!(["title", "body"])
    );

    let added = client
        .call(
            "notes__add_note",
            json!({"title": "Buy milk", "body": "Two litres."}),
        )
        .await
        .unwrap();
    assert!(!added.is_error(), "{}", added.text());
    let note: Value = added.output().unwrap();
    assert_eq!(note["title"], "Buy milk");

    // The gateway checks arguments against the mounted tool's schema before forwarding.
    let refused = client
        .call("notes__add_note", json!({"title": 7}))
        .await
        .unwrap();
    assert!(refused.is_error());
    assert!(
        refused.text().starts_with(
            "invalid arguments for tool `notes__add_note`:\n- missing required argument `body`"
        ),
        "{}",
        refused.text()
    );

    // A tool error of the mounted server reaches the client as it was.
    let missing = client
        .call("notes__get_note", json!({"id": 999}))
        .await
        .unwrap();
    assert!(missing.is_error());
    assert!(missing.text().contains("999"), "{}", missing.text());

    // Progress the mounted server reports is passed on under the client's token.
    let exported = client
        .request(
            "tools/call",
            json!({
                "name": "notes__export_notes",
                "arguments": {"format": "markdown"},
                "_meta": {"progressToken": "export-1"},
            }),
        )
        .await
        .unwrap();
    assert!(
        exported["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("# Buy milk")
    );
    let progress: Vec<Value> = client
        .sent()
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"].clone())
        .collect();
    assert_eq!(
        progress.last(),
        Some(&json!({
            "progressToken": "export-1",
            "progress": 1.0,
            "total": 1.0,
            "message": "1 of 1 notes",
        })),
        "{progress:?}"
    );
}

#[tokio::test]
async fn a_mounted_server_that_dies_mid_call_fails_the_call_naming_it_and_comes_back() {
    let dir = std::env::temp_dir().join(format!("notes-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join("pid");
    let script = format!("echo $$ > '{}'; exec '{NOTES}'", pid_file.display());
    let client = std::sync::Arc::new(gateway(Upstream::command("sh", ["-c", &script])).await);
    let waiting = {
        let client = std::sync::Arc::clone(&client);
        tokio::spawn(async move {
            client
                .call("notes__wait_for_note", json!({"text": "never"}))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    std::process::Command::new("kill")
        .args(["-KILL", pid.trim()])
        .status()
        .unwrap();
    let died = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("the call ends once the server dies")
        .unwrap()
        .unwrap();
    assert!(died.is_error());
    assert!(
        died.text().starts_with(
            "`notes` closed the connection before answering `tools/call`: the process exited"
        ),
        "{}",
        died.text()
    );
    // The gateway starts it again: its tools are called as before.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let listed = client.call("notes__list_notes", json!({})).await.unwrap();
        if !listed.is_error() {
            break;
        }
        // Meanwhile, a call says why it cannot be made.
        assert!(
            listed
                .text()
                .starts_with("`notes` cannot be called now: its connection ended"),
            "{}",
            listed.text()
        );
        assert!(
            std::time::Instant::now() < deadline,
            "the server is not back after 15 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let restarted = std::fs::read_to_string(&pid_file).unwrap();
    assert_ne!(restarted, pid, "a new process serves");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_mounted_servers_prompts_are_served_under_its_name_and_got_from_it() {
    let client = gateway(Upstream::command(NOTES, Vec::<String>::new())).await;
    let listed = client.request("prompts/list", json!({})).await.unwrap();
    let prompts = listed["prompts"].as_array().unwrap();
    let summarise = prompts
        .iter()
        .find(|p| p["name"] == "notes__summarise_tag")
        .unwrap_or_else(|| panic!("notes__summarise_tag among {prompts:?}"));
    assert_eq!(summarise["title"], "Summarise a tag");
    assert_eq!(summarise["arguments"][0]["name"], "tag");

    let added = client
        .call(
            "notes__add_note",
            json!({"title": "Gateways", "body": "They mount servers.", "tags": ["infra"]}),
        )
        .await
        .unwrap();
    assert!(!added.is_error(), "{}", added.text());
    let got = client
        .request(
            "prompts/get",
            json!({"name": "notes__summarise_tag", "arguments": {"tag": "infra"}}),
        )
        .await
        .unwrap();
    let messages = got["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{got}");
    assert!(
        messages[0]["content"]["text"]
            .as_str()
            .unwrap()
            .starts_with("Summarise the 1 notes tagged `infra`"),
        "{got}"
    );
    // An embedded resource passes on as the server sent it.
    assert_eq!(messages[1]["content"]["type"], "resource", "{got}");
    assert_eq!(
        messages[1]["content"]["resource"]["mimeType"], "text/markdown",
        "{got}"
    );

    // The server completes its prompt's arguments.
    let completed = client
        .request(
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": "notes__summarise_tag"},
                "argument": {"name": "tag", "value": "inf"},
            }),
        )
        .await
        .unwrap();
    assert_eq!(
        completed["completion"]["values"],
        json!(["infra"]),
        "{completed}"
    );

    // The server's refusal reaches the client as the server said it.
    let refused = client
        .request(
            "prompts/get",
            json!({"name": "notes__summarise_tag", "arguments": {"tag": "nothing-here"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code, -32602);
    assert!(
        refused.message.contains("no note is tagged `nothing-here`"),
        "{}",
        refused.message
    );
    // The gateway checks the argument names itself.
    let unknown = client
        .request(
            "prompts/get",
            json!({"name": "notes__summarise_tag", "arguments": {"topic": "x"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        unknown.message,
        "unknown argument `topic` for prompt `notes__summarise_tag`; it takes `tag`, `limit`"
    );
}

#[tokio::test]
async fn a_mounted_servers_resources_are_served_under_its_name_and_read_from_it() {
    let client = gateway(Upstream::command(NOTES, Vec::<String>::new())).await;
    // `notes://{id}` on its server is `notes://notes/{id}` here, under the mount's name.
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    let note = templates["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["uriTemplate"] == "notes://notes/{id}")
        .unwrap_or_else(|| panic!("notes://notes/{{id}} among {templates}"));
    assert_eq!(
        (&note["name"], &note["mimeType"]),
        (&json!("notes__note"), &json!("text/markdown"))
    );
    // Its MCP Apps view too, and the tools that show it name it here.
    let listed = client.request("resources/list", json!({})).await.unwrap();
    let views: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(views, ["ui://notes/notes/board.html"], "{listed}");
    let tools = client.list_tools().await.unwrap();
    let shown: Vec<&Value> = tools
        .iter()
        .filter_map(|t| t.pointer("/_meta/ui/resourceUri"))
        .collect();
    assert!(!shown.is_empty(), "{tools:?}");
    assert!(
        shown
            .iter()
            .all(|uri| *uri == "ui://notes/notes/board.html"),
        "{shown:?}"
    );
    let view = client
        .request(
            "resources/read",
            json!({"uri": "ui://notes/notes/board.html"}),
        )
        .await
        .unwrap();
    assert_eq!(view["contents"][0]["uri"], "ui://notes/notes/board.html");
    assert!(
        view["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("<html")
    );

    let added = client
        .call(
            "notes__add_note",
            json!({"title": "Mounts", "body": "Under their names.", "tags": ["infra"]}),
        )
        .await
        .unwrap();
    assert!(!added.is_error(), "{}", added.text());
    let read = client
        .request("resources/read", json!({"uri": "notes://notes/1"}))
        .await
        .unwrap();
    assert_eq!(
        read,
        json!({"contents": [{
            "uri": "notes://notes/1",
            "mimeType": "text/markdown",
            "text": "# Mounts\n\nTags: `infra`\n\nUnder their names."
        }]})
    );
    // Its server's "not found", under the URI here.
    let missing = client
        .request("resources/read", json!({"uri": "notes://notes/99"}))
        .await
        .unwrap_err();
    assert_eq!(
        (missing.code, missing.data),
        (-32002, Some(json!({"uri": "notes://notes/99"})))
    );
    // A URI under no mount's name.
    let nowhere = client
        .request("resources/read", json!({"uri": "notes://elsewhere/1"}))
        .await
        .unwrap_err();
    assert_eq!(nowhere.code, -32002);
    assert_eq!(
        nowhere.message,
        "resource not found: `notes://elsewhere/1`; this server has the resources of the \
         servers mounted as `notes`, each at `scheme://<mount>/...`"
    );
    // Its server completes the template's variable.
    let completed = client
        .request(
            "completion/complete",
            json!({
                "ref": {"type": "ref/resource", "uri": "notes://notes/{id}"},
                "argument": {"name": "id", "value": ""},
            }),
        )
        .await
        .unwrap();
    assert_eq!(
        completed["completion"]["values"],
        json!(["1"]),
        "{completed}"
    );

    // A subscriber is told of a change, under the URI here.
    client
        .request("resources/subscribe", json!({"uri": "notes://notes/1"}))
        .await
        .unwrap();
    let _ = client.sent();
    let tagged = client
        .call("notes__tag_note", json!({"id": 1, "tags": ["gateway"]}))
        .await
        .unwrap();
    assert!(!tagged.is_error(), "{}", tagged.text());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let updated = client.sent().into_iter().any(|m| {
            m["method"] == "notifications/resources/updated"
                && m["params"]["uri"] == "notes://notes/1"
        });
        if updated {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no notifications/resources/updated in ten seconds"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_mounted_server_that_writes_garbage_is_read_past_and_none_of_it_forwarded() {
    // Before each line the server writes: a line that is no JSON, and an answer to a request
    // nobody made.
    let script = format!(
        "'{NOTES}' | while IFS= read -r line; do echo 'garbage {{'; \
         echo '{{\"jsonrpc\":\"2.0\",\"id\":999999,\"result\":{{}}}}'; \
         printf '%s\\n' \"$line\"; done"
    );
    let client = gateway(Upstream::command("sh", ["-c", &script])).await;
    let names = listed_names(&client).await;
    assert!(names.contains(&"notes__add_note".to_owned()), "{names:?}");
    let added = client
        .call("notes__add_note", json!({"title": "t", "body": "b"}))
        .await
        .unwrap();
    assert!(!added.is_error(), "{}", added.text());
    let listed = client.call("notes__list_notes", json!({})).await.unwrap();
    assert!(listed.text().contains("\"t\""), "{}", listed.text());
    // Nothing of it reached the gateway's client.
    assert_eq!(client.sent(), Vec::<Value>::new());
}

#[tokio::test]
async fn a_call_result_that_is_no_object_is_refused_naming_the_mounted_server() {
    // Every call's result the server writes becomes an array; its lists are left alone.
    let script =
        format!("'{NOTES}' | sed -u '/\"content\":\\[/s/\"result\":{{.*}}$/\"result\":[1,2]}}/'");
    let client = gateway(Upstream::command("sh", ["-c", &script])).await;
    let listed = client.call("notes__list_notes", json!({})).await.unwrap();
    assert!(listed.is_error(), "{}", listed.text());
    assert_eq!(
        listed.text(),
        "`notes` answered the call of `list_notes` with a result that is not a JSON object"
    );
    // The gateway goes on serving, and passes nothing of it on.
    let names = listed_names(&client).await;
    assert!(names.contains(&"notes__add_note".to_owned()), "{names:?}");
    assert_eq!(client.sent(), Vec::<Value>::new());
}

#[tokio::test]
async fn a_mounted_server_past_the_mounts_time_limit_costs_its_caller_a_clear_error() {
    let upstream =
        Upstream::command(NOTES, Vec::<String>::new()).timeout(Some(Duration::from_millis(300)));
    let client = gateway(upstream).await;
    let waited = client
        .call("notes__wait_for_note", json!({"text": "never"}))
        .await
        .unwrap();
    assert!(waited.is_error());
    assert_eq!(
        waited.text(),
        "tool `notes__wait_for_note` did not finish within its time limit of 300ms, and was stopped"
    );
    // The mounted server goes on serving.
    let listed = client.call("notes__list_notes", json!({})).await.unwrap();
    assert!(!listed.is_error(), "{}", listed.text());
}

#[tokio::test]
async fn a_server_that_cannot_be_mounted_stops_the_start_naming_it() {
    let refused = Server::new("gateway", "1.0.0")
        .registry(Registry::from_registrations([]).unwrap())
        .mount(
            "ghost",
            Upstream::command("/nonexistent/server", Vec::<String>::new()),
        )
        .test_client()
        .await
        .unwrap_err();
    assert!(
        refused.to_string().starts_with(
            "cannot mount `ghost`: `ghost` could not be reached: `/nonexistent/server` could \
             not be started: "
        ),
        "{refused}"
    );
}
