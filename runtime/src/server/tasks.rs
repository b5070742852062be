//! Tool calls run as tasks, in both eras: whether a `tools/call` becomes one, the task's run
//! apart from its request, and the `tasks/*` methods that read, answer and cancel it.
//!
//! In the handshake era (2025-11-25) the client asks: a call with `task` is stored and answered
//! with a `CreateTaskResult` at once. In 2026-07-28 the server decides, for a client that
//! declared the extension: the run starts as a call, and becomes a task as soon as it waits on
//! anything but a question of its own (or, when the tool put its task off, once it starts it);
//! a run that ends, or asks, before then is answered as a call.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::call::{Calls, Origin, Registered};
use super::pipeline::{BoxError, Call, Outcome, Refusal, tool_result};
use super::round::Round;
use super::step::Step;
use crate::context::until_asked;
use crate::protocol::jsonrpc::{
    INTERNAL_ERROR, INVALID_PARAMS, Id, METHOD_NOT_FOUND, MISSING_CLIENT_CAPABILITY, Reply,
};
use crate::protocol::method::Method;
use crate::protocol::{Client, Wire};
use crate::registry::Tool;
use crate::sink::Sink;
use crate::tasks::{
    Answered, EXTENSION_ID, Job, Phase, RELATED_TASK_KEY, TaskRecord, TaskStatus, TaskSupport,
    Tasks, iso8601, new_id,
};

/// How a `tools/call` runs.
pub(super) enum Mode {
    /// As a call.
    Call,
    /// As the task the client asked for (the handshake era), kept this long when it said.
    Task(Option<Duration>),
    /// As a call that becomes a task when it takes long (2026-07-28).
    MayBecomeTask,
}

/// The most tasks one `tasks/list` page holds.
const LIST_PAGE: usize = 100;

/// How many times answers for a task another process runs are written, while that one writes
/// the task too.
const ANSWER_TRIES: usize = 8;

/// How often `tasks/result` reads a task that runs on another process.
const RESULT_POLL: Duration = Duration::from_millis(250);

/// How a call of `tool` with these `params` runs, or the error that refuses it: a task the
/// tool forbids, a plain call of a tool that requires a task.
pub(super) fn mode(
    tool: &Tool,
    params: &Value,
    wire: &Wire,
    client: &Client,
) -> Result<Mode, Refusal> {
    let support = tool.task_support();
    let name = tool.wire_name();
    if wire.is_stateless() {
        // `task` is the handshake era's: ignored here.
        return match (support, declares_extension(client)) {
            (TaskSupport::Forbidden, _) => Ok(Mode::Call),
            (_, true) => Ok(Mode::MayBecomeTask),
            (TaskSupport::Optional, false) => Ok(Mode::Call),
            (TaskSupport::Required, false) => Err(missing_extension(&format!(
                "tool `{name}` runs only as a task, and this request's \
                 `io.modelcontextprotocol/clientCapabilities` does not declare the tasks \
                 extension (`extensions[\"{EXTENSION_ID}\"]`)"
            ))),
        };
    }
    let asked = params.get("task").filter(|task| !task.is_null());
    match (support, asked) {
        (TaskSupport::Forbidden, Some(_)) => Err(Refusal::new(
            METHOD_NOT_FOUND,
            format!(
                "tool `{name}` does not run as a task (its `execution.taskSupport` is \
                 `forbidden`): call it without `task`"
            ),
        )),
        (TaskSupport::Required, None) => Err(Refusal::new(
            METHOD_NOT_FOUND,
            format!(
                "tool `{name}` runs only as a task (its `execution.taskSupport` is \
                 `required`): call it with `task: {{\"ttl\": <milliseconds>}}`"
            ),
        )),
        (_, None) => Ok(Mode::Call),
        (_, Some(task)) => match task.get("ttl") {
            None | Some(Value::Null) => Ok(Mode::Task(None)),
            Some(ttl) => match ttl.as_u64() {
                Some(ms) => Ok(Mode::Task(Some(Duration::from_millis(ms)))),
                None => Err(invalid(format!(
                    "`task.ttl` must be a whole number of milliseconds, not {ttl}"
                ))),
            },
        },
    }
}

