//! Drives notes-server's tasks with the official Rust SDK's client, rmcp 2.2.0, in protocol
//! 2025-11-25 over stdio, checking what a user of that client sees.
//!
//! ```text
//! cargo run --manifest-path clients/rmcp-tasks/Cargo.toml -- target/debug/notes-server
//! ```
//!
//! rmcp 2.2.0 has no task methods on its client: each request goes through
//! `Peer::send_request`, as its own examples do. After `initialize` (2025-11-25, with
//! `capabilities.tasks` and both tools' `execution.taskSupport` checked):
//!
//! 1. `wait_for_note` as a task: `tasks/get` until its status message shows it waiting, then
//!    the matching note added by a plain `add_note` call, `tasks/get` until `completed`, and
//!    `tasks/result` answers with the note, naming the task in
//!    `_meta["io.modelcontextprotocol/related-task"]`;
//! 2. a second `wait_for_note` task cancelled: `tasks/cancel` answers `cancelled`, a note that
//!    matches it afterwards leaves it `cancelled`, and a second `tasks/cancel` is the JSON-RPC
//!    error -32602;
//! 3. `export_notes` as a task, `completed`, its status message and its text naming the note;
//! 4. `tasks/list` holds those three tasks, and only those.
//!
//! Prints `ok N [label] check` for each check that passes and ends with `N passed, 0 failed`;
//! on the first mismatch prints `FAIL`, why, `N passed, 1 failed`, and exits with status 1.

use std::fmt::Debug;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, CancelTaskParams, ClientInfo, ClientRequest,
    GetTaskParams, GetTaskPayloadParams, Implementation, PaginatedRequestParams, ProtocolVersion,
    Request, RequestOptionalParam, ServerResult, Task, TaskMetadata, TaskStatus, TaskSupport,
};
use rmcp::service::{Peer, RoleClient, ServiceError};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const LABEL: &str = "rmcp 2.2.0 stdio";
/// The longest any one request, or any wait for a task's status, may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The retention asked for each task, which the server keeps (it is under its maximum).
const TTL_MS: u64 = 60_000;
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
const INVALID_PARAMS: i32 = -32602;

/// The first check that did not hold, or what the SDK or the server threw instead.
struct Failed(String);

/// The checks that passed so far.
struct Checks {
    passed: usize,
}

impl Checks {
    fn ok(&mut self, holds: bool, check: &str, detail: impl Debug) -> Result<(), Failed> {
        if !holds {
            return Err(Failed(format!("[{LABEL}] {check}: {detail:?}")));
        }
        self.passed += 1;
        println!("ok {:3} [{LABEL}] {check}", self.passed);
        Ok(())
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--") {
        args.remove(0);
    }
    if args.is_empty() || args[0] == "-h" || args[0] == "--help" {
        eprintln!("usage: rmcp-tasks [--] <server command> [args...]");
        return ExitCode::from(2);
    }
    let mut checks = Checks { passed: 0 };
    match run(&mut checks, &args).await {
        Ok(()) => {
            println!("{} passed, 0 failed", checks.passed);
            ExitCode::SUCCESS
        }
        Err(Failed(why)) => {
            println!("FAIL {why}");
            println!("{} passed, 1 failed", checks.passed);
            ExitCode::FAILURE
        }
    }
}

