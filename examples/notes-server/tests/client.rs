//! notes-server spoken to by `toolwright::client`, as any MCP client would: over stdio and over
//! HTTP, in both protocol eras; and what the client makes of a server that is slow, dies or
//! writes what is not JSON-RPC.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolwright::client::{Client, Endpoint, Error, Notification, Versions};

const NOTES: &str = env!("CARGO_BIN_EXE_notes-server");

async fn connect(endpoint: Endpoint, versions: Versions) -> Client {
    Client::builder()
        .name("notes")
        .versions(versions)
        .timeout(Some(Duration::from_secs(20)))
        .connect(endpoint)
        .await
        .expect("notes-server answers")
}

/// What every client does with notes-server, whatever the transport and era.
async fn use_notes(client: &Client) {
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
    for name in ["add_note", "export_notes", "get_note", "wait_for_note"] {
        assert!(names.contains(&name), "{name} among {names:?}");
    }
    let add_note = tools.iter().find(|tool| tool.name() == "add_note").unwrap();
    assert_eq!(add_note.input_schema()["type"], "object");

    let added = client
        .call_tool(
            "add_note",
            json!({"title": "Buy milk", "body": "Two litres.", "tags": ["shop"]}),
        )
        .await
        .unwrap();
    assert!(!added.is_error(), "{}", added.text());
    let note: Value = added.output().unwrap();
    assert_eq!(note["title"], "Buy milk");

    // A tool error is a result the caller reads, not an `Err`.
    let missing = client
        .call_tool("get_note", json!({"id": 999}))
        .await
        .unwrap();
    assert!(missing.is_error());
    assert!(missing.text().contains("999"), "{}", missing.text());

    // A tool the server does not have is the server's refusal, naming it.
    let unknown = client
        .call_tool("no_such_tool", json!({}))
        .await
        .unwrap_err();
    assert_eq!(unknown.rpc().map(|e| e.code), Some(-32602), "{unknown}");
    assert!(
        unknown
            .to_string()
            .starts_with("`notes` refused `tools/call`: "),
        "{unknown}"
    );

    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&progress);
    let exported = client
        .call_tool("export_notes", json!({"format": "markdown"}))
        .on_progress(move |step| seen.lock().unwrap().push(step))
        .await
        .unwrap();
    assert!(
        exported.text().contains("# Buy milk"),
        "{}",
        exported.text()
    );
    let last = progress
        .lock()
        .unwrap()
        .last()
        .cloned()
        .expect("progress was reported");
    // The last report is of every note (one, or two when a server is used twice).
    assert_eq!(Some(last.progress), last.total);
    let all = format!("{0} of {0} notes", last.progress);
    assert_eq!(last.message.as_deref(), Some(all.as_str()));

    let prompts = client.list_prompts().await.unwrap();
    assert!(
        prompts
            .iter()
            .any(|prompt| prompt["name"] == "summarise_tag")
    );
    let prompt = client
        .get_prompt("summarise_tag", json!({"tag": "shop"}))
        .await
        .unwrap();
    let asked = prompt["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(asked.contains("tagged `shop`"), "{asked}");
    assert!(
        prompt["messages"][1].to_string().contains("Two litres."),
        "{prompt}"
    );
    let completion = client
        .complete(
            json!({"type": "ref/prompt", "name": "summarise_tag"}),
            "tag",
            "sh",
        )
        .await
        .unwrap();
    assert_eq!(completion["values"], json!(["shop"]));

    let id = note["id"].as_u64().unwrap();
    let read = client
        .read_resource(&format!("notes://{id}"))
        .await
        .unwrap();
    assert!(
        read["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Two litres.")
    );
}

#[tokio::test]
async fn over_stdio_in_both_eras() {
    for (versions, expected) in [
        (Versions::Auto, "2026-07-28"),
        (Versions::Handshake, "2025-11-25"),
    ] {
        let client = connect(Endpoint::command(NOTES, Vec::<String>::new()), versions).await;
        assert_eq!(client.protocol_version(), expected);
        assert_eq!(client.server_info()["name"], "notes-server");
        use_notes(&client).await;
        client.close().await;
    }
}

