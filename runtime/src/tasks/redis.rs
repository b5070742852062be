//! Tasks in Redis, shared by the replicas of a server behind a load balancer: any replica
//! answers `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` and `tasks/update` for a
//! task another one runs.
//!
//! Three kinds of key, under the prefix (`toolwright:` by default, as the session store's):
//!
//! - `<prefix>task:<id>`: the task's record, as JSON, expiring when the task is forgotten
//!   (`PXAT` its creation plus its TTL);
//! - `<prefix>tasks:<owner>`: the ids of an owner's tasks, a sorted set scored by when each
//!   expires, itself expiring with its last task, so that nothing is left once every task is
//!   forgotten; a new task drops the expired entries first, then counts the others against the
//!   cap;
//! - `<prefix>alive:<replica>`: a replica's heartbeat, written every second with a 5-second
//!   lifetime by the replica that runs tasks, from its first task on, for as long as it lives.
//!
//! Every change is one Lua script, so that it is atomic among replicas: a new task (the owner's
//! expired entries dropped, the cap checked, both keys written); a write only over a task that
//! has not ended (`KEEPTTL`, so that a task is forgotten when it was to be); a write only over
//! the version of the task the writer read.
//!
//! **A replica that stops.** A task's record names the replica that runs it. Reading a task that
//! has not ended (`get`, `list`), the store asks whether that replica's heartbeat is there; when
//! it is not, the script that writes the task `failed` (error -32603, "the replica that ran it
//! stopped") checks again, in the same step, that the heartbeat is still missing and that the
//! task has not changed since it was read, so that a task that ended meanwhile stays as it
//! ended. A killed replica's task turns `failed` at the first read after its heartbeat's
//! lifetime, never staying `working` until it is forgotten.
//!
//! The heartbeat is the task store's own rather than the one the HTTP transport writes for its
//! streams ([`SessionStore::heartbeat`](crate::store::SessionStore::heartbeat)): the check and
//! the write it decides must be one script in one Redis, and a task store may be given
//! without the transport's (another Redis, another prefix, or none at all); the transport's is
//! also its own business, written only while it listens. Its lifetime is longer than the
//! transport's 3 seconds, since taking a live replica for dead fails its tasks for good, where
//! a stream only ends. Redis down for longer than the lifetime loses every heartbeat until the
//! next beat, a second after it returns: a task read in that second may be failed although its
//! replica lives (which then stops it).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use redis::{AsyncCommands, Script, SetExpiry, SetOptions};
use tokio_util::sync::CancellationToken;

use super::{TaskFuture, TaskRecord, TaskStatus, TaskStore};
use crate::protocol::jsonrpc::INTERNAL_ERROR;
use crate::store::StoreError;
use crate::store::redis::{DEFAULT_PREFIX, RedisServer, alive_key, millis};

/// How often a replica that runs tasks says it is alive.
const BEAT_EVERY: Duration = Duration::from_secs(1);

/// How long a replica's heartbeat lasts: a replica silent that long is taken for dead, and its
/// tasks fail.
const BEAT_LIFETIME: Duration = Duration::from_secs(5);

/// How many times a read that found a dead replica's task tries to fail it, while others write
/// it.
const TRIES: usize = 4;

/// Why a task whose replica stopped failed.
const ORPHANED: &str = "the task failed: the replica that ran it stopped (killed, or its \
                        machine gone) before it ended";

/// Whether a status, in Lua, is one a task never leaves.
macro_rules! lua_ended {
    () => {
        "local function ended(status)\n\
         return status == 'completed' or status == 'failed' or status == 'cancelled'\n\
         end\n"
    };
}

/// A new task. KEYS: the task, its owner's tasks, its replica's heartbeat. ARGV: the record,
/// its id, when it expires (ms since the epoch), the cap, the heartbeat's lifetime (ms).
static CREATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local time = redis.call('TIME')
         local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
         redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
         if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
             return 0
         end
         redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[3])
         redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
         local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
         redis.call('PEXPIREAT', KEYS[2], last[2])
         redis.call('SET', KEYS[3], '1', 'PX', ARGV[5])
         return 1",
    )
});

