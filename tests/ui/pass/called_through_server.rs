//! Tools of several shapes, called over the protocol: what the generated shim reads, lends and
//! returns.

use std::fmt;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use toolwright::{Context, Server, mcp_tool};

#[derive(Deserialize, JsonSchema)]
struct Page {
    offset: u32,
    limit: Option<u32>,
}

#[derive(Serialize, JsonSchema)]
struct Listing {
    folder: String,
    offset: u32,
    limit: Option<u32>,
    kind: String,
}

#[derive(Debug)]
struct NotFound(String);

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no note is titled `{}`", self.0)
    }
}

/// Join borrowed arguments.
#[mcp_tool]
fn join(text: &str, numbers: &[u32], file: &Path) -> String {
    format!("{text} {numbers:?} {}", file.display())
}

/// List a folder.
#[mcp_tool]
async fn list(
    #[arg(default = "inbox")] folder: String,
    #[arg(flatten)] page: Page,
    #[arg(rename = "type")] kind: String,
) -> Listing {
    Listing {
        folder,
        offset: page.offset,
        limit: page.limit,
        kind,
    }
}

/// Read a note.
#[mcp_tool]
fn read(title: String, ctx: Context) -> Result<String, NotFound> {
    if title == "known" {
        Ok(format!("{} read it", ctx.tool_name()))
    } else {
        Err(NotFound(title))
    }
}

/// Do nothing.
#[mcp_tool]
async fn nothing() {}

/// Runs one session: the handshake, then each call; returns each call's result, in order.
async fn call(calls: &[(&str, Value)]) -> Vec<Value> {
    let mut input = String::new();
    let mut line = |message: Value| {
        input.push_str(&message.to_string());
        input.push('\n');
    };
    line(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "ui", "version": "0"},
    }}));
    line(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for (id, (name, arguments)) in calls.iter().enumerate() {
        line(json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}));
    }
    let (server_output, mut output) = tokio::io::duplex(1 << 20);
    Server::new("ui", "0")
        .serve(input.as_bytes(), server_output)
        .await
        .unwrap();
    let mut text = String::new();
    output.read_to_string(&mut text).await.unwrap();
    let mut results = vec![Value::Null; calls.len()];
    for message in text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()) {
        let id = message["id"].as_u64().unwrap() as usize;
        if id > 0 {
            results[id - 1] = message.get("result").cloned().unwrap_or(message);
        }
    }
    results
}

#[tokio::main]
async fn main() {
    let results = call(&[
        ("join", json!({"text": "a", "numbers": [1, 2], "file": "x/y.txt"})),
        ("list", json!({"offset": 3, "type": "memo"})),
        ("list", json!({"folder": "work", "offset": 0, "limit": 5, "type": "todo"})),
        ("read", json!({"title": "known"})),
        ("read", json!({"title": "lost"})),
        ("nothing", json!({})),
        ("join", json!({"text": "a"})),
    ])
    .await;

    assert_eq!(results[0]["content"], json!([{"type": "text", "text": "a [1, 2] x/y.txt"}]));
    assert_eq!(
        results[1]["structuredContent"],
        json!({"folder": "inbox", "offset": 3, "limit": null, "kind": "memo"})
    );
    assert_eq!(
        results[2]["structuredContent"],
        json!({"folder": "work", "offset": 0, "limit": 5, "kind": "todo"})
    );
    assert_eq!(results[3]["content"][0]["text"], "read read it");
    assert_eq!(results[3].get("isError"), None);
    assert_eq!(results[4]["content"][0]["text"], "no note is titled `lost`");
    assert_eq!(results[4]["isError"], true);
    assert_eq!(results[5]["content"], json!([]));
    // Missing arguments are refused before the function runs, naming what is missing.
    assert_eq!(results[6]["isError"], true, "{}", results[6]);
    let refusal = results[6]["content"][0]["text"].as_str().unwrap();
    assert!(refusal.contains("numbers"), "{refusal}");
}