/// Whether a request of 2026-07-28 declares the tasks extension.
fn declares_extension(client: &Client) -> bool {
    client
        .capabilities
        .as_deref()
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(EXTENSION_ID))
        .is_some_and(|e| !e.is_null())
}

/// The error of a request that needs the tasks extension and does not declare it (-32021).
fn missing_extension(message: &str) -> Refusal {
    Refusal::new(MISSING_CLIENT_CAPABILITY, message)
        .with_data(json!({ "requiredCapabilities": { "extensions": { EXTENSION_ID: {} } } }))
}

/// Who owns the tasks of a request from `origin`: its principal, else its session in the
/// handshake era; a digest, so that a store never holds who it is.
fn owner(origin: &Origin<'_>) -> String {
    let who = match (&origin.who.principal, origin.wire.is_stateless()) {
        (Some(principal), _) => format!("principal:{}", principal.owner_key()),
        (None, false) => format!("session:{}", origin.session.task_owner()),
        (None, true) => "anonymous".to_owned(),
    };
    crate::manifest::sha256_hex(who.as_bytes())
}

/// The task as the request's era has it: 2025-11-25's `Task`, or 2026-07-28's task members.
fn task_members(record: &TaskRecord, wire: &Wire) -> Map<String, Value> {
    let mut task = Map::new();
    task.insert("taskId".into(), json!(record.id));
    task.insert("status".into(), json!(record.status.as_str()));
    if let Some(message) = &record.status_message {
        task.insert("statusMessage".into(), json!(message));
    }
    task.insert("createdAt".into(), json!(iso8601(record.created_ms)));
    task.insert("lastUpdatedAt".into(), json!(iso8601(record.updated_ms)));
    let (ttl, poll) = if wire.is_stateless() {
        ("ttlMs", "pollIntervalMs")
    } else {
        ("ttl", "pollInterval")
    };
    task.insert(ttl.into(), json!(record.ttl_ms));
    task.insert(poll.into(), json!(record.poll_interval_ms.max(1)));
    task
}

/// The `CreateTaskResult` a call that became a task is answered with.
fn created(record: &TaskRecord, wire: &Wire) -> Value {
    let task = task_members(record, wire);
    match wire {
        Wire::Handshake => json!({ "task": task }),
        Wire::Stateless { .. } => {
            let mut result = wire.shape(Value::Object(task));
            result["resultType"] = json!("task");
            result
        }
    }
}

/// How a task's run ended, as its record keeps it: `completed` with the tool's result, or
/// `failed` with the error its call would have been answered with. A tool error (`isError`)
/// completes the task in 2026-07-28, and fails it in 2025-11-25, as each has it; its result is
/// kept either way, for `tasks/result` to answer with.
fn ended(outcome: Option<Result<Outcome, BoxError>>, name: &str, wire: &Wire) -> Ended {
    let Some(outcome) = outcome else {
        let refusal = Refusal::internal(format!(
            "tool `{name}` asked the client a question as its task began, which it could not \
             ask: ask questions before `Context::start_task`, or after it"
        ));
        return Ended::Error(refusal.error(wire));
    };
    match tool_result(outcome, name) {
        Ok(result) => {
            let failed = result.is_error() && !wire.is_stateless();
            let result = serde_json::to_value(result).expect("a tool result serialises");
            Ended::Result {
                failed,
                result: wire.shape(result),
            }
        }
        Err(refusal) => Ended::Error(refusal.error(wire)),
    }
}

/// How a task's run ended.
enum Ended {
    /// With the tool's result: a tool error `failed` the task in 2025-11-25.
    Result { failed: bool, result: Value },
    /// With the error its call would have been answered with.
    Error(Value),
}