/// A write over a task that has not ended. KEYS: the task. ARGV: the record.
static UPDATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_ended!(),
        "local stored = redis.call('GET', KEYS[1])
         if not stored or ended(cjson.decode(stored).status) then
             return 0
         end
         redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
         return 1"
    ))
});

/// A write over the version of a task the writer read. KEYS: the task and, for a write that
/// fails the task of a replica taken for dead, that replica's heartbeat. ARGV: the record, the
/// `updated_ms` of the version read.
static REPLACE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_ended!(),
        "local stored = redis.call('GET', KEYS[1])
         if not stored then
             return 0
         end
         local task = cjson.decode(stored)
         if ended(task.status) or task.updated_ms ~= tonumber(ARGV[2]) then
             return 0
         end
         if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
             return 0
         end
         redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
         return 1"
    ))
});

/// Tasks kept in Redis, so that the replicas of a server share them; see
/// [the module](crate::tasks) for what survives a replica's death.
///
/// ```no_run
/// # fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use toolwright::tasks::{RedisTaskStore, TaskConfig};
///
/// let server = toolwright::server!()
///     .tasks(TaskConfig::new().store(RedisTaskStore::new("redis://127.0.0.1:6379/")?));
/// # Ok(())
/// # }
/// ```
///
/// Each store names its replica (8 random hex digits) and stamps the tasks it creates with it
/// ([`TaskRecord::replica`]); a task whose replica stopped saying it is alive turns `failed` when
/// it is next read. Like the session store ([`RedisStore`](crate::store::RedisStore)), one
/// multiplexed connection serves the process, opened on first use and again by itself after a
/// failure, and a command that takes longer than the [timeout](RedisTaskStore::timeout)
/// (2 seconds by default) fails the request that needed it with an internal error.
pub struct RedisTaskStore {
    redis: Arc<RedisServer>,
    prefix: String,
    replica: String,
    beating: AtomicBool,
    /// Stops the heartbeat once the store is dropped.
    stop: CancellationToken,
}

impl RedisTaskStore {
    /// A store on the Redis server at `url` (`redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`,
    /// or `redis+unix:///PATH[?db=DB]` for a Unix socket), with keys under `toolwright:`.
    /// Nothing is connected until the first task.
    ///
    /// # Errors
    ///
    /// When `url` is not a Redis URL: the error says the forms it may take, with any password
    /// in it masked.
    pub fn new(url: &str) -> Result<RedisTaskStore, StoreError> {
        Ok(RedisTaskStore {
            redis: Arc::new(RedisServer::open(url)?),
            prefix: DEFAULT_PREFIX.to_owned(),
            replica: crate::store::replica_name(),
            beating: AtomicBool::new(false),
            stop: CancellationToken::new(),
        })
    }