async fn run(c: &mut Checks, command: &[String]) -> Result<(), Failed> {
    let mut server = tokio::process::Command::new(&command[0]);
    server.args(&command[1..]);
    let transport = TokioChildProcess::new(server).map_err(|e| failed("spawn the server", e))?;
    let info = ClientInfo::new(
        Default::default(),
        Implementation::new("rmcp-tasks", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25);
    let client = within("initialize", info.serve(transport))
        .await?
        .map_err(|e| failed("initialize", e))?;
    let peer = client.peer().clone();

    let init = client
        .peer_info()
        .ok_or_else(|| Failed("no initialize result".into()))?;
    c.ok(
        init.protocol_version == ProtocolVersion::V_2025_11_25,
        "negotiated protocol 2025-11-25",
        &init.protocol_version,
    )?;
    let tasks = init.capabilities.tasks.as_ref();
    let tool_calls = tasks
        .and_then(|t| t.requests.as_ref())
        .and_then(|r| r.tools.as_ref())
        .and_then(|t| t.call.as_ref());
    c.ok(
        tool_calls.is_some() && tasks.is_some_and(|t| t.list.is_some() && t.cancel.is_some()),
        "capabilities.tasks: requests.tools.call, list and cancel",
        tasks,
    )?;
    let tools = within("tools/list", peer.list_all_tools())
        .await?
        .map_err(|e| failed("tools/list", e))?;
    for name in ["wait_for_note", "export_notes"] {
        let support = tools
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.task_support());
        c.ok(
            support == Some(TaskSupport::Optional),
            &format!("{name}: execution.taskSupport is optional"),
            support,
        )?;
    }
    let add_note = tools
        .iter()
        .find(|t| t.name == "add_note")
        .map(|t| t.task_support());
    c.ok(
        add_note == Some(TaskSupport::Forbidden),
        "add_note: no tasks (execution.taskSupport absent or forbidden)",
        add_note,
    )?;

    // Unique to this run, so that no note of another can end a wait.
    let word = format!("rmcp{}", std::process::id());

    // 1. A task that waits on a person, ended by a note.
    let waiting = start(
        c,
        &peer,
        "wait_for_note",
        json!({ "text": word, "timeout_seconds": 60 }),
    )
    .await?;
    let status = poll(&peer, &waiting, "a status message while working", |t| {
        t.status != TaskStatus::Working
            || t.status_message
                .as_deref()
                .is_some_and(|m| m.contains("so far"))
    })
    .await?;
    let expected = format!("waiting for a note titled like \"{word}\": ");
    c.ok(
        status.status == TaskStatus::Working
            && status
                .status_message
                .as_deref()
                .is_some_and(|m| m.starts_with(&expected)),
        &format!("tasks/get: working, statusMessage \"{expected}N s so far\""),
        (&status.status, &status.status_message),
    )?;
    let title = format!("Minutes of {word}");
    let added = call(
        &peer,
        "add_note",
        json!({ "title": title, "body": "Decisions taken." }),
    )
    .await?;
    let note = added.structured_content.clone().unwrap_or_default();
    c.ok(
        added.is_error != Some(true) && note["title"] == json!(title),
        "add_note (a plain call) adds the note the task waits for",
        &added,
    )?;
    let done = poll(&peer, &waiting, "completed", |t| {
        t.status != TaskStatus::Working
    })
    .await?;
    c.ok(
        done.status == TaskStatus::Completed,
        "tasks/get: the task is completed once the note is added",
        (&done.status, &done.status_message),
    )?;
    let result = task_result(&peer, &waiting).await?;
    c.ok(
        result.is_error != Some(true) && result.structured_content.as_ref() == Some(&note),
        "tasks/result: the note, as structuredContent",
        (&result.structured_content, &note),
    )?;
    let related = result.meta.as_ref().and_then(|m| m.0.get(RELATED_TASK));
    c.ok(
        related == Some(&json!({ "taskId": waiting })),
        &format!("tasks/result: _meta[\"{RELATED_TASK}\"] names the task"),
        &result.meta,
    )?;

    // 2. A task cancelled while it waits.
    let other = format!("{word}-cancelled");
    let cancelled = start(
        c,
        &peer,
        "wait_for_note",
        json!({ "text": other, "timeout_seconds": 60 }),
    )
    .await?;
    let reply = request(&peer, "tasks/cancel", cancel_request(&cancelled)).await?;
    // The reply is a task: rmcp's untagged `ServerResult` takes it for the first variant of
    // that shape, `GetTaskResult`.
    let task = match reply {
        ServerResult::CancelTaskResult(r) => Some(r.task),
        ServerResult::GetTaskResult(r) => Some(r.task),
        _ => None,
    };
    c.ok(
        task.as_ref()
            .is_some_and(|t| t.task_id == cancelled && t.status == TaskStatus::Cancelled),
        "tasks/cancel: the task is cancelled",
        &task,
    )?;
    call(
        &peer,
        "add_note",
        json!({ "title": format!("Late {other}"), "body": "Too late." }),
    )
    .await?;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let after = get(&peer, &cancelled).await?;
    c.ok(
        after.status == TaskStatus::Cancelled,
        "tasks/get: still cancelled after a note it waited for is added",
        (&after.status, &after.status_message),
    )?;
    let again = within(
        "tasks/cancel",
        peer.send_request(cancel_request(&cancelled)),
    )
    .await?;
    let code = match &again {
        Err(ServiceError::McpError(error)) => Some(error.code.0),
        _ => None,
    };
    c.ok(
        code == Some(INVALID_PARAMS),
        "a second tasks/cancel: JSON-RPC error -32602",
        &again,
    )?;

    // 3. The export, as a task.
    let export = start(c, &peer, "export_notes", json!({ "format": "markdown" })).await?;
    let exported = poll(&peer, &export, "completed", |t| {
        t.status != TaskStatus::Working
    })
    .await?;
    // "exported N of N notes": the last tenth's message is kept once the export has ended.
    let counts = exported
        .status_message
        .as_deref()
        .and_then(|m| m.strip_prefix("exported "))
        .and_then(|m| m.strip_suffix(" notes"))
        .and_then(|m| m.split_once(" of "));
    c.ok(
        exported.status == TaskStatus::Completed && counts.is_some_and(|(done, all)| done == all),
        "export_notes: completed, statusMessage \"exported N of N notes\"",
        (&exported.status, &exported.status_message),
    )?;
    let document = task_result(&peer, &export).await?;
    let text = serde_json::to_value(&document.content).unwrap_or_default();
    c.ok(
        document.is_error != Some(true) && text.to_string().contains(&format!("# {title}")),
        "export_notes: tasks/result's text holds the note's title",
        &document,
    )?;

    // 4. The session's tasks.
    let list = ClientRequest::ListTasksRequest(RequestOptionalParam::with_param(
        PaginatedRequestParams::default(),
    ));
    let listed = match request(&peer, "tasks/list", list).await? {
        ServerResult::ListTasksResult(l) => l,
        other => return Err(Failed(format!("tasks/list answered {other:?}"))),
    };
    let mut seen: Vec<(String, TaskStatus)> = listed
        .tasks
        .iter()
        .map(|t| (t.task_id.clone(), t.status.clone()))
        .collect();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    let mut expected = vec![
        (waiting, TaskStatus::Completed),
        (cancelled, TaskStatus::Cancelled),
        (export, TaskStatus::Completed),
    ];
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    c.ok(
        seen == expected && listed.next_cursor.is_none(),
        "tasks/list: the three tasks, completed, cancelled, completed",
        &listed,
    )?;

    let _ = client.cancel().await;
    Ok(())
}

