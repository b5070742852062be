//! Tasks in both eras, over stdio: a task-capable tool called as a task and polled to its end,
//! cancelled, asking the client while it runs, and every refusal a client meets. (A binary of
//! its own: `inventory` collects per binary.)

use std::time::Duration;

use serde_json::{Value, json};
use toolwright::context::{ClientRequestError, Elicitation};
use toolwright::tasks::TaskConfig;
use toolwright::{Context, Server, mcp_tool};
use toolwright_tests::stdio::Client;

/// Waits `millis` milliseconds, then says so.
#[mcp_tool(task = "optional")]
async fn wait(ctx: Context, millis: u64) -> String {
    ctx.set_status_message(format!("waiting {millis} ms"));
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("waited {millis} ms")
}

/// Runs only as a task, and fails as a tool.
#[mcp_tool(task = "required")]
async fn doomed() -> Result<String, String> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    Err("the job was doomed".to_owned())
}

/// Never a task.
#[mcp_tool]
fn instant() -> String {
    "now".to_owned()
}

/// Asks the user for a name while it runs, as a task when asked.
#[mcp_tool(task = "optional")]
async fn ask_name(ctx: Context) -> Result<String, ClientRequestError> {
    let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    tokio::time::sleep(Duration::from_millis(20)).await;
    let answer = ctx
        .keyed("name")
        .elicit(Elicitation::with_schema("Your name?", form))
        .await?;
    let name = answer.content().and_then(|c| c.get("name")).cloned();
    Ok(format!("hello {}", name.unwrap_or(Value::Null)))
}

/// A client of a server that keeps `config`, after the handshake at 2025-11-25 as a client
/// that answers elicitations.
async fn handshake(config: TaskConfig) -> Client {
    let mut client = Client::with(Server::new("test-server", "0.0.1").tasks(config));
    client
        .initialize_with(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "tasks-test", "version": "1.0.0"}
        }))
        .await;
    client
}

/// Polls `tasks/get` (from id `id` on) until the task's status is `status`.
async fn until(client: &mut Client, id: &mut i64, task: &str, status: &str, meta: &Value) -> Value {
    for _ in 0..200 {
        *id += 1;
        let mut params = json!({"taskId": task});
        if !meta.is_null() {
            params["_meta"] = meta.clone();
        }
        let got = client.result(*id, "tasks/get", params).await;
        if got["status"] == status {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {task} never reached {status}");
}

#[tokio::test]
async fn a_handshake_task_is_created_at_once_then_polled_to_its_result() {
    let mut client = Client::with(Server::new("test-server", "0.0.1"));
    let opened = client
        .request(
            0,
            "initialize",
            toolwright_tests::stdio::initialize_params("2025-11-25"),
        )
        .await;
    assert_eq!(
        opened["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    let tools = client.result(1, "tools/list", json!({})).await;
    let support: Vec<(&str, &Value)> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), &t["execution"]))
        .collect();
    assert_eq!(
        support,
        [
            ("ask_name", &json!({"taskSupport": "optional"})),
            ("doomed", &json!({"taskSupport": "required"})),
            ("instant", &Value::Null),
            ("wait", &json!({"taskSupport": "optional"})),
        ]
    );

    let created = client
        .result(
            2,
            "tools/call",
            json!({"name": "wait", "arguments": {"millis": 100}, "task": {"ttl": 60000}}),
        )
        .await;
    let task = &created["task"];
    let task_id = task["taskId"].as_str().unwrap().to_owned();
    assert_eq!(task_id.len(), 32, "{created}");
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60000);
    assert_eq!(task["pollInterval"], 1000);
    assert!(
        task["createdAt"].as_str().unwrap().ends_with('Z'),
        "{created}"
    );
    assert!(
        created.get("content").is_none(),
        "not the tool's result: {created}"
    );

    // `tasks/result` waits for the end, and answers as the call would have, naming the task.
    let result = client
        .result(3, "tasks/result", json!({"taskId": task_id}))
        .await;
    assert_eq!(result["content"][0]["text"], "waited 100 ms");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": task_id})
    );
    let got = client
        .result(4, "tasks/get", json!({"taskId": task_id}))
        .await;
    assert_eq!(got["status"], "completed");
    assert_eq!(got["statusMessage"], "waiting 100 ms");
    assert!(
        got.get("result").is_none(),
        "2025-11-25 has tasks/result: {got}"
    );
    let listed = client.result(5, "tasks/list", json!({})).await;
    assert_eq!(listed["tasks"][0]["taskId"], task_id.as_str());
    assert!(listed.get("nextCursor").is_none());

    // A tool error fails the task, as 2025-11-25 has it: `tasks/result` carries the result.
    let doomed = client
        .result(6, "tools/call", json!({"name": "doomed", "task": {}}))
        .await;
    let doomed_id = doomed["task"]["taskId"].as_str().unwrap();
    assert_eq!(doomed["task"]["ttl"], 3_600_000, "the server's default");
    let failed = client
        .result(7, "tasks/result", json!({"taskId": doomed_id}))
        .await;
    assert_eq!(failed["isError"], true);
    assert_eq!(failed["content"][0]["text"], "the job was doomed");
    let got = client
        .result(8, "tasks/get", json!({"taskId": doomed_id}))
        .await;
    assert_eq!(got["status"], "failed");
}