    /// Keys under this prefix instead of `toolwright:`: servers that should not share tasks
    /// (two applications on one Redis) each take their own.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> RedisTaskStore {
        self.prefix = prefix.into();
        self
    }

    /// How long a command may take, connecting included (2 seconds by default).
    ///
    /// # Panics
    ///
    /// Once the store has begun its heartbeat (given to a server that ran a task): set it
    /// before.
    #[must_use]
    #[track_caller]
    pub fn timeout(mut self, timeout: Duration) -> RedisTaskStore {
        Arc::get_mut(&mut self.redis)
            .expect("the timeout of a RedisTaskStore is set before it is used")
            .set_timeout(timeout);
        self
    }

    fn task_key(&self, id: &str) -> String {
        format!("{}task:{id}", self.prefix)
    }

    fn owner_key(&self, owner: &str) -> String {
        format!("{}tasks:{owner}", self.prefix)
    }

    /// Says that this replica is alive, every [`BEAT_EVERY`], from now until the store is
    /// dropped; the first call starts it, the others do nothing.
    fn beat(&self) {
        if self.beating.swap(true, Ordering::AcqRel) {
            return;
        }
        let redis = Arc::clone(&self.redis);
        let key = alive_key(&self.prefix, &self.replica);
        let stop = self.stop.clone();
        tokio::spawn(async move {
            let mut beats = tokio::time::interval(BEAT_EVERY);
            loop {
                tokio::select! {
                    _ = beats.tick() => {}
                    () = stop.cancelled() => return,
                }
                let options =
                    SetOptions::default().with_expiration(SetExpiry::PX(millis(BEAT_LIFETIME)));
                let beat = redis
                    .run(async |mut redis| redis.set_options::<_, _, ()>(&key, 1, options).await)
                    .await;
                if let Err(error) = beat {
                    tracing::debug!(%error, "the task store did not take this replica's heartbeat");
                }
            }
        });
    }

    /// Which of these replicas say they are alive, in order.
    async fn alive(&self, replicas: &[&str]) -> Result<Vec<bool>, StoreError> {
        if replicas.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = replicas
            .iter()
            .map(|replica| alive_key(&self.prefix, replica))
            .collect();
        self.redis
            .run(async |mut redis| {
                let mut pipe = redis::pipe();
                for key in &keys {
                    pipe.exists(key);
                }
                pipe.query_async(&mut redis).await
            })
            .await
    }

    /// Writes `task` over the version last written at `seen`; with `dead`, only while that
    /// replica's heartbeat is missing.
    async fn replace_seen(
        &self,
        task: &TaskRecord,
        seen: u64,
        dead: Option<&str>,
    ) -> Result<bool, StoreError> {
        let json = serde_json::to_string(task).expect("a task record serialises");
        let key = self.task_key(&task.id);
        let heartbeat = dead.map(|replica| alive_key(&self.prefix, replica));
        self.redis
            .run(async |mut redis| {
                let mut invocation = REPLACE.key(&key);
                if let Some(heartbeat) = &heartbeat {
                    invocation.key(heartbeat);
                }
                let written: u8 = invocation
                    .arg(&json)
                    .arg(seen)
                    .invoke_async(&mut redis)
                    .await?;
                Ok(written == 1)
            })
            .await
    }

    /// `record`, read as not ended, as it stands once its replica is known to be alive or
    /// dead: `failed` when dead. `alive` says whether its replica was seen alive.
    async fn settled(
        &self,
        mut record: TaskRecord,
        alive: bool,
    ) -> Result<Option<TaskRecord>, StoreError> {
        let mut alive = alive;
        for _ in 0..TRIES {
            let Some(replica) = record.replica.clone() else {
                return Ok(Some(record));
            };
            if alive || record.status.is_final() {
                return Ok(Some(record));
            }
            let mut failed = record.clone();
            orphaned(&mut failed);
            if self
                .replace_seen(&failed, record.updated_ms, Some(&replica))
                .await?
            {
                tracing::warn!(
                    task = %record.id,
                    tool = %record.tool,
                    replica = %replica,
                    "task failed: the replica that ran it stopped"
                );
                return Ok(Some(failed));
            }
            // It changed since it was read, or its replica came back: read it again.
            let Some(again) = self.read(&record.id).await? else {
                return Ok(None);
            };
            record = again;
            alive = match record.replica.as_deref() {
                Some(replica) if !record.status.is_final() => self.alive(&[replica]).await?[0],
                _ => true,
            };
        }
        Ok(Some(record))
    }

    /// The task under `id` as stored, read once.
    async fn read(&self, id: &str) -> Result<Option<TaskRecord>, StoreError> {
        let key = self.task_key(id);
        let json: Option<String> = self
            .redis
            .run(async |mut redis| redis.get(&key).await)
            .await?;
        json.map(|json| parse(&json)).transpose()
    }
}

/// A record read from Redis.
fn parse(json: &str) -> Result<TaskRecord, StoreError> {
    serde_json::from_str(json)
        .map_err(|err| StoreError::new(format!("a task in Redis that is not one of ours: {err}")))
}