impl Ended {
    /// Ends `job`'s task so.
    async fn record(self, job: &Job) -> Result<bool, crate::store::StoreError> {
        match self {
            Ended::Result { failed, result } => {
                let status = if failed {
                    TaskStatus::Failed
                } else {
                    TaskStatus::Completed
                };
                job.finish(status, |record| record.result = Some(result))
                    .await
            }
            Ended::Error(error) => {
                job.finish(TaskStatus::Failed, |record| record.error = Some(error))
                    .await
            }
        }
    }
}

impl Calls {
    /// Runs `call` of `tool` as a task, or in 2026-07-28 as a call that may become one, for the
    /// request `id` it `registered`; `round` holds its questions' answers in 2026-07-28.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_task(
        &self,
        origin: &Origin<'_>,
        registered: Registered,
        mode: Mode,
        call: impl FnOnce(CancellationToken, Arc<Job>) -> Call,
        round: Option<Round>,
        id: Id,
        name: String,
    ) -> Step {
        let tasks = Arc::clone(&self.tasks);
        let config = &tasks.config;
        let wire = origin.wire.clone();
        let asked = match mode {
            Mode::Task(asked) => asked,
            Mode::Call | Mode::MayBecomeTask => None,
        };
        let mut record = TaskRecord::new(
            new_id(),
            owner(origin),
            name.clone(),
            config.ttl_for(asked),
            config.poll_interval,
        );
        record.replica = config.store.replica().map(str::to_owned);
        let cancellation = CancellationToken::new();
        let handshake = !wire.is_stateless();
        let job = Job::new(
            record,
            Arc::clone(&config.store),
            cancellation.clone(),
            Phase::Task,
            handshake,
        );
        let call = call(cancellation.clone(), Arc::clone(&job));
        let pipeline = self.pipeline.clone();
        let state_key = self.state_key.clone();
        registered.run(async move {
            // Dropped with its request before it becomes a task, the run stops.
            let guard = cancellation.clone().drop_guard();
            let inputs = round.as_ref().map(Round::inputs);
            let mut run: Pin<Box<dyn Future<Output = _> + Send>> = Box::pin(async move {
                let outcome = pipeline.call(call);
                until_asked(outcome, inputs.as_deref()).await
            });
            if !handshake {
                // The first steps run here: the tool may put its task off, or end at once.
                let first = std::future::poll_fn(|cx| Poll::Ready(run.as_mut().poll(cx))).await;
                let made = match first {
                    Poll::Ready(made) => Some(made),
                    Poll::Pending => tokio::select! {
                        biased;
                        () = job.wanted() => None,
                        made = &mut run => Some(made),
                    },
                };
                if let Some(made) = made {
                    let reply = |outcome| match tool_result(outcome, &name) {
                        Ok(result) => {
                            let result = serde_json::to_value(result).expect("a result serialises");
                            Reply::result(&id, &wire.shape(result))
                        }
                        Err(refusal) => refusal.reply(&id, &wire),
                    };
                    return Round::conclude(round, made, &state_key, &id, &wire, reply);
                }
            }
            let record = match job.store(tasks.config.max_per_owner).await {
                Ok(Some(record)) => record,
                Ok(None) => {
                    return Reply::error(
                        &id,
                        INVALID_PARAMS,
                        &format!(
                            "too many tasks: this caller holds {} tasks, the most this server \
                             keeps for one; wait for one to be forgotten (each is kept for its \
                             TTL after its creation) and ask again",
                            tasks.config.max_per_owner
                        ),
                    );
                }
                Err(error) => {
                    return Reply::error(
                        &id,
                        INTERNAL_ERROR,
                        &format!("the task could not be stored: {error}"),
                    );
                }
            };
            guard.disarm();
            tasks.jobs.insert(&job);
            let finishing = Arc::clone(&tasks);
            let task_wire = wire.clone();
            // Other processes sharing the store may cancel the task or answer its questions.
            let shared = tasks.config.store.replica().is_some();
            tokio::spawn(async move {
                let watched = async {
                    if shared {
                        job.watch().await;
                    }
                    std::future::pending::<()>().await;
                };
                let outcome = tokio::select! {
                    biased;
                    () = job.cancellation().cancelled() => None,
                    made = run => Some(made),
                    () = watched => None,
                };
                let end = match outcome {
                    Some(made) => Some(ended(made, &name, &task_wire)),
                    None if job.stopped_by_server() => Some(Ended::Error(
                        Refusal::internal(
                            "the task failed: the server stopped before it ended, and its work \
                             went with it",
                        )
                        .error(&task_wire),
                    )),
                    None => None,
                };
                if let Some(end) = end
                    && let Err(error) = end.record(&job).await
                {
                    tracing::error!(task = job.id(), %error, "the task's end was not stored");
                }
                finishing.jobs.remove(job.id());
            });
            Reply::result(&id, &created(&record, &wire))
        })
    }

    /// Answers `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` or `tasks/update`
    /// from `origin`, in its era.
    pub(super) fn task_request(
        &self,
        origin: &Origin<'_>,
        id: Id,
        method: Method,
        params: &Value,
    ) -> Step {
        let wire = origin.wire.clone();
        if wire.is_stateless() {
            if matches!(method, Method::TasksResult | Method::TasksList) {
                return Step::Reply(Reply::error(
                    &id,
                    METHOD_NOT_FOUND,
                    &format!(
                        "method `{}` is not part of protocol 2026-07-28's tasks extension: \
                         `tasks/get` returns a task's result once it has ended",
                        method.name()
                    ),
                ));
            }
            if !declares_extension(&origin.caller.client) {
                let message = format!(
                    "method `{}` needs the tasks extension, which this request's \
                     `io.modelcontextprotocol/clientCapabilities` does not declare \
                     (`extensions[\"{EXTENSION_ID}\"]`)",
                    method.name()
                );
                return Step::Reply(missing_extension(&message).reply(&id, &wire));
            }
        } else if method == Method::TasksUpdate {
            return Step::Reply(Reply::error(
                &id,
                METHOD_NOT_FOUND,
                "method `tasks/update` is protocol 2026-07-28's: in the handshake era a task's \
                 questions are requests to the client, answered as any request",
            ));
        }
        let registered = match Registered::new(origin.session, &id) {
            Ok(registered) => registered,
            Err(reply) => return Step::Reply(reply),
        };
        let owner = owner(origin);
        let tasks = Arc::clone(&self.tasks);
        let params = params.clone();
        let sink = origin.sink.clone();
        registered.run(async move {
            let asked = TaskRequest {
                tasks: &tasks,
                owner: &owner,
                id: &id,
                wire: &wire,
                sink: &sink,
            };
            match asked.answer(method, &params).await {
                Ok(reply) => reply,
                Err(refusal) => refusal.reply(&id, &wire),
            }
        })
    }
}

