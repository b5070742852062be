//! The real `conformance-server` binary over stdio: the fixtures the conformance suite calls
//! answer as the suite expects.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// Sends each message on one line, closes stdin, and returns every message the server wrote.
fn session(messages: &[Value]) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_conformance-server"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut lines = stdout.lines();
    let mut out = Vec::new();
    for message in messages {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        // Wait for each request's response before the next, so notifications stay in order.
        if let Some(id) = message.get("id") {
            for line in lines.by_ref() {
                let reply: Value = serde_json::from_str(&line.unwrap()).unwrap();
                let done = reply.get("id") == Some(id);
                out.push(reply);
                if done {
                    break;
                }
            }
        }
    }
    drop(stdin);
    out.extend(lines.map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap()));
    assert!(child.wait().unwrap().success());
    out
}

fn initialize() -> [Value; 2] {
    [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

fn call(id: u64, name: &str, meta: Option<Value>) -> Value {
    let mut params = json!({"name": name, "arguments": {}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn result(messages: &[Value], id: u64) -> &Value {
    let reply = messages
        .iter()
        .find(|m| m["id"] == json!(id))
        .unwrap_or_else(|| panic!("no reply to {id}: {messages:?}"));
    &reply["result"]
}

#[test]
fn the_fixtures_answer_as_the_suite_expects() {
    let mut messages = initialize().to_vec();
    messages.extend([
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        call(2, "test_simple_text", None),
        call(3, "test_multiple_content_types", None),
        call(4, "test_error_handling", None),
        call(5, "test_audio_content", None),
        call(
            6,
            "test_tool_with_progress",
            Some(json!({"progressToken": "p"})),
        ),
        call(7, "test_tool_with_logging", None),
    ]);
    let out = session(&messages);

    let tools = result(&out, 1)["tools"].as_array().unwrap();
    for tool in tools {
        assert!(
            tool["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{tool}"
        );
    }
    let fixture = tools
        .iter()
        .find(|t| t["name"] == "json_schema_2020_12_tool")
        .unwrap();
    assert_eq!(
        fixture["inputSchema"],
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"type": "object", "properties": {
                "street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": false
        })
    );

    assert_eq!(
        result(&out, 2)["content"],
        json!([{"type": "text", "text": "This is a simple text response for testing."}])
    );

    let mixed = result(&out, 3)["content"].as_array().unwrap();
    let kinds: Vec<&str> = mixed.iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "image", "resource"]);
    assert_eq!(mixed[1]["mimeType"], "image/png");
    assert!(
        mixed[1]["data"]
            .as_str()
            .unwrap()
            .starts_with("iVBORw0KGgo")
    );

    assert_eq!(result(&out, 4)["isError"], true);
    assert_eq!(result(&out, 4)["content"][0]["type"], "text");

    let audio = &result(&out, 5)["content"][0];
    assert_eq!(
        (&audio["type"], &audio["mimeType"]),
        (&json!("audio"), &json!("audio/wav"))
    );
    assert!(
        audio["data"].as_str().unwrap().starts_with("UklGR"),
        "{audio}"
    );

    let progress: Vec<(f64, f64)> = out
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| {
            (
                m["params"]["progress"].as_f64().unwrap(),
                m["params"]["total"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(progress, [(0.0, 100.0), (50.0, 100.0), (100.0, 100.0)]);

    let logs: Vec<(&str, &str)> = out
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| {
            (
                m["params"]["level"].as_str().unwrap(),
                m["params"]["data"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        logs,
        [
            ("info", "Tool execution started"),
            ("info", "Tool processing data"),
            ("info", "Tool execution completed")
        ]
    );
}

/// The command line of a server built on `Server::run`, as a newcomer meets it.
#[test]
fn help_and_version_speak_of_the_server() {
    let run = |arg: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_conformance-server"))
            .arg(arg)
            .output()
            .expect("the server runs");
        assert!(output.status.success(), "{arg}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(run("--version"), "conformance-server 0.1.0\n");
    let help = run("--help");
    assert!(
        help.starts_with("An MCP server: serves its tools on stdio, or over HTTP with --http.\n"),
        "{help}"
    );
    assert!(
        help.contains("Usage: conformance-server [OPTIONS]"),
        "{help}"
    );
    // Nothing of the options' Rust documentation: no code fence, no intra-doc link.
    assert!(!help.contains("```") && !help.contains("[`"), "{help}");
}