/// `record` failed because the replica that ran it stopped.
fn orphaned(record: &mut TaskRecord) {
    record.input_requests.clear();
    record.input_responses.clear();
    record.error = Some(serde_json::json!({ "code": INTERNAL_ERROR, "message": ORPHANED }));
    record.moved(TaskStatus::Failed, Some(ORPHANED.to_owned()));
}

impl Drop for RedisTaskStore {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("RedisTaskStore");
        self.redis.debug_fields(&mut f);
        f.field("prefix", &self.prefix)
            .field("replica", &self.replica)
            .finish()
    }
}

impl TaskStore for RedisTaskStore {
    fn create<'a>(&'a self, task: &'a TaskRecord, cap: usize) -> TaskFuture<'a, bool> {
        Box::pin(async move {
            let json = serde_json::to_string(task).expect("a task record serialises");
            let keys = [
                self.task_key(&task.id),
                self.owner_key(&task.owner),
                alive_key(&self.prefix, &self.replica),
            ];
            let created: u8 = self
                .redis
                .run(async |mut redis| {
                    CREATE
                        .key(&keys[..])
                        .arg(&json)
                        .arg(&task.id)
                        .arg(task.expires_ms())
                        .arg(cap)
                        .arg(millis(BEAT_LIFETIME))
                        .invoke_async(&mut redis)
                        .await
                })
                .await?;
            self.beat();
            Ok(created == 1)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> TaskFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            let Some(record) = self.read(id).await? else {
                return Ok(None);
            };
            let alive = match record.replica.as_deref() {
                Some(replica) if !record.status.is_final() => self.alive(&[replica]).await?[0],
                _ => true,
            };
            self.settled(record, alive).await
        })
    }

    fn update<'a>(&'a self, task: &'a TaskRecord) -> TaskFuture<'a, bool> {
        Box::pin(async move {
            let json = serde_json::to_string(task).expect("a task record serialises");
            let key = self.task_key(&task.id);
            let written: u8 = self
                .redis
                .run(async |mut redis| UPDATE.key(&key).arg(&json).invoke_async(&mut redis).await)
                .await?;
            Ok(written == 1)
        })
    }

    fn replace<'a>(&'a self, task: &'a TaskRecord, seen: u64) -> TaskFuture<'a, bool> {
        Box::pin(self.replace_seen(task, seen, None))
    }

    fn list<'a>(&'a self, owner: &'a str) -> TaskFuture<'a, Vec<TaskRecord>> {
        Box::pin(async move {
            let index = self.owner_key(owner);
            let ids: Vec<String> = self
                .redis
                .run(async |mut redis| redis.zrange(&index, 0, -1).await)
                .await?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let keys: Vec<String> = ids.iter().map(|id| self.task_key(id)).collect();
            // A task forgotten since is not there any more (`nil`).
            let found: Vec<Option<String>> = self
                .redis
                .run(async |mut redis| redis::cmd("MGET").arg(&keys).query_async(&mut redis).await)
                .await?;
            let records = found
                .iter()
                .flatten()
                .map(|json| parse(json))
                .collect::<Result<Vec<TaskRecord>, StoreError>>()?;
            let running: Vec<&str> = records
                .iter()
                .filter(|record| !record.status.is_final())
                .filter_map(|record| record.replica.as_deref())
                .collect();
            let alive = self.alive(&running).await?;
            let dead: Vec<&str> = running
                .iter()
                .zip(&alive)
                .filter(|(_, alive)| !**alive)
                .map(|(replica, _)| *replica)
                .collect();
            let mut listed = Vec::with_capacity(records.len());
            for record in records.iter().cloned() {
                let alive = !record.replica.as_deref().is_some_and(|r| dead.contains(&r));
                if let Some(record) = self.settled(record, alive).await? {
                    listed.push(record);
                }
            }
            listed.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
            Ok(listed)
        })
    }

    fn describe(&self) -> String {
        self.redis.describe()
    }

    fn replica(&self) -> Option<&str> {
        Some(&self.replica)
    }
}