/// One `tasks/*` request: whose, and in which era.
struct TaskRequest<'a> {
    tasks: &'a Tasks,
    owner: &'a str,
    id: &'a Id,
    wire: &'a Wire,
    /// The request's stream: where a `tasks/result` has the task's requests to the client
    /// sent while it waits.
    sink: &'a Sink,
}

impl TaskRequest<'_> {
    async fn answer(&self, method: Method, params: &Value) -> Result<Reply, Refusal> {
        if method == Method::TasksList {
            return self.list(params).await;
        }
        let Some(task_id) = params.get("taskId").and_then(Value::as_str) else {
            return Err(invalid(format!(
                "`{}` needs a `taskId` string",
                method.name()
            )));
        };
        let record = self.find(task_id).await?;
        match method {
            Method::TasksGet => Ok(self.get(record)),
            Method::TasksResult => self.result(record).await,
            Method::TasksCancel => self.cancel(record).await,
            Method::TasksUpdate => self.update(record, params).await,
            other => unreachable!("`{}` is not a tasks method", other.name()),
        }
    }

    /// The task `task_id` of this owner: anyone else's is unknown.
    async fn find(&self, task_id: &str) -> Result<TaskRecord, Refusal> {
        let found = self
            .tasks
            .config
            .store
            .get(task_id)
            .await
            .map_err(store_failed)?;
        found
            .filter(|record| record.owner == self.owner)
            .ok_or_else(|| {
                invalid(format!(
                    "unknown task `{task_id}`: it does not exist, it was forgotten after its \
                     TTL, or it is not yours"
                ))
            })
    }

    fn get(&self, record: TaskRecord) -> Reply {
        let mut task = task_members(&record, self.wire);
        if self.wire.is_stateless() {
            match record.status {
                TaskStatus::Completed => {
                    task.insert("result".into(), record.result.unwrap_or(Value::Null));
                }
                TaskStatus::Failed => {
                    task.insert("error".into(), record.error.unwrap_or(Value::Null));
                }
                TaskStatus::InputRequired => {
                    task.insert("inputRequests".into(), Value::Object(record.input_requests));
                }
                TaskStatus::Working | TaskStatus::Cancelled => {}
            }
        }
        Reply::result(self.id, &self.wire.shape(Value::Object(task)))
    }

    /// `tasks/result`: waits for the task's end, then answers as its call would have, naming
    /// the task.
    async fn result(&self, mut record: TaskRecord) -> Result<Reply, Refusal> {
        let store = &self.tasks.config.store;
        if let Some(job) = self.tasks.jobs.get(&record.id) {
            job.set_outgoing(self.sink.clone());
        }
        while !record.status.is_final() {
            tokio::time::sleep(RESULT_POLL).await;
            record = store
                .get(&record.id)
                .await
                .map_err(store_failed)?
                .ok_or_else(|| invalid(format!("task `{}` was forgotten", record.id)))?;
        }
        let related = json!({ RELATED_TASK_KEY: { "taskId": record.id } });
        match (record.status, record.result) {
            (TaskStatus::Completed | TaskStatus::Failed, Some(mut result)) => {
                result["_meta"] = merged(result.get("_meta"), &related);
                Ok(Reply::result(self.id, &result))
            }
            (TaskStatus::Failed, None) => {
                let error = record.error.unwrap_or(Value::Null);
                let code = error["code"].as_i64().unwrap_or(INTERNAL_ERROR);
                let message = error["message"]
                    .as_str()
                    .unwrap_or("the task failed")
                    .to_owned();
                let mut data = error.get("data").cloned().unwrap_or_else(|| json!({}));
                if let Value::Object(data) = &mut data {
                    data.insert("_meta".into(), related);
                }
                Err(Refusal::new(code, message).with_data(data))
            }
            (status, _) => Err(invalid(format!(
                "task `{}` was {}: it has no result",
                record.id,
                status.as_str()
            ))),
        }
    }

    async fn cancel(&self, mut record: TaskRecord) -> Result<Reply, Refusal> {
        if record.status.is_final() {
            if self.wire.is_stateless() {
                return Ok(self.ack());
            }
            return Err(invalid(format!(
                "task `{}` has already ended ({}): it cannot be cancelled",
                record.id,
                record.status.as_str()
            )));
        }
        let message = "cancelled by the client".to_owned();
        let written = match self.tasks.jobs.get(&record.id) {
            Some(job) => {
                let written = job
                    .finish(TaskStatus::Cancelled, |r| r.status_message = Some(message))
                    .await;
                job.cancellation().cancel();
                written
            }
            None => {
                record.input_requests.clear();
                record.moved(TaskStatus::Cancelled, Some(message));
                self.tasks.config.store.update(&record).await
            }
        }
        .map_err(store_failed)?;
        let now = self.find(&record.id).await?;
        if self.wire.is_stateless() {
            return Ok(self.ack());
        }
        if !written && now.status != TaskStatus::Cancelled {
            return Err(invalid(format!(
                "task `{}` ended ({}) before it could be cancelled",
                now.id,
                now.status.as_str()
            )));
        }
        Ok(self.get(now))
    }

    async fn update(&self, mut record: TaskRecord, params: &Value) -> Result<Reply, Refusal> {
        let answers = match params.get("inputResponses") {
            Some(Value::Object(answers)) => answers.clone(),
            None | Some(Value::Null) => Map::new(),
            Some(other) => {
                return Err(invalid(format!(
                    "`inputResponses` must be an object of answers by key, not {other}"
                )));
            }
        };
        let task_id = record.id.clone();
        let not_waiting = |status: TaskStatus| {
            invalid(format!(
                "task `{task_id}` is not waiting for input: it is `{}`",
                status.as_str()
            ))
        };
        if record.status != TaskStatus::InputRequired {
            return Err(not_waiting(record.status));
        }
        if let Some(job) = self.tasks.jobs.get(&record.id) {
            return match job.answer(answers).await.map_err(store_failed)? {
                Answered::Taken => Ok(self.ack()),
                Answered::NotWaiting(status) => Err(not_waiting(status)),
            };
        }
        if self.tasks.config.store.replica().is_none() {
            return Err(Refusal::internal(format!(
                "task `{}` waits for input on a process that no longer runs it",
                record.id
            )));
        }
        // Another process runs it: the answers are left in its record for that one to take.
        let store = &self.tasks.config.store;
        for _ in 0..ANSWER_TRIES {
            if record.status != TaskStatus::InputRequired {
                return Err(not_waiting(record.status));
            }
            let seen = record.updated_ms;
            let asked: Map<String, Value> = answers
                .iter()
                .filter(|(key, _)| record.input_requests.contains_key(*key))
                .map(|(key, answer)| (key.clone(), answer.clone()))
                .collect();
            if asked.is_empty() {
                return Ok(self.ack());
            }
            record.input_responses.extend(asked);
            record.touched();
            if store.replace(&record, seen).await.map_err(store_failed)? {
                return Ok(self.ack());
            }
            record = self.find(&task_id).await?;
        }
        Err(Refusal::internal(format!(
            "task `{task_id}` changed each of the {ANSWER_TRIES} times its answers were \
             written: send them again"
        )))
    }

    /// `tasks/list`: this owner's tasks, oldest first, a page at a time.
    async fn list(&self, params: &Value) -> Result<Reply, Refusal> {
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(cursor) => cursor
                .as_str()
                .and_then(|c| c.strip_prefix("tasks:"))
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| invalid(format!("`cursor` {cursor} is not one this server gave")))?,
        };
        let records = self
            .tasks
            .config
            .store
            .list(self.owner)
            .await
            .map_err(store_failed)?;
        let page: Vec<Value> = records
            .iter()
            .skip(start)
            .take(LIST_PAGE)
            .map(|record| Value::Object(task_members(record, self.wire)))
            .collect();
        let mut result = json!({ "tasks": page });
        if start + LIST_PAGE < records.len() {
            result["nextCursor"] = json!(format!("tasks:{}", start + LIST_PAGE));
        }
        Ok(Reply::result(self.id, &result))
    }

    /// The answer of 2026-07-28's `tasks/update` and `tasks/cancel`: nothing but its kind.
    fn ack(&self) -> Reply {
        Reply::result(self.id, &self.wire.shape(json!({})))
    }
}

fn invalid(message: String) -> Refusal {
    Refusal::invalid(message)
}

fn store_failed(error: crate::store::StoreError) -> Refusal {
    Refusal::internal(format!("the tasks' store did not answer: {error}"))
}

/// `meta` with `more`'s members added.
fn merged(meta: Option<&Value>, more: &Value) -> Value {
    let mut meta = meta.cloned().unwrap_or_else(|| json!({}));
    if let (Value::Object(meta), Value::Object(more)) = (&mut meta, more) {
        meta.extend(more.clone());
    }
    meta
}