/// Starts `tool` as a task, checking the `CreateTaskResult`; its id.
async fn start(
    c: &mut Checks,
    peer: &Peer<RoleClient>,
    tool: &str,
    arguments: Value,
) -> Result<String, Failed> {
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
        .with_task(TaskMetadata::new().with_ttl(TTL_MS));
    let reply = request(
        peer,
        "tools/call",
        ClientRequest::CallToolRequest(Request::new(params)),
    )
    .await?;
    let ServerResult::CreateTaskResult(created) = reply else {
        return Err(Failed(format!(
            "tools/call {tool} with `task` answered {reply:?}"
        )));
    };
    let task = created.task;
    c.ok(
        task.status == TaskStatus::Working
            && task.ttl == Some(TTL_MS)
            && task.poll_interval.is_some()
            && !task.task_id.is_empty()
            && !task.created_at.is_empty(),
        &format!("{tool} with `task`: CreateTaskResult, working, ttl {TTL_MS}, pollInterval"),
        &task,
    )?;
    Ok(task.task_id)
}

/// `tasks/get` until `done` holds, at the pace the server asks for.
async fn poll(
    peer: &Peer<RoleClient>,
    id: &str,
    what: &str,
    done: impl Fn(&Task) -> bool,
) -> Result<Task, Failed> {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let task = get(peer, id).await?;
        if done(&task) {
            return Ok(task);
        }
        if Instant::now() >= deadline {
            return Err(Failed(format!(
                "[{LABEL}] task {id}: no {what} within {TIMEOUT:?}; last {task:?}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(task.poll_interval.unwrap_or(500))).await;
    }
}

async fn get(peer: &Peer<RoleClient>, id: &str) -> Result<Task, Failed> {
    let get = ClientRequest::GetTaskRequest(Request::new(GetTaskParams::new(id.to_owned())));
    match request(peer, "tasks/get", get).await? {
        ServerResult::GetTaskResult(r) => Ok(r.task),
        other => Err(Failed(format!("tasks/get answered {other:?}"))),
    }
}

/// `tasks/result` of a tool's task: the tool's result.
async fn task_result(peer: &Peer<RoleClient>, id: &str) -> Result<CallToolResult, Failed> {
    let params = GetTaskPayloadParams::new(id.to_owned());
    let asked = ClientRequest::GetTaskPayloadRequest(Request::new(params));
    // rmcp's untagged `ServerResult` decodes a tool's payload as `CallToolResult`.
    match request(peer, "tasks/result", asked).await? {
        ServerResult::CallToolResult(result) => Ok(result),
        ServerResult::CustomResult(custom) => serde_json::from_value(custom.0)
            .map_err(|e| Failed(format!("tasks/result is no CallToolResult: {e}"))),
        other => Err(Failed(format!("tasks/result answered {other:?}"))),
    }
}

fn cancel_request(id: &str) -> ClientRequest {
    ClientRequest::CancelTaskRequest(Request::new(CancelTaskParams::new(id.to_owned())))
}

/// A plain `tools/call`.
async fn call(
    peer: &Peer<RoleClient>,
    tool: &str,
    arguments: Value,
) -> Result<CallToolResult, Failed> {
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap_or_default());
    within("tools/call", peer.call_tool(params))
        .await?
        .map_err(|e| failed(&format!("tools/call {tool}"), e))
}

async fn request(
    peer: &Peer<RoleClient>,
    method: &str,
    request: ClientRequest,
) -> Result<ServerResult, Failed> {
    within(method, peer.send_request(request))
        .await?
        .map_err(|e| failed(method, e))
}

async fn within<T>(what: &str, future: impl Future<Output = T>) -> Result<T, Failed> {
    tokio::time::timeout(TIMEOUT, future)
        .await
        .map_err(|_| Failed(format!("[{LABEL}] {what}: no answer within {TIMEOUT:?}")))
}

fn failed(what: &str, error: impl std::fmt::Display) -> Failed {
    Failed(format!("[{LABEL}] {what}: {error}"))
}
