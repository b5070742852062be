//! `notes-server --print-manifest`, `--profile` and `--diff`, run as a developer runs them; and
//! the flags of serving over HTTP as an operator gives them.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

fn notes_server(args: &[&str]) -> Output {
    notes_server_with(args, &[])
}

/// The variables every server binary reads, which the tests set themselves or not at all.
const VARIABLES: [&str; 10] = [
    "TOOLWRIGHT_TOKEN",
    "TOOLWRIGHT_REDIS_URL",
    "TOOLWRIGHT_OAUTH_ISSUER",
    "TOOLWRIGHT_OAUTH_RESOURCE",
    "TOOLWRIGHT_OAUTH_AUDIENCE",
    "TOOLWRIGHT_OAUTH_SCOPE",
    "TOOLWRIGHT_OAUTH_JWKS_URI",
    "TOOLWRIGHT_OAUTH_INTROSPECT",
    "TOOLWRIGHT_OAUTH_INTROSPECTION_ENDPOINT",
    "TOOLWRIGHT_OAUTH_CLIENT_SECRET",
];

/// `notes-server` with these arguments and variables (and none other of its own), its stdin
/// closed: a server on stdio ends at once.
fn notes_server_with(args: &[&str], variables: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_notes-server"));
    for name in VARIABLES {
        command.env_remove(name);
    }
    command
        .args(args)
        .envs(variables.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("notes-server runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn manifest() -> Value {
    let output = notes_server(&["--print-manifest"]);
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).expect("the manifest is JSON")
}

/// An earlier manifest, written to a file removed at the end of the test.
struct OldManifest(PathBuf);

impl OldManifest {
    fn new(manifest: &Value) -> OldManifest {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir().join(format!(
            "notes-manifest-{}-{nanos}.json",
            std::process::id()
        ));
        std::fs::write(&path, serde_json::to_vec_pretty(manifest).unwrap()).unwrap();
        OldManifest(path)
    }

    fn diff(&self) -> Output {
        notes_server(&["--diff", self.0.to_str().unwrap()])
    }
}

impl Drop for OldManifest {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn tools_mut(manifest: &mut Value) -> &mut Vec<Value> {
    manifest["tools"].as_array_mut().expect("a tools array")
}

#[test]
fn print_manifest_gives_the_same_bytes_every_time_sorted_by_name() {
    let first = notes_server(&["--print-manifest"]);
    let second = notes_server(&["--print-manifest"]);
    assert!(first.status.success(), "{first:?}");
    assert_eq!(first.stdout, second.stdout);
    let manifest: Value = serde_json::from_slice(&first.stdout).unwrap();
    let names: Vec<&str> = manifest["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert!(names.len() >= 8, "{names:?}");
    // It printed and exited: no banner, no serving.
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(!stderr.contains("To connect one"), "{stderr}");
}

#[test]
fn every_profile_prints_a_document_with_names_its_client_accepts() {
    for (profile, list) in [
        ("mcp", "/tools"),
        ("openai", "/tools"),
        ("anthropic", "/tools"),
        ("gemini", "/functionDeclarations"),
    ] {
        let output = notes_server(&["--print-manifest", "--profile", profile]);
        assert!(output.status.success(), "{profile}: {output:?}");
        let document: Value = serde_json::from_slice(&output.stdout).unwrap();
        let tools = document.pointer(list).and_then(Value::as_array).unwrap();
        let all = manifest()["tools"].as_array().unwrap().len();
        // A model's function list leaves out `move_note`, which only the board view calls.
        let expected = if profile == "mcp" { all } else { all - 1 };
        assert_eq!(tools.len(), expected, "{profile}");
        let move_note = tools.iter().any(|tool| tool["name"] == "move_note");
        assert_eq!(move_note, profile == "mcp", "{profile}");
        for tool in tools {
            let name = tool["name"].as_str().unwrap();
            assert!(
                name.len() <= 64
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                "{profile}: {name}"
            );
        }
    }
    let unknown = notes_server(&["--print-manifest", "--profile", "cohere"]);
    assert_eq!(unknown.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(stderr.contains("cohere"), "{stderr}");
}

#[test]
fn diff_against_itself_finds_no_change() {
    let old = OldManifest::new(&manifest());
    let output = old.diff();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(stdout(&output), "no changes\n");
}

#[test]
fn a_removed_tool_breaks_callers() {
    let mut earlier = manifest();
    tools_mut(&mut earlier).push(json!({
        "name": "archive_note",
        "description": "Archive a note.",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false}
    }));
    let output = OldManifest::new(&earlier).diff();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains("breaking: archive_note: "), "{text}");
    assert!(text.contains("1 change: 1 breaking"), "{text}");
}

#[test]
fn a_new_required_input_breaks_callers() {
    let mut earlier = manifest();
    let add_note = tools_mut(&mut earlier)
        .iter_mut()
        .find(|t| t["name"] == "add_note")
        .unwrap();
    add_note["inputSchema"]["properties"]
        .as_object_mut()
        .unwrap()
        .remove("body");
    let required = add_note["inputSchema"]["required"].as_array_mut().unwrap();
    required.retain(|r| r != "body");
    let output = OldManifest::new(&earlier).diff();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains("breaking: add_note input"), "{text}");
    assert!(text.contains("`body`"), "{text}");
}

#[test]
fn a_new_tool_is_additive() {
    let mut earlier = manifest();
    tools_mut(&mut earlier).retain(|t| t["name"] != "export_notes");
    let output = OldManifest::new(&earlier).diff();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains("additive: export_notes: "), "{text}");
    assert!(text.contains("0 breaking, 1 additive"), "{text}");
}

