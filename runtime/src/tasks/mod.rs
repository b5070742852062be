//! Tasks: a tool call that outlives its request. The client asks for a task, the server answers
//! at once with the task's id, runs the tool, and the client polls for its status and result.
//!
//! A tool says whether it may run as one with `#[mcp_tool(task = "optional")]` or
//! `task = "required"` ([`TaskSupport`]); the same function runs as a call or as a task, and
//! its [`Context`](crate::Context) says which ([`task_id`](crate::Context::task_id)), carries
//! its status message ([`set_status_message`](crate::Context::set_status_message)) and its
//! cancellation, and asks the client as in a call: in a task, a question turns the task
//! `input_required` until the client answers it.
//!
//! Both eras of the protocol are served:
//!
//! - **2025-11-25** (experimental tasks): the server offers `capabilities.tasks`, lists each
//!   tool's `execution.taskSupport`, and a `tools/call` carrying `task: {ttl}` is answered with
//!   a `CreateTaskResult`; then `tasks/get`, `tasks/result` (which waits for the end),
//!   `tasks/list` and `tasks/cancel`. A question of the task is a request to the client that
//!   carries the task's id (`_meta["io.modelcontextprotocol/related-task"]`).
//! - **2026-07-28**, the extension `io.modelcontextprotocol/tasks`: a request whose
//!   `clientCapabilities` declare the extension may be answered with a task (`resultType:
//!   "task"`), which the server decides for a task-capable tool; then `tasks/get` (the status,
//!   and at the end the result or the error, or the questions waiting), `tasks/update` (the
//!   answers) and `tasks/cancel`. A client that did not declare the extension never gets a task,
//!   and a tool that requires one refuses it (-32021).
//!
//! `notifications/tasks/status` is not sent: clients poll, as both eras let them (a client must
//! not rely on the notification).
//!
//! A task belongs to whoever created it: the principal of the request's access token, else the
//! session (the handshake era); anyone else is told it does not exist. A 2026-07-28 request
//! without an access token has no session to belong to: its tasks are any such caller's who
//! knows the id (128 random bits), so a server whose clients must not see each other's tasks
//! checks access tokens. A task is kept for its TTL after its creation, bounded by the server's
//! maximum ([`TaskConfig::max_ttl`]), then forgotten, and each owner holds at most
//! [`TaskConfig::max_per_owner`] tasks at once.
//!
//! # Where tasks are kept
//!
//! A [`TaskStore`] keeps each task's record: its status, its status message, its questions, and
//! once it ends its result or error. By default that is the server's memory
//! ([`MemoryTaskStore`]), and tasks end with the process. Replicas behind a load balancer keep
//! them in the Redis they share (`RedisTaskStore`, feature `redis`, which `--redis` gives), so
//! that any replica answers for a task another one runs:
//!
//! ```no_run
//! # #[cfg(feature = "redis")]
//! # fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use toolwright::tasks::{RedisTaskStore, TaskConfig};
//!
//! let server = toolwright::server!()
//!     .tasks(TaskConfig::new().store(RedisTaskStore::new("redis://127.0.0.1:6379/")?));
//! # Ok(())
//! # }
//! ```
//!
//! The tool itself runs on the replica that created the task, which reads the task's record
//! every half second while it runs: a `tasks/cancel` that reached another replica stops the
//! tool there, and the answers of a `tasks/update` that reached another replica, left in the
//! record (`input_responses`), are handed to the tool's questions. Until then, within that half
//! second, `tasks/get` still lists the answered questions under `inputRequests`.
//!
//! **What survives a replica's death.** A task's record and its result, kept in Redis, survive
//! any replica: a completed task's result is read whole on every replica, until the task is
//! forgotten. A running task's work dies with its replica (killed, or its machine gone): the
//! task turns `failed`, with error -32603 saying that the replica that ran it stopped, at the
//! first read once that replica's heartbeat has lapsed (5 seconds), rather than staying
//! `working` until it is forgotten. Each task's record names the replica that runs it
//! ([`TaskRecord::replica`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

mod job;
mod memory;
mod record;
#[cfg(feature = "redis")]
mod redis;
mod store;

pub use memory::MemoryTaskStore;
pub use record::{TaskRecord, TaskStatus};
#[cfg(feature = "redis")]
pub use redis::RedisTaskStore;
pub use store::{TaskFuture, TaskStore};

