//! Tasks kept in Redis (`RedisTaskStore`): the store against a real Redis server (`redis-server`,
//! started by the tests on a free port of 127.0.0.1), and two servers over HTTP that share it as
//! replicas behind a load balancer do, each request going to either.
//!
//! Ignored by default, as the replicas' tests with Redis are; with `redis-server` installed run
//! them with `cargo test -p toolwright-tests --test tasks_in_redis -- --include-ignored`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::oneshot;
use toolwright::Server;
use toolwright::http::Http;
use toolwright::registry::Registry;
use toolwright::store::RedisStore;
use toolwright::tasks::{RedisTaskStore, TaskConfig, TaskRecord, TaskStatus, TaskStore};
use toolwright_tests::redis::Redis;

/// How many runs of `wait_for_cancel` saw their cancellation.
static CANCELLED: AtomicUsize = AtomicUsize::new(0);

/// Counts a run of `wait_for_cancel` that stopped: the run's future dropped, as a cancelled
/// task's is.
struct Stopped;

impl Drop for Stopped {
    fn drop(&mut self) {
        CANCELLED.fetch_add(1, Ordering::SeqCst);
    }
}

mod tools {
    use std::time::Duration;

    use serde_json::{Value, json};
    use toolwright::context::{ClientRequestError, Elicitation};
    use toolwright::{Context, mcp_tool};

    /// Wait a minute, counting the run once it stops.
    #[mcp_tool(task = "optional")]
    async fn wait_for_cancel() -> String {
        let _stopped = super::Stopped;
        tokio::time::sleep(Duration::from_secs(60)).await;
        "never cancelled".to_owned()
    }

    /// Ask the user for a name while it runs.
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
}

/// A server of the test tools over HTTP on a free port, keeping its sessions and its tasks in
/// `redis` under `test:`, until dropped.
struct Replica {
    url: String,
    client: reqwest::Client,
    _stop: oneshot::Sender<()>,
}

impl Replica {
    async fn start(redis: &Redis, max_per_owner: usize) -> Replica {
        let tasks = RedisTaskStore::new(&redis.url()).unwrap().prefix("test:");
        let server = Server::new("tasks-in-redis", "0.0.1")
            .registry(Registry::collect().expect("the test tools do not conflict"))
            .tasks(TaskConfig::new().store(tasks).max_per_owner(max_per_owner));
        let http =
            Http::new().session_store(RedisStore::new(&redis.url()).unwrap().prefix("test:"));
        let bound = server.bind_http("127.0.0.1:0", http).await.unwrap();
        let url = bound.url();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(bound.run_until(async {
            let _ = stopped.await;
        }));
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        Replica {
            url,
            client,
            _stop: stop,
        }
    }

    /// The answer to a request of protocol 2026-07-28 declaring the tasks extension: its
    /// envelope in `params._meta`, mirrored in the headers.
    async fn request(&self, id: i64, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {
                "elicitation": {},
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            },
            "io.modelcontextprotocol/clientInfo": {"name": "tasks-in-redis", "version": "1"},
        });
        let mut request = self
            .client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = params["name"].as_str().or(params["taskId"].as_str()) {
            request = request.header("mcp-name", name);
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = request.body(body.to_string()).send().await.unwrap();
        let streamed = response
            .headers()
            .get("content-type")
            .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
        let text = response.text().await.unwrap();
        let json = if streamed {
            text.lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .rfind(|data| !data.trim().is_empty())
                .unwrap_or_else(|| panic!("no event in {text}"))
                .to_owned()
        } else {
            text
        };
        serde_json::from_str(&json).unwrap_or_else(|err| panic!("{err}: {json}"))
    }

    /// The result of a request, which must not fail.
    async fn result(&self, id: i64, method: &str, params: Value) -> Value {
        let answer = self.request(id, method, params).await;
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }
}

