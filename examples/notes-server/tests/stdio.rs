//! The real `notes-server` binary, spoken to as an MCP client would: JSON-RPC lines on its stdin
//! and stdout, notes kept in a file across restarts.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(10);

/// A file in the temporary directory, removed at the end of the test.
struct TempFile(PathBuf);

impl TempFile {
    fn new(what: &str) -> TempFile {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        TempFile(std::env::temp_dir().join(format!(
            "notes-server-{what}-{}-{nanos}.json",
            std::process::id()
        )))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A running `notes-server` and everything it has written to stdout so far.
struct NotesServer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<String>,
    stderr: Option<JoinHandle<String>>,
    transcript: Vec<String>,
}

/// How a server ended.
struct Ended {
    status: ExitStatus,
    /// Every line it wrote to stdout.
    transcript: Vec<String>,
    /// Lines the test had not read when stdin closed, or written after.
    unread: Vec<String>,
    stderr: String,
}

impl NotesServer {
    fn spawn(data: &Path) -> NotesServer {
        NotesServer::spawn_with(data, &[])
    }

    fn spawn_with(data: &Path, args: &[&str]) -> NotesServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_notes-server"))
            .arg("--data")
            .arg(data)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("notes-server starts");
        let stdout = child.stdout.take().unwrap();
        let (lines, received) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = child.stderr.take().unwrap();
        let stderr = thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
        NotesServer {
            stdin: child.stdin.take(),
            child,
            stdout: received,
            stderr: Some(stderr),
            transcript: Vec::new(),
        }
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        self.send_line(&message.to_string());
    }

    fn recv(&mut self) -> Value {
        let line = self
            .stdout
            .recv_timeout(TIMEOUT)
            .expect("the server answers in time");
        self.transcript.push(line.clone());
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let response = self.recv();
        assert_eq!(response["id"], id, "{response}");
        response
    }

    /// Calls a tool; returns the `CallToolResult`.
    fn call(&mut self, id: i64, name: &str, arguments: Value) -> Value {
        let response = self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        response
            .get("result")
            .unwrap_or_else(|| panic!("not a result: {response}"))
            .clone()
    }

    fn initialize(&mut self) -> Value {
        let response = self.request(
            0,
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "stdio-test", "version": "1.0.0"}
            }),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        response["result"].clone()
    }

    /// Closes stdin, as a client does to stop the server, and waits for it to exit.
    fn finish(mut self) -> Ended {
        drop(self.stdin.take());
        let mut unread = Vec::new();
        loop {
            match self.stdout.recv_timeout(TIMEOUT) {
                Ok(line) => unread.push(line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("stdout stays open after stdin closed"),
            }
        }
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the server does not exit");
            thread::sleep(Duration::from_millis(10));
        };
        let stderr = self.stderr.take().unwrap().join().unwrap();
        let mut transcript = std::mem::take(&mut self.transcript);
        transcript.extend(unread.iter().cloned());
        Ended {
            status,
            transcript,
            unread,
            stderr,
        }
    }
}

