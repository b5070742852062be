//! `notes-server` on the kinds of standard input and output clients give it: Unix sockets (what
//! Node.js clients spawn servers with) and one pipe shared by stdout and stderr (`2>&1`).

#![cfg(unix)]

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(10);

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "transport-test", "version": "0"}}})
}

fn requests() -> Vec<Value> {
    vec![
        initialize(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "add_note", "arguments": {"title": "Socket", "body": "works"}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
    ]
}

/// Reads JSON-RPC responses (lines that parse as JSON objects with an `id`) until `count` came.
fn responses(output: impl Read, count: usize) -> Vec<Value> {
    let mut found = Vec::new();
    for line in BufReader::new(output).lines() {
        let line = line.expect("the output reads");
        // A log line on a shared pipe is not JSON.
        if let Ok(message) = serde_json::from_str::<Value>(&line)
            && message.get("id").is_some()
        {
            found.push(message);
            if found.len() == count {
                break;
            }
        }
    }
    found
}

/// Checks the four answers, in id order: a call may be answered after a later `ping`.
fn check(mut responses: Vec<Value>) {
    responses.sort_by_key(|r| r["id"].as_i64());
    let ids: Vec<&Value> = responses.iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&json!(1), &json!(2), &json!(3), &json!(4)]);
    assert!(
        responses.iter().all(|r| r.get("error").is_none()),
        "{responses:?}"
    );
    let tools = responses[1]["result"]["tools"]
        .as_array()
        .expect("a tool list");
    // Every tool but `move_note`, which only the board view calls: this client shows no views.
    assert_eq!(tools.len(), 12);
    assert_eq!(
        responses[2]["result"]["structuredContent"]["title"],
        "Socket"
    );
    assert_eq!(responses[3]["result"], json!({}));
}

#[test]
fn sockets_as_stdin_and_stdout() {
    let (client_in, server_in) = UnixStream::pair().unwrap();
    let (client_out, server_out) = UnixStream::pair().unwrap();
    client_out.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_notes-server"))
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(server_in)))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(server_out)))
        .stderr(Stdio::null())
        .spawn()
        .expect("notes-server starts");
    let mut input = client_in;
    for request in requests() {
        writeln!(input, "{request}").unwrap();
    }
    check(responses(&client_out, 4));
    drop(input);
    assert!(child.wait().unwrap().success());
}

#[test]
fn stdout_and_stderr_on_one_pipe() {
    let (reader, writer) = std::io::pipe().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_notes-server"))
        .env("RUST_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .spawn()
        .expect("notes-server starts");
    let mut input = child.stdin.take().unwrap();
    for request in requests() {
        writeln!(input, "{request}").unwrap();
    }
    check(responses(reader, 4));
    drop(input);
    assert!(child.wait().unwrap().success());
}

/// What the server writes on stderr when it answers `requests()` with `RUST_LOG` set so.
fn stderr_with_rust_log(rust_log: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_notes-server"))
        .env("RUST_LOG", rust_log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("notes-server starts");
    let mut input = child.stdin.take().unwrap();
    for request in requests() {
        writeln!(input, "{request}").unwrap();
    }
    drop(input);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    check(responses(&output.stdout[..], 4));
    String::from_utf8(output.stderr).unwrap()
}

#[test]
fn rust_log_filters_by_target_and_level() {
    let quiet = stderr_with_rust_log("warn");
    assert!(!quiet.contains(" INFO "), "{quiet}");
    let debug = stderr_with_rust_log("info,toolwright::stdio=debug");
    assert!(
        debug.contains(" INFO toolwright::server::start: serving MCP"),
        "{debug}"
    );
    assert!(debug.contains(" DEBUG toolwright::stdio"), "{debug}");
    assert!(!debug.contains(" DEBUG toolwright::server"), "{debug}");
}

#[test]
fn a_rust_log_not_understood_is_named_and_info_is_logged() {
    let stderr = stderr_with_rust_log("toolwright=loud");
    assert!(
        stderr.contains(
            "WARN toolwright::logging: RUST_LOG=\"toolwright=loud\" is not understood \
             (error parsing level filter: expected one of \"off\", \"error\", \"warn\", \"info\", \
             \"debug\", \"trace\", or a number 0-5): logging at info"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(" INFO toolwright::server::start: serving MCP"),
        "{stderr}"
    );
}