/// `tasks/get` of `task` through `replica` until its status is `status`, within `limit`.
async fn until(replica: &Replica, task: &str, status: &str, limit: Duration) -> Value {
    let deadline = Instant::now() + limit;
    let mut last = Value::Null;
    while Instant::now() < deadline {
        last = replica
            .result(90, "tasks/get", json!({"taskId": task}))
            .await;
        if last["status"] == status {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {task} was not {status} within {limit:?}: {last}");
}

/// A connection of the test's own to `redis`, to look at its keys.
async fn connection(redis: &Redis) -> redis::aio::MultiplexedConnection {
    redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}

async fn dbsize(connection: &mut redis::aio::MultiplexedConnection) -> u64 {
    redis::cmd("DBSIZE").query_async(connection).await.unwrap()
}

fn record(id: &str, owner: &str, ttl: Duration) -> TaskRecord {
    TaskRecord::new(
        id.to_owned(),
        owner.to_owned(),
        "slow".to_owned(),
        ttl,
        Duration::from_secs(1),
    )
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn a_task_made_on_one_replica_is_read_cancelled_and_answered_through_another() {
    let redis = Redis::start(env!("CARGO_TARGET_TMPDIR"));
    let one = Replica::start(&redis, 100).await;
    let two = Replica::start(&redis, 100).await;

    // Cancelled through the replica that does not run it: the one that does stops the tool.
    let created = one
        .result(
            1,
            "tools/call",
            json!({"name": "wait_for_cancel", "arguments": {}}),
        )
        .await;
    assert_eq!(created["resultType"], "task", "{created}");
    let task = created["taskId"].as_str().unwrap().to_owned();
    let got = two.result(2, "tasks/get", json!({"taskId": task})).await;
    assert_eq!(got["status"], "working", "{got}");
    let before = CANCELLED.load(Ordering::SeqCst);
    let ack = two.result(3, "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(ack["resultType"], "complete", "{ack}");
    let cancelled = Instant::now();
    let got = one.result(4, "tasks/get", json!({"taskId": task})).await;
    assert_eq!(got["status"], "cancelled", "{got}");
    assert_eq!(got["statusMessage"], "cancelled by the client");
    while CANCELLED.load(Ordering::SeqCst) == before {
        assert!(
            cancelled.elapsed() < Duration::from_secs(3),
            "the replica that runs the task did not stop it"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let noticed = cancelled.elapsed();
    eprintln!("the replica that runs the task stopped it {noticed:?} after its cancellation");
    assert!(
        noticed < Duration::from_millis(1500),
        "noticed after {noticed:?}"
    );

    // Asked through one replica, answered through the other: the one that runs it takes the
    // answer from the task's record.
    let created = one
        .result(
            5,
            "tools/call",
            json!({"name": "ask_name", "arguments": {}}),
        )
        .await;
    let task = created["taskId"].as_str().unwrap().to_owned();
    let waiting = until(&two, &task, "input_required", Duration::from_secs(5)).await;
    assert_eq!(
        waiting["inputRequests"]["name"]["method"], "elicitation/create",
        "{waiting}"
    );
    let ack = two
        .result(
            6,
            "tasks/update",
            json!({"taskId": task, "inputResponses": {
                "name": {"action": "accept", "content": {"name": "Ada"}},
                "unknown": {"ignored": true}
            }}),
        )
        .await;
    assert_eq!(ack["resultType"], "complete", "{ack}");
    let done = until(&two, &task, "completed", Duration::from_secs(5)).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "hello \"Ada\"",
        "{done}"
    );
    let late = two
        .request(
            7,
            "tasks/update",
            json!({"taskId": task, "inputResponses": {"name": {"action": "decline"}}}),
        )
        .await;
    assert_eq!(
        late["error"]["message"],
        format!("task `{task}` is not waiting for input: it is `completed`")
    );
    // Read back whole through the replica that ran it too.
    let again = one.result(8, "tasks/get", json!({"taskId": task})).await;
    assert_eq!(again["result"], done["result"]);
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn a_caller_past_the_cap_is_refused_saying_why() {
    let redis = Redis::start(env!("CARGO_TARGET_TMPDIR"));
    let one = Replica::start(&redis, 2).await;
    let two = Replica::start(&redis, 2).await;
    for (id, replica) in [(1, &one), (2, &two)] {
        let created = replica
            .result(
                id,
                "tools/call",
                json!({"name": "wait_for_cancel", "arguments": {}}),
            )
            .await;
        assert_eq!(created["resultType"], "task", "{created}");
    }
    let refused = one
        .request(
            3,
            "tools/call",
            json!({"name": "wait_for_cancel", "arguments": {}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(
        refused["error"]["message"],
        "too many tasks: this caller holds 2 tasks, the most this server keeps for one; wait \
         for one to be forgotten (each is kept for its TTL after its creation) and ask again"
    );
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn an_ended_task_never_changes() {
    let redis = Redis::start(env!("CARGO_TARGET_TMPDIR"));
    let store = RedisTaskStore::new(&redis.url()).unwrap();
    let mut running = record("a", "ada", Duration::from_secs(3600));
    running.replica = store.replica().map(str::to_owned);
    assert!(store.create(&running, 10).await.unwrap());
    let mut cancelled = running.clone();
    cancelled.status = TaskStatus::Cancelled;
    cancelled.updated_ms += 1;
    assert!(store.update(&cancelled).await.unwrap());
    let mut completed = running.clone();
    completed.status = TaskStatus::Completed;
    completed.result = Some(json!({"content": []}));
    completed.updated_ms += 2;
    assert!(!store.update(&completed).await.unwrap());
    assert!(
        !store
            .replace(&completed, cancelled.updated_ms)
            .await
            .unwrap()
    );
    assert_eq!(store.get("a").await.unwrap(), Some(cancelled.clone()));
    assert_eq!(store.list("ada").await.unwrap(), [cancelled]);
    // The key keeps its expiry through the writes.
    let mut connection = connection(&redis).await;
    let ttl: i64 = redis::cmd("PTTL")
        .arg("toolwright:task:a")
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!((3_590_000..=3_600_000).contains(&ttl), "{ttl}");
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn a_write_after_another_since_it_read_is_refused() {
    let redis = Redis::start(env!("CARGO_TARGET_TMPDIR"));
    let store = RedisTaskStore::new(&redis.url()).unwrap();
    let read = record("a", "ada", Duration::from_secs(60));
    store.create(&read, 10).await.unwrap();
    let mut answered = read.clone();
    answered
        .input_responses
        .insert("name".to_owned(), json!({"action": "accept"}));
    answered.updated_ms += 1;
    assert!(store.replace(&answered, read.updated_ms).await.unwrap());
    let mut stale = read.clone();
    stale.status_message = Some("later".to_owned());
    stale.updated_ms += 2;
    assert!(!store.replace(&stale, read.updated_ms).await.unwrap());
    assert_eq!(store.get("a").await.unwrap(), Some(answered.clone()));
    assert!(store.replace(&stale, answered.updated_ms).await.unwrap());
    assert_eq!(store.get("a").await.unwrap(), Some(stale));
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn ten_thousand_forgotten_tasks_leave_nothing_in_redis() {
    let redis = Redis::start(env!("CARGO_TARGET_TMPDIR"));
    let mut connection = connection(&redis).await;
    let before = dbsize(&mut connection).await;
    // Expired keys are kept until counted: Redis deletes them only as they are touched.
    let active_expiry = async |connection: &mut redis::aio::MultiplexedConnection, on: bool| {
        redis::cmd("DEBUG")
            .arg("SET-ACTIVE-EXPIRE")
            .arg(u8::from(on))
            .query_async::<()>(connection)
            .await
            .unwrap();
    };
    active_expiry(&mut connection, false).await;
    let store = RedisTaskStore::new(&redis.url()).unwrap();
    let second = Duration::from_secs(1);
    let started = Instant::now();
    // In batches, each task made as its batch begins, so that each is written well within
    // its second.
    for batch in 0..20 {
        let creates = (batch * 500..(batch + 1) * 500).map(|n| {
            let mut task = record(&format!("t{n:05}"), &format!("owner{}", n % 100), second);
            task.replica = store.replica().map(str::to_owned);
            let store = &store;
            async move { store.create(&task, 100).await.unwrap() }
        });
        let created = futures_util::future::join_all(creates).await;
        assert!(created.iter().all(|c| *c), "every task under the cap");
    }
    let took = started.elapsed();
    let held = dbsize(&mut connection).await;
    // The tasks, their 100 owners' sets, and this replica's heartbeat.
    assert_eq!(held, before + 10_000 + 100 + 1, "made in {took:?}");
    tokio::time::sleep(second).await;
    assert_eq!(store.list("owner7").await.unwrap(), []);
    // The store goes, and with it its heartbeat: then every key expires.
    drop(store);
    active_expiry(&mut connection, true).await;
    let expiring = Instant::now();
    let deadline = expiring + Duration::from_secs(20);
    let mut now = dbsize(&mut connection).await;
    while now != before {
        assert!(
            Instant::now() < deadline,
            "{now} keys left, {before} before"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        now = dbsize(&mut connection).await;
    }
    eprintln!(
        "DBSIZE {before} before, {held} with the tasks (made in {took:?}), {now} {:?} after \
         expiry was let run",
        expiring.elapsed()
    );
}

#[tokio::test]
#[ignore = "needs redis-server"]
async fn the_task_of_a_replica_that_stopped_fails_saying_so() {
    let redis = Redis::start(env!("CARGO_TARGET_TMPDIR"));
    let gone = RedisTaskStore::new(&redis.url()).unwrap();
    let other = RedisTaskStore::new(&redis.url()).unwrap();
    assert_ne!(gone.replica(), other.replica());
    let mut running = record("a", "ada", Duration::from_secs(60));
    running.replica = gone.replica().map(str::to_owned);
    assert!(gone.create(&running, 10).await.unwrap());
    let mut ended = record("b", "ada", Duration::from_secs(60));
    ended.replica = gone.replica().map(str::to_owned);
    assert!(gone.create(&ended, 10).await.unwrap());
    let mut completed = ended.clone();
    completed.status = TaskStatus::Completed;
    completed.result = Some(json!({"content": [{"type": "text", "text": "done"}]}));
    completed.updated_ms += 1;
    assert!(gone.update(&completed).await.unwrap());
    assert_eq!(other.get("a").await.unwrap(), Some(running.clone()));
    // The replica stops: its heartbeat with it.
    drop(gone);
    let stopped = Instant::now();
    let failed = loop {
        let read = other.get("a").await.unwrap().unwrap();
        if read.status != TaskStatus::Working {
            break read;
        }
        assert!(stopped.elapsed() < Duration::from_secs(10), "still working");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let took = stopped.elapsed();
    eprintln!("the stopped replica's task failed after {took:?}");
    assert!(took <= Duration::from_secs(6), "{took:?}");
    assert_eq!(failed.status, TaskStatus::Failed);
    let message = "the task failed: the replica that ran it stopped (killed, or its machine \
                   gone) before it ended";
    assert_eq!(
        failed.error,
        Some(json!({"code": -32603, "message": message}))
    );
    assert_eq!(failed.status_message.as_deref(), Some(message));
    // Kept failed; the task that had ended stays as it ended.
    assert_eq!(other.get("a").await.unwrap(), Some(failed.clone()));
    assert_eq!(other.list("ada").await.unwrap(), [failed, completed]);
}
