//! `toolwright::client` against servers nobody here wrote: `@modelcontextprotocol/server-everything`
//! (npm), over stdio, in each era the client can open. Its sampling and elicitation requests
//! are answered by the client's handlers, its progress reaches the call.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolwright::client::{Client, Endpoint, Notification, Versions};
use toolwright_tests::node::{self, node};

/// server-everything's folder under the target directory, installed from its lock file.
fn everything() -> PathBuf {
    node::installed(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("upstreams"),
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("upstreams"),
        &[],
        "node_modules/@modelcontextprotocol/server-everything/package.json",
        "the client tests against server-everything",
    )
    .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

async fn connect(versions: Versions, notes: Arc<Mutex<Vec<Notification>>>) -> Client {
    Client::builder()
        .name("everything")
        .versions(versions)
        .timeout(Some(Duration::from_secs(30)))
        .on_sampling(|params: Value| async move {
            let asked = params["messages"][0]["content"]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            Ok(json!({
                "role": "assistant",
                "content": {"type": "text", "text": format!("Sunny, as asked: {asked}")},
                "model": "a-test-model",
                "stopReason": "endTurn",
            }))
        })
        .on_elicitation(|_params: Value| async move {
            Ok(json!({"action": "accept", "content": {"name": "Ada Lovelace", "check": true}}))
        })
        .on_notification(move |notification| notes.lock().unwrap().push(notification))
        .connect(Endpoint::command(
            node(),
            [everything().display().to_string(), "stdio".to_owned()],
        ))
        .await
        .expect("server-everything starts")
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/upstreams)"]
async fn server_everything_in_each_era() {
    for versions in [Versions::Auto, Versions::Handshake] {
        let notes = Arc::new(Mutex::new(Vec::new()));
        let client = connect(versions, Arc::clone(&notes)).await;
        assert!(
            ["2026-07-28", "2025-11-25"].contains(&client.protocol_version()),
            "{}",
            client.protocol_version()
        );
        assert_eq!(client.server_info()["name"], "mcp-servers/everything");

        let tools = client.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
        for name in [
            "echo",
            "trigger-sampling-request",
            "trigger-elicitation-request",
            "trigger-long-running-operation",
        ] {
            assert!(names.contains(&name), "{name} among {names:?}");
        }

        let echoed = client
            .call_tool("echo", json!({"message": "hello"}))
            .await
            .unwrap();
        assert_eq!(echoed.text(), "Echo: hello");

        let sampled = client
            .call_tool(
                "trigger-sampling-request",
                json!({"prompt": "the weather?"}),
            )
            .await
            .unwrap();
        assert!(
            sampled.text().contains("Sunny, as asked: "),
            "{}",
            sampled.text()
        );
        assert!(
            sampled.text().contains("the weather?"),
            "{}",
            sampled.text()
        );

        let elicited = client
            .call_tool("trigger-elicitation-request", json!({}))
            .await
            .unwrap();
        assert!(
            elicited.text().contains("- Name: Ada Lovelace"),
            "{}",
            elicited.text()
        );

        let steps = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&steps);
        let ran = client
            .call_tool(
                "trigger-long-running-operation",
                json!({"duration": 1, "steps": 3}),
            )
            .on_progress(move |progress| seen.lock().unwrap().push(progress.progress))
            .await
            .unwrap();
        assert!(!ran.is_error(), "{}", ran.text());
        assert_eq!(*steps.lock().unwrap(), [1.0, 2.0, 3.0]);

        let prompts = client.list_prompts().await.unwrap();
        assert!(!prompts.is_empty());
        let resources = client.list_resources().await.unwrap();
        let uri = resources[0]["uri"].as_str().unwrap();
        let read = client.read_resource(uri).await.unwrap();
        assert_eq!(read["contents"][0]["uri"], uri);
        client.close().await;
    }
}