#[tokio::test]
async fn a_handshake_client_is_refused_what_a_tool_does_not_allow() {
    let mut client = handshake(TaskConfig::new()).await;
    let forbidden = client
        .request(
            1,
            "tools/call",
            json!({"name": "instant", "task": {"ttl": 1000}}),
        )
        .await;
    assert_eq!(forbidden["error"]["code"], -32601);
    assert_eq!(
        forbidden["error"]["message"],
        "tool `instant` does not run as a task (its `execution.taskSupport` is `forbidden`): \
         call it without `task`"
    );
    let plain = client
        .request(2, "tools/call", json!({"name": "doomed"}))
        .await;
    assert_eq!(plain["error"]["code"], -32601);
    assert_eq!(
        plain["error"]["message"],
        "tool `doomed` runs only as a task (its `execution.taskSupport` is `required`): call it \
         with `task: {\"ttl\": <milliseconds>}`"
    );
    let unknown = client
        .request(
            3,
            "tasks/get",
            json!({"taskId": "0123456789abcdef0123456789abcdef"}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32602);
    assert_eq!(
        unknown["error"]["message"],
        "unknown task `0123456789abcdef0123456789abcdef`: it does not exist, it was forgotten \
         after its TTL, or it is not yours"
    );
    let update = client
        .request(
            4,
            "tasks/update",
            json!({"taskId": "x", "inputResponses": {}}),
        )
        .await;
    assert_eq!(update["error"]["code"], -32601);
    // The plain call of an optional tool still runs as a call.
    let call = client.call(5, "wait", json!({"millis": 1})).await;
    assert_eq!(call["content"][0]["text"], "waited 1 ms");
}

#[tokio::test]
async fn a_cancelled_task_stays_cancelled_and_cannot_be_cancelled_again() {
    let mut client = handshake(TaskConfig::new()).await;
    let created = client
        .result(
            1,
            "tools/call",
            json!({"name": "wait", "arguments": {"millis": 60000}, "task": {"ttl": 60000}}),
        )
        .await;
    let task_id = created["task"]["taskId"].as_str().unwrap().to_owned();
    let cancelled = client
        .result(2, "tasks/cancel", json!({"taskId": task_id}))
        .await;
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["statusMessage"], "cancelled by the client");
    let again = client
        .request(3, "tasks/cancel", json!({"taskId": task_id}))
        .await;
    assert_eq!(
        again["error"]["message"],
        format!("task `{task_id}` has already ended (cancelled): it cannot be cancelled")
    );
    let result = client
        .request(4, "tasks/result", json!({"taskId": task_id}))
        .await;
    assert_eq!(
        result["error"]["message"],
        format!("task `{task_id}` was cancelled: it has no result")
    );
}

#[tokio::test]
async fn a_handshake_task_asks_the_client_naming_the_task() {
    let mut client = handshake(TaskConfig::new()).await;
    let created = client
        .result(
            1,
            "tools/call",
            json!({"name": "ask_name", "task": {"ttl": 60000}}),
        )
        .await;
    let task_id = created["task"]["taskId"].as_str().unwrap().to_owned();
    let asked = client.recv().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(
        asked["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": task_id})
    );
    let mut id = 1;
    until(
        &mut client,
        &mut id,
        &task_id,
        "input_required",
        &Value::Null,
    )
    .await;
    client
        .send(json!({"jsonrpc": "2.0", "id": asked["id"],
                     "result": {"action": "accept", "content": {"name": "Ada"}}}))
        .await;
    let result = client
        .result(99, "tasks/result", json!({"taskId": task_id}))
        .await;
    assert_eq!(result["content"][0]["text"], "hello \"Ada\"");
}

#[tokio::test]
async fn an_owner_holds_at_most_its_cap_and_a_task_is_forgotten_after_its_ttl() {
    let config = TaskConfig::new()
        .max_per_owner(2)
        .max_ttl(Duration::from_millis(300));
    let mut client = handshake(config).await;
    for id in 1..=2 {
        let created = client
            .result(
                id,
                "tools/call",
                json!({"name": "doomed", "task": {"ttl": 60000}}),
            )
            .await;
        assert_eq!(
            created["task"]["ttl"], 300,
            "bounded by the server's maximum"
        );
    }
    let third = client
        .request(3, "tools/call", json!({"name": "doomed", "task": {}}))
        .await;
    assert_eq!(
        third["error"]["message"],
        "too many tasks: this caller holds 2 tasks, the most this server keeps for one; wait for \
         one to be forgotten (each is kept for its TTL after its creation) and ask again"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let listed = client.result(4, "tasks/list", json!({})).await;
    assert_eq!(listed["tasks"], json!([]));
    let again = client
        .result(5, "tools/call", json!({"name": "doomed", "task": {}}))
        .await;
    assert_eq!(again["task"]["status"], "working");
}

/// The 2026-07-28 envelope, declaring the tasks extension when `tasks`.
fn meta(tasks: bool) -> Value {
    let mut capabilities = json!({"elicitation": {}});
    if tasks {
        capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    }
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities
    })
}

