//! Where tasks are kept: the [`TaskStore`] trait.

use std::future::Future;
use std::pin::Pin;

use super::TaskRecord;
use crate::store::StoreError;

/// What a [`TaskStore`] method returns: a future of its outcome, borrowing the store.
pub type TaskFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Where a server keeps its tasks: in its memory ([`MemoryTaskStore`](super::MemoryTaskStore),
/// the default), or in the Redis its replicas share (`RedisTaskStore`, feature `redis`), so
/// that any replica answers `tasks/get` and `tasks/cancel` for a task another runs.
///
/// A task is forgotten once its TTL has passed since its creation
/// ([`TaskRecord::expires_ms`]): every method then acts as if it never was. Each method must be
/// atomic on its own, as several processes may call them at once. A store that cannot answer
/// returns a [`StoreError`]: the request that needed it gets an internal error, and the next
/// one tries again.
pub trait TaskStore: Send + Sync + 'static {
    /// Keeps a new task, unless its owner already holds `cap` tasks that are not forgotten:
    /// then `false`, and nothing is kept.
    fn create<'a>(&'a self, task: &'a TaskRecord, cap: usize) -> TaskFuture<'a, bool>;

    /// The task under `id`, unless it is forgotten (or never was).
    fn get<'a>(&'a self, id: &'a str) -> TaskFuture<'a, Option<TaskRecord>>;

    /// Replaces the task under `task.id` with `task`, if that one has not ended: `false`, and
    /// nothing written, when it has ended or is forgotten. An ended task never changes: of a
    /// cancellation and a result that race, the first written stands.
    fn update<'a>(&'a self, task: &'a TaskRecord) -> TaskFuture<'a, bool>;

    /// Replaces the task under `task.id` with `task` if nothing was written to it since it
    /// was read: the stored task has not ended, and its [`updated_ms`](TaskRecord::updated_ms)
    /// is still `seen`. `false`, and nothing written, otherwise (or when it is forgotten): the
    /// writer reads it again and decides anew. The process that runs a task writes it so, and
    /// so does another that hands it a client's answers, so that neither undoes the other.
    fn replace<'a>(&'a self, task: &'a TaskRecord, seen: u64) -> TaskFuture<'a, bool>;

    /// The tasks of `owner` that are not forgotten, oldest first.
    fn list<'a>(&'a self, owner: &'a str) -> TaskFuture<'a, Vec<TaskRecord>>;

    /// Where the tasks are kept, as the server says it at start (`tasks: in memory`): never a
    /// password.
    fn describe(&self) -> String;

    /// This process's name among the processes that share the store, when others may share it;
    /// `None` by default, for a store only this process sees.
    ///
    /// A store that gives one is shared: each task this process runs is stamped with the name
    /// ([`TaskRecord::replica`]), the store tells when the replica a task names has stopped
    /// (its `get` and `list` then return the task `failed`), and the process reads the tasks it
    /// runs every half second for what other processes wrote to them: a cancellation, which
    /// stops the tool, or a client's answers (`input_responses`), which the tool is handed.
    fn replica(&self) -> Option<&str> {
        None
    }
}