#[test]
fn a_file_that_is_not_a_manifest_is_refused() {
    let old = OldManifest::new(&json!({"tool": []}));
    let output = old.diff();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is not a manifest"), "{stderr}");
}

#[test]
fn search_prints_the_tools_best_first() {
    let output = notes_server(&["--search", "delete a note"]);
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(" 1  ") && first.ends_with("delete_note    Delete a note for good."),
        "{text}"
    );
    assert_eq!(
        text.lines().count(),
        12,
        "every tool the model may call has the word `note`; `move_note` is the board view's: \
         {text}"
    );

    let none = notes_server(&["--search", "kubernetes"]);
    assert_eq!(none.status.code(), Some(1));
    assert_eq!(stdout(&none), "");
    let stderr = String::from_utf8_lossy(&none.stderr);
    assert!(stderr.contains("no tool matches `kubernetes`"), "{stderr}");
}

#[test]
fn a_reader_that_stops_early_is_no_failure() {
    use std::io::Read as _;
    use std::process::Stdio;

    let mut child = Command::new(env!("CARGO_BIN_EXE_notes-server"))
        .arg("--print-manifest")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("notes-server runs");
    // `| head -c 1`: one byte read, then the pipe closed.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn commands_do_not_repeat_the_manifests_notes() {
    let output = notes_server(&["--print-manifest"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("note:"), "{stderr}");
}

#[test]
fn flags_of_http_serving_without_http_are_refused_naming_the_flag() {
    for (flag, value) in [
        ("--token", "s3cret"),
        ("--allow-origin", "https://app.example.com"),
        ("--allow-host", "mcp.example.com"),
        ("--redis", "redis://127.0.0.1:6379/"),
        ("--oauth-issuer", "https://auth.example.com"),
        ("--oauth-resource", "https://notes.example.com/mcp"),
        ("--oauth-audience", "api://notes"),
        ("--oauth-scope", "notes:read"),
        ("--oauth-jwks-uri", "https://auth.example.com/jwks"),
        ("--oauth-introspect", "notes-server"),
        (
            "--oauth-introspection-endpoint",
            "https://auth.example.com/introspect",
        ),
    ] {
        let output = notes_server(&[flag, value]);
        assert_eq!(output.status.code(), Some(2), "{flag}: {output:?}");
        assert_eq!(
            stderr(&output),
            format!(
                "error: {flag} needs --http ADDR: it applies only to serving over HTTP, and \
                 without --http the server would serve on stdio and ignore it\n"
            ),
            "{flag}"
        );
        assert!(output.stdout.is_empty(), "{flag}: it served");
    }
    // With --http they serve; printing the manifest serves nothing, so they are no matter.
    let printed = notes_server(&["--print-manifest", "--token", "s3cret"]);
    assert!(printed.status.success(), "{printed:?}");
}

#[test]
fn a_variable_of_http_serving_without_http_is_refused_naming_it() {
    let output = notes_server_with(
        &[],
        &[("TOOLWRIGHT_OAUTH_ISSUER", "https://auth.example.com")],
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(
        stderr(&output),
        "error: --oauth-issuer (set by TOOLWRIGHT_OAUTH_ISSUER) needs --http ADDR: it applies \
         only to serving over HTTP, and without --http the server would serve on stdio and \
         ignore it\n"
    );
    // An empty variable is taken for none, as when serving over HTTP.
    let output = notes_server_with(&[], &[("TOOLWRIGHT_TOKEN", "")]);
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn a_redis_url_that_does_not_parse_is_a_usage_error_that_says_the_forms() {
    let forms = "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], or redis+unix:///PATH[?db=DB] for \
                 a Unix socket";
    for (url, said) in [
        (
            "localhost:6379",
            format!("`localhost:6379` is not a Redis URL: expected {forms}"),
        ),
        (
            "redis://:hunter2@[::1",
            format!("`redis://:***@[::1` is not a Redis URL: expected {forms}"),
        ),
        (
            "rediss://ops:hunter2@redis.example.com/1",
            format!(
                "`rediss://ops:***@redis.example.com/1` asks for Redis over TLS, which this \
                 server was built without; expected {forms}"
            ),
        ),
    ] {
        let output = notes_server(&["--http", "127.0.0.1:0", "--redis", url]);
        assert_eq!(output.status.code(), Some(2), "{url}: {output:?}");
        assert_eq!(
            stderr(&output),
            format!("error: invalid value for '--redis <URL>': {said}\n"),
            "{url}"
        );
    }
}

/// A port of this machine on which nothing listens.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_redis_that_does_not_answer_at_start_stops_the_server_saying_where() {
    let port = closed_port();
    let url = format!("redis://:hunter2@127.0.0.1:{port}/3");
    let output = notes_server(&["--http", "127.0.0.1:0", "--redis", &url]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = stderr(&output);
    let place = format!("Redis at redis://:***@127.0.0.1:{port}/3");
    assert!(
        stderr
            .lines()
            .any(|line| line.ends_with(&format!("sessions: in {place}"))),
        "{stderr}"
    );
    // Tasks are kept there too, each stamped with this replica's name.
    let tasks: Vec<&str> = stderr.lines().filter(|l| l.contains("tasks:")).collect();
    assert_eq!(tasks.len(), 1, "{stderr}");
    let (said, replica) = tasks[0]
        .rsplit_once(" (replica ")
        .expect("the replica named");
    assert!(said.ends_with(&format!(" tasks: in {place}")), "{stderr}");
    let replica = replica.strip_suffix(')').unwrap();
    assert!(
        replica.len() == 8 && replica.bytes().all(|b| b.is_ascii_hexdigit()),
        "{stderr}"
    );
    let error = stderr.lines().last().unwrap();
    let (start, end) = (
        format!("error: the session store, {place}, does not answer: "),
        "; check that it runs there and that this machine reaches it",
    );
    assert!(error.starts_with(&start) && error.ends_with(end), "{error}");
    // The reason, between: the system's word for a refused connection.
    assert!(
        error[start.len()..error.len() - end.len()].contains("refused"),
        "{error}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    assert!(!stderr.contains("serving MCP over HTTP"), "{stderr}");
}

#[test]
fn the_server_says_where_it_keeps_sessions_and_tasks() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_notes-server"))
        .args(["--http", "127.0.0.1:0"])
        .env_remove("TOOLWRIGHT_REDIS_URL")
        .env_remove("TOOLWRIGHT_TOKEN")
        .env_remove("TOOLWRIGHT_OAUTH_ISSUER")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = Vec::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        let serving = line.contains("serving MCP over HTTP at");
        said.push(line);
        if serving {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let sessions: Vec<&String> = said.iter().filter(|l| l.contains("sessions:")).collect();
    assert_eq!(sessions.len(), 1, "{said:#?}");
    assert!(sessions[0].ends_with(" sessions: in memory"), "{said:#?}");
    let tasks: Vec<&String> = said.iter().filter(|l| l.contains("tasks:")).collect();
    assert_eq!(tasks.len(), 1, "{said:#?}");
    assert!(tasks[0].ends_with(" tasks: in memory"), "{said:#?}");
}

/// The lines notes-server writes on stdout for these requests, read until it exits once its
/// input closes; by id.
fn served(args: &[&str], requests: &[Value]) -> Vec<Value> {
    use std::io::Write as _;

    let mut child = Command::new(env!("CARGO_BIN_EXE_notes-server"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("notes-server runs");
    let mut input = child.stdin.take().unwrap();
    for request in requests {
        writeln!(input, "{request}").unwrap();
    }
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answers = Vec::new();
    let wanted = requests.iter().filter(|r| r.get("id").is_some()).count();
    while answers.len() < wanted {
        let line = lines.next().expect("an answer").unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        if message.get("id").is_some() {
            answers.push(message);
        }
    }
    drop(input);
    assert!(child.wait().unwrap().success());
    answers.sort_by_key(|a| a["id"].as_i64());
    answers
}

#[test]
fn the_tasks_ttl_and_cap_are_flags() {
    let wait = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "wait_for_note", "arguments": {"text": "never"}, "task": {}
        }})
    };
    let requests = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "cli-test", "version": "1"}
        }}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        wait(1),
        wait(2),
    ];
    let answers = served(&["--task-ttl", "120", "--max-tasks", "1"], &requests);
    assert_eq!(answers[1]["result"]["task"]["ttl"], 120_000, "{answers:?}");
    assert_eq!(
        answers[2]["error"]["message"],
        "too many tasks: this caller holds 1 tasks, the most this server keeps for one; wait \
         for one to be forgotten (each is kept for its TTL after its creation) and ask again"
    );
    let refused = notes_server(&["--task-ttl", "0"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("--task-ttl"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn a_call_past_the_call_timeout_is_stopped_and_answered() {
    let requests = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "cli-test", "version": "1"}
        }}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "wait_for_note", "arguments": {"text": "never"}
        }}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "list_notes", "arguments": {}
        }}),
    ];
    let started = std::time::Instant::now();
    let answers = served(&["--call-timeout", "1"], &requests);
    // Waiting for a note that never comes is stopped after a second; the other call is
    // answered meanwhile.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(answers[2]["result"]["isError"], json!(null), "{answers:?}");
    assert_eq!(
        answers[1]["result"],
        json!({
            "content": [{"type": "text", "text": "tool `wait_for_note` did not finish within its \
                time limit of 1s, and was stopped"}],
            "isError": true
        })
    );
    let refused = notes_server(&["--call-timeout", "0"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("--call-timeout"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn a_caller_past_the_rate_limit_is_told_when_to_try_again() {
    let list = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "list_notes", "arguments": {}
        }})
    };
    let requests = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "cli-test", "version": "1"}
        }}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        list(1),
        list(2),
    ];
    let answers = served(&["--rate-limit", "1"], &requests);
    assert_eq!(answers[1]["result"]["isError"], json!(null), "{answers:?}");
    assert_eq!(answers[2]["error"]["code"], -32000, "{answers:?}");
    assert_eq!(
        answers[2]["error"]["message"],
        "rate limit reached: at most 1 call every 1m for each caller; try again in 1m"
    );
}