pub(crate) use job::{Answered, Job, Jobs, Phase};
pub(crate) use record::{iso8601, now_ms};

/// The id of the 2026-07-28 tasks extension, under `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";

/// The `_meta` key that ties a message to its task (2025-11-25).
pub(crate) const RELATED_TASK_KEY: &str = "io.modelcontextprotocol/related-task";

/// How a server keeps and bounds its tasks: given to [`Server::tasks`](crate::Server::tasks).
///
/// ```
/// use std::time::Duration;
/// use toolwright::tasks::{MemoryTaskStore, TaskConfig};
///
/// let tasks = TaskConfig::new()
///     .store(MemoryTaskStore::new())
///     .ttl(Duration::from_secs(15 * 60))
///     .max_ttl(Duration::from_secs(6 * 60 * 60))
///     .max_per_owner(20);
/// ```
#[derive(Clone)]
pub struct TaskConfig {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) ttl: Duration,
    pub(crate) max_ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) max_per_owner: usize,
}

impl Default for TaskConfig {
    fn default() -> TaskConfig {
        TaskConfig::new()
    }
}

impl TaskConfig {
    /// Tasks in memory, kept for an hour unless the client asks for less (at most a day),
    /// polled every second, at most 100 per owner.
    pub fn new() -> TaskConfig {
        TaskConfig {
            store: Arc::new(MemoryTaskStore::new()),
            ttl: Duration::from_secs(60 * 60),
            max_ttl: Duration::from_secs(24 * 60 * 60),
            poll_interval: Duration::from_secs(1),
            max_per_owner: 100,
        }
    }

    /// Where the tasks are kept.
    #[must_use]
    pub fn store(mut self, store: impl TaskStore) -> TaskConfig {
        self.store = Arc::new(store);
        self
    }

    /// How long a task is kept after its creation when the client does not say (the
    /// handshake era's `task.ttl`, which is bounded by [`max_ttl`](Self::max_ttl)); 2026-07-28
    /// clients always get this one.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> TaskConfig {
        self.ttl = ttl;
        self
    }

    /// The longest a client may ask a task to be kept.
    #[must_use]
    pub fn max_ttl(mut self, max_ttl: Duration) -> TaskConfig {
        self.max_ttl = max_ttl;
        self
    }

    /// How often clients are told to ask for a task's status.
    #[must_use]
    pub fn poll_interval(mut self, poll_interval: Duration) -> TaskConfig {
        self.poll_interval = poll_interval;
        self
    }

    /// The most tasks one owner (a principal, else a session) holds at once, ended ones
    /// included until they are forgotten: one more is refused with an error that says so.
    #[must_use]
    pub fn max_per_owner(mut self, max: usize) -> TaskConfig {
        self.max_per_owner = max;
        self
    }

    /// The TTL a task gets when the client asks for `asked`.
    pub(crate) fn ttl_for(&self, asked: Option<Duration>) -> Duration {
        asked.unwrap_or(self.ttl).min(self.max_ttl)
    }
}

impl fmt::Debug for TaskConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskConfig")
            .field("store", &self.store.describe())
            .field("ttl", &self.ttl)
            .field("max_ttl", &self.max_ttl)
            .field("poll_interval", &self.poll_interval)
            .field("max_per_owner", &self.max_per_owner)
            .finish()
    }
}

/// A server's tasks: how they are kept, and those this process runs.
pub(crate) struct Tasks {
    pub(crate) config: TaskConfig,
    pub(crate) jobs: Jobs,
}

impl Tasks {
    pub(crate) fn new(config: TaskConfig) -> Tasks {
        Tasks {
            config,
            jobs: Jobs::default(),
        }
    }
}

/// A new task id: 32 hex digits from the system's randomness.
pub(crate) fn new_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the system gives randomness");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a tool runs as a task: what `#[mcp_tool(task = "...")]` says, and what the tool's
/// `execution.taskSupport` tells clients.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TaskSupport {
    /// Never as a task: a client that asks for one is refused. The default.
    #[default]
    Forbidden,
    /// As a task when the client asks for one, as a plain call otherwise.
    Optional,
    /// Only as a task: a plain call is refused.
    Required,
}

impl TaskSupport {
    /// Its name on the wire: `forbidden`, `optional` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }

    /// Whether the tool may run as a task.
    pub fn allows_task(self) -> bool {
        self != TaskSupport::Forbidden
    }
}

impl fmt::Display for TaskSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