/// notes-server serving HTTP on a port of its own; killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    async fn start() -> HttpServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(NOTES)
            .args(["--http", &format!("127.0.0.1:{port}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn over_http_in_both_eras() {
    let server = HttpServer::start().await;
    for (versions, expected) in [
        (Versions::Stateless, "2026-07-28"),
        (Versions::Handshake, "2025-11-25"),
    ] {
        let client = connect(Endpoint::url(&server.url), versions).await;
        assert_eq!(client.protocol_version(), expected);
        use_notes(&client).await;
        client.close().await;
    }
}

#[tokio::test]
async fn a_subscribed_resource_that_changes_is_announced() {
    let notified = Arc::new(Mutex::new(Vec::<Notification>::new()));
    let seen = Arc::clone(&notified);
    let client = Client::builder()
        .name("notes")
        .versions(Versions::Handshake)
        .on_notification(move |notification| seen.lock().unwrap().push(notification))
        .connect(Endpoint::command(NOTES, Vec::<String>::new()))
        .await
        .unwrap();
    let added = client
        .call_tool("add_note", json!({"title": "Plan", "body": "Draft."}))
        .await
        .unwrap();
    let id = added.output::<Value>().unwrap()["id"].as_u64().unwrap();
    let uri = format!("notes://{id}");
    client.subscribe(&uri).await.unwrap();
    client
        .call_tool("update_note", json!({"id": id, "body": "Final."}))
        .await
        .unwrap();
    let updated = json!({"uri": uri});
    for _ in 0..100 {
        if notified
            .lock()
            .unwrap()
            .iter()
            .any(|n| n.method == "notifications/resources/updated" && n.params == updated)
        {
            client.close().await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no update announced: {:?}", notified.lock().unwrap());
}

#[tokio::test]
async fn a_call_past_its_time_limit_is_cancelled_and_the_client_goes_on() {
    let client = connect(
        Endpoint::command(NOTES, Vec::<String>::new()),
        Versions::Auto,
    )
    .await;
    let waited = client
        .call_tool("wait_for_note", json!({"text": "never"}))
        .timeout(Some(Duration::from_millis(300)))
        .await
        .unwrap_err();
    assert!(matches!(waited, Error::Timeout { .. }), "{waited:?}");
    assert_eq!(
        waited.to_string(),
        "`notes` did not answer `tools/call` within 300ms"
    );
    let tools = client.list_tools().await.unwrap();
    assert!(!tools.is_empty());
}

#[tokio::test]
async fn a_server_that_dies_mid_call_fails_the_call_naming_it() {
    let dir = std::env::temp_dir().join(format!("notes-client-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join("pid");
    let script = format!("echo $$ > '{}'; exec '{NOTES}'", pid_file.display());
    let client = connect(Endpoint::command("sh", ["-c", &script]), Versions::Auto).await;
    let call = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .call_tool("wait_for_note", json!({"text": "never"}))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    Command::new("kill")
        .args(["-KILL", pid.trim()])
        .status()
        .unwrap();
    let died = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call ends once the server dies")
        .unwrap()
        .unwrap_err();
    assert!(matches!(died, Error::Closed { .. }), "{died:?}");
    let message = died.to_string();
    assert!(
        message.starts_with("`notes` closed the connection before answering `tools/call`: "),
        "{message}"
    );
    assert!(message.contains("signal: 9"), "{message}");
    // And every request after it says the same, at once.
    let after = client.list_tools().await.unwrap_err();
    assert!(matches!(after, Error::Closed { .. }), "{after:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn lines_that_are_not_json_rpc_are_dropped_and_the_connection_goes_on() {
    // A server that prints a banner and an answer to nothing before it speaks.
    let script = format!(
        "printf 'Starting notes...\\n{{\"jsonrpc\":\"2.0\",\"id\":999,\"result\":{{}}}}\\n[1,2\\n'; exec '{NOTES}'"
    );
    let client = connect(Endpoint::command("sh", ["-c", &script]), Versions::Auto).await;
    assert_eq!(client.protocol_version(), "2026-07-28");
    let listed = client.list_tools().await.unwrap();
    assert!(listed.iter().any(|tool| tool.name() == "add_note"));
}

#[tokio::test]
async fn a_command_that_cannot_start_is_an_error_naming_it() {
    let refused = Client::builder()
        .name("ghost")
        .connect(Endpoint::command("/nonexistent/server", ["--stdio"]))
        .await
        .unwrap_err();
    assert!(matches!(refused, Error::Connect { .. }), "{refused:?}");
    assert!(
        refused.to_string().starts_with(
            "`ghost` could not be reached: `/nonexistent/server` could not be started: "
        ),
        "{refused}"
    );
}