impl Drop for NotesServer {
    fn drop(&mut self) {
        // A failed test must not leave a server behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn assert_success(ended: &Ended) {
    assert_eq!(
        ended.status.code(),
        Some(0),
        "exit status; stderr:\n{}",
        ended.stderr
    );
    assert_eq!(ended.unread, Vec::<String>::new());
    for line in &ended.transcript {
        let message: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stdout carried a line that is not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        assert!(
            message.get("id").is_some() || message.get("method").is_some(),
            "not a JSON-RPC message: {line}"
        );
    }
}

#[test]
fn notes_over_stdio_survive_a_restart() {
    let data = TempFile::new("stdio");
    let mut server = NotesServer::spawn(&data.0);

    let init = server.initialize();
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(
        init["serverInfo"],
        json!({"name": "notes-server", "version": env!("CARGO_PKG_VERSION")})
    );
    assert_eq!(init["capabilities"]["tools"], json!({"listChanged": true}));
    assert!(
        init["instructions"]
            .as_str()
            .is_some_and(|i| i.starts_with("A notebook.")),
        "{init}"
    );

    let list = server.request(1, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("a list of tools");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.len() >= 8, "{names:?}");
    assert!(
        names.is_sorted_by(|a, b| a.as_bytes() < b.as_bytes()),
        "{names:?}"
    );
    for name in ["add_note", "get_note", "list_notes", "search_notes"] {
        assert!(names.contains(&name), "{name} is missing from {names:?}");
    }
    for tool in tools {
        let name = &tool["name"];
        assert!(
            tool["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{name} has no description"
        );
        assert_eq!(tool["inputSchema"]["type"], "object", "{name}");
        for (property, schema) in tool["inputSchema"]["properties"].as_object().unwrap() {
            assert!(
                schema["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{name}: `{property}` has no description"
            );
        }
    }

    let added = server.call(
        2,
        "add_note",
        json!({"title": "  Groceries ", "body": "eggs, milk", "tags": ["Home", "home", " errands "]}),
    );
    let note = added["structuredContent"].clone();
    let id = note["id"].as_u64().expect("an id");
    let created = note["created_at"].as_u64().expect("a creation time");
    assert!(created > 0);
    assert_eq!(
        note,
        json!({
            "id": id,
            "title": "Groceries",
            "body": "eggs, milk",
            "tags": ["errands", "home"],
            "created_at": created,
            "updated_at": created
        })
    );
    assert_eq!(
        added,
        json!({"content": [{"type": "text", "text": note.to_string()}], "structuredContent": note})
    );
    assert_eq!(server.call(3, "get_note", json!({"id": id})), added);

    server.send_line("this is not JSON");
    let reply = server.recv();
    assert_eq!(reply["id"], Value::Null, "{reply}");
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert_eq!(
        server.request(4, "ping", json!({})),
        json!({"jsonrpc": "2.0", "id": 4, "result": {}})
    );

    assert_eq!(
        server.request(
            5,
            "tools/call",
            json!({"name": "delete_everything", "arguments": {}})
        ),
        json!({
            "jsonrpc": "2.0",
            "id": 5,
            "error": {"code": -32602, "message": "unknown tool `delete_everything`"}
        })
    );
    assert_eq!(
        server.call(6, "get_note", json!({"id": "the first one"})),
        json!({
            "content": [{
                "type": "text",
                "text": "invalid arguments for tool `get_note`: argument `id`: \"the first one\" \
                         is not of type \"integer\""
            }],
            "isError": true
        })
    );

    let ended = server.finish();
    assert_success(&ended);
    // The banner and logs go to stderr; stdout carried only the messages above.
    assert!(
        ended
            .stderr
            .contains(&format!("notes are kept in {}", data.0.display())),
        "{}",
        ended.stderr
    );
    // One line per request and one for the garbage line: nothing else.
    assert_eq!(ended.transcript.len(), 8);

    let mut again = NotesServer::spawn(&data.0);
    again.initialize();
    assert_eq!(again.call(1, "get_note", json!({"id": id})), added);
    assert_eq!(
        again.call(2, "list_notes", json!({}))["structuredContent"],
        json!({
            "notes": [{"id": id, "title": "Groceries", "tags": ["errands", "home"], "updated_at": created}],
            "total": 1
        })
    );
    assert_success(&again.finish());
}

#[test]
fn the_progressive_catalog_lists_the_core_tools_and_finds_the_others() {
    let data = TempFile::new("progressive");
    let mut server = NotesServer::spawn_with(&data.0, &["--catalog", "progressive"]);
    let init = server.initialize();
    assert!(
        init["instructions"]
            .as_str()
            .unwrap()
            .ends_with("call `call_tool` with its name and arguments."),
        "{init}"
    );
    let listed = server.request(1, "tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "search_tools",
            "call_tool",
            "add_note",
            "list_notes",
            "search_notes"
        ]
    );
    let found = server.call(2, "search_tools", json!({"query": "tag note"}));
    assert_eq!(found["structuredContent"]["tools"][0]["name"], "tag_note");
    let added = server.call(3, "add_note", json!({"title": "T", "body": "B"}));
    let id = added["structuredContent"]["id"].clone();
    let tagged = server.call(
        4,
        "call_tool",
        json!({"name": "tag_note", "arguments": {"id": id, "tags": ["x"]}}),
    );
    assert_eq!(
        tagged["structuredContent"]["tags"],
        json!(["x"]),
        "{tagged}"
    );
    let refused = server.call(5, "call_tool", json!({"name": "search_tools"}));
    assert_eq!(refused["isError"], true, "{refused}");
    assert_success(&server.finish());
}