fn call(name: &str, arguments: Value, tasks: bool) -> Value {
    json!({"name": name, "arguments": arguments, "_meta": meta(tasks)})
}

#[tokio::test]
async fn a_2026_task_is_the_servers_choice_for_a_client_that_declared_the_extension() {
    let mut client = Client::with(Server::new("test-server", "0.0.1"));
    let discovered = client
        .result(1, "server/discover", json!({"_meta": meta(false)}))
        .await;
    assert_eq!(
        discovered["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}})
    );
    assert!(
        discovered["capabilities"].get("tasks").is_none(),
        "{discovered}"
    );

    // A client without the extension: an optional tool runs as a call, a required one is
    // refused, and the tasks methods are too.
    let plain = client
        .result(2, "tools/call", call("wait", json!({"millis": 30}), false))
        .await;
    assert_eq!(plain["resultType"], "complete");
    assert_eq!(plain["content"][0]["text"], "waited 30 ms");
    let required = client
        .request(3, "tools/call", call("doomed", json!({}), false))
        .await;
    assert_eq!(required["error"]["code"], -32021);
    assert_eq!(
        required["error"]["data"],
        json!({"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}})
    );
    let get = client
        .request(4, "tasks/get", json!({"taskId": "x", "_meta": meta(false)}))
        .await;
    assert_eq!(get["error"]["code"], -32021, "before the task is looked up");

    // With it: the call becomes a task as soon as it waits.
    let created = client
        .result(5, "tools/call", call("wait", json!({"millis": 100}), true))
        .await;
    assert_eq!(created["resultType"], "task", "{created}");
    for absent in ["task", "result", "ttl", "pollInterval", "requestState"] {
        assert!(created.get(absent).is_none(), "{absent} in {created}");
    }
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 1000);
    let task_id = created["taskId"].as_str().unwrap().to_owned();
    let mut id = 5;
    let done = until(&mut client, &mut id, &task_id, "completed", &meta(true)).await;
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "waited 100 ms");
    assert_eq!(done["result"]["resultType"], "complete");
    assert!(
        done["result"]["_meta"]
            .get("io.modelcontextprotocol/related-task")
            .is_none(),
        "{done}"
    );
    let list = client
        .request(50, "tasks/list", json!({"_meta": meta(true)}))
        .await;
    assert_eq!(list["error"]["code"], -32601);
    // Cancelling an ended task is acknowledged.
    let ack = client
        .result(
            51,
            "tasks/cancel",
            json!({"taskId": task_id, "_meta": meta(true)}),
        )
        .await;
    assert_eq!(ack["resultType"], "complete");
    assert!(ack.get("status").is_none(), "{ack}");
}

#[tokio::test]
async fn a_2026_task_asks_through_tasks_get_and_is_answered_by_tasks_update() {
    let mut client = Client::with(Server::new("test-server", "0.0.1"));
    let created = client
        .result(1, "tools/call", call("ask_name", json!({}), true))
        .await;
    let task_id = created["taskId"].as_str().unwrap().to_owned();
    let mut id = 1;
    let waiting = until(
        &mut client,
        &mut id,
        &task_id,
        "input_required",
        &meta(true),
    )
    .await;
    assert_eq!(
        waiting["inputRequests"]["name"]["method"], "elicitation/create",
        "{waiting}"
    );
    let early = client
        .request(
            60,
            "tasks/update",
            json!({"taskId": "0123", "inputResponses": {}, "_meta": meta(true)}),
        )
        .await;
    assert_eq!(early["error"]["code"], -32602);
    let ack = client
        .result(
            61,
            "tasks/update",
            json!({"taskId": task_id, "_meta": meta(true), "inputResponses": {
                "name": {"action": "accept", "content": {"name": "Ada"}},
                "unknown": {"ignored": true}
            }}),
        )
        .await;
    assert_eq!(
        ack,
        json!({"resultType": "complete", "_meta": ack["_meta"]})
    );
    let mut id = 61;
    let done = until(&mut client, &mut id, &task_id, "completed", &meta(true)).await;
    assert_eq!(done["result"]["content"][0]["text"], "hello \"Ada\"");
    let late = client
        .request(
            99,
            "tasks/update",
            json!({"taskId": task_id, "inputResponses": {}, "_meta": meta(true)}),
        )
        .await;
    assert_eq!(
        late["error"]["message"],
        format!("task `{task_id}` is not waiting for input: it is `completed`")
    );
}

#[tokio::test]
async fn a_server_whose_client_goes_away_stops_its_tasks_and_ends() {
    let mut client = handshake(TaskConfig::new()).await;
    let created = client
        .result(
            1,
            "tools/call",
            json!({"name": "wait", "arguments": {"millis": 600000}, "task": {}}),
        )
        .await;
    assert_eq!(created["task"]["status"], "working");
    // Within the client's bound on `serve`'s end, not the ten minutes the task would take.
    assert_eq!(client.finish().await, Vec::<Value>::new());
}
