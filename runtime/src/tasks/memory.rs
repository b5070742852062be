//! Tasks in the server's own memory: they end with the process.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use super::record::now_ms;
use super::{TaskFuture, TaskRecord, TaskStore};

/// Every how many new tasks the forgotten ones are swept out.
const SWEEP_EVERY: u64 = 256;

/// Tasks in this process's memory: the [`TaskStore`] a server has unless given another. Clones
/// share the same tasks.
#[derive(Clone, Default)]
pub struct MemoryTaskStore {
    inner: Arc<Mutex<Held>>,
}

#[derive(Default)]
struct Held {
    tasks: HashMap<String, TaskRecord>,
    created: u64,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> MemoryTaskStore {
        MemoryTaskStore::default()
    }

    /// How many tasks it holds, forgotten ones that were not swept out yet included: what it
    /// costs in memory.
    pub fn len(&self) -> usize {
        self.inner().tasks.len()
    }

    /// Whether it holds no task at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every forgotten task now, rather than as new ones come.
    pub fn sweep(&self) {
        let now = now_ms();
        self.inner().tasks.retain(|_, task| !task.expired_at(now));
    }

    fn inner(&self) -> MutexGuard<'_, Held> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("tasks", &self.len())
            .finish()
    }
}

impl TaskStore for MemoryTaskStore {
    fn create<'a>(&'a self, task: &'a TaskRecord, cap: usize) -> TaskFuture<'a, bool> {
        let now = now_ms();
        let mut inner = self.inner();
        inner.created += 1;
        if inner.created.is_multiple_of(SWEEP_EVERY) {
            inner.tasks.retain(|_, task| !task.expired_at(now));
        }
        let held = inner
            .tasks
            .values()
            .filter(|t| t.owner == task.owner && !t.expired_at(now))
            .count();
        let kept = held < cap;
        if kept {
            inner.tasks.insert(task.id.clone(), task.clone());
        }
        Box::pin(std::future::ready(Ok(kept)))
    }

    fn get<'a>(&'a self, id: &'a str) -> TaskFuture<'a, Option<TaskRecord>> {
        let now = now_ms();
        let mut inner = self.inner();
        if inner.tasks.get(id).is_some_and(|t| t.expired_at(now)) {
            inner.tasks.remove(id);
        }
        let task = inner.tasks.get(id).cloned();
        Box::pin(std::future::ready(Ok(task)))
    }

    fn update<'a>(&'a self, task: &'a TaskRecord) -> TaskFuture<'a, bool> {
        let now = now_ms();
        let mut inner = self.inner();
        let written = match inner.tasks.get_mut(&task.id) {
            Some(kept) if !kept.expired_at(now) && !kept.status.is_final() => {
                *kept = task.clone();
                true
            }
            _ => false,
        };
        Box::pin(std::future::ready(Ok(written)))
    }

    fn list<'a>(&'a self, owner: &'a str) -> TaskFuture<'a, Vec<TaskRecord>> {
        let now = now_ms();
        let inner = self.inner();
        let mut tasks: Vec<TaskRecord> = inner
            .tasks
            .values()
            .filter(|t| t.owner == owner && !t.expired_at(now))
            .cloned()
            .collect();
        tasks.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        Box::pin(std::future::ready(Ok(tasks)))
    }

    fn describe(&self) -> String {
        "memory".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::tasks::TaskStatus;

    fn task(id: &str, owner: &str, ttl: Duration) -> TaskRecord {
        TaskRecord::new(
            id.into(),
            owner.into(),
            "slow".into(),
            ttl,
            Duration::from_secs(1),
        )
    }

    #[tokio::test]
    async fn an_owner_holds_at_most_its_cap() {
        let store = MemoryTaskStore::new();
        let hour = Duration::from_secs(3600);
        assert!(store.create(&task("a", "ada", hour), 2).await.unwrap());
        assert!(store.create(&task("b", "ada", hour), 2).await.unwrap());
        assert!(!store.create(&task("c", "ada", hour), 2).await.unwrap());
        assert!(store.create(&task("d", "bob", hour), 2).await.unwrap());
        assert_eq!(store.get("c").await.unwrap(), None);
        let listed: Vec<String> = store
            .list("ada")
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.id)
            .collect();
        assert_eq!(listed, ["a", "b"]);
    }

    #[tokio::test]
    async fn an_ended_task_never_changes() {
        let store = MemoryTaskStore::new();
        let mut running = task("a", "ada", Duration::from_secs(3600));
        store.create(&running, 10).await.unwrap();
        let mut cancelled = running.clone();
        cancelled.moved(
            TaskStatus::Cancelled,
            Some("cancelled by the client".into()),
        );
        assert!(store.update(&cancelled).await.unwrap());
        running.moved(TaskStatus::Completed, None);
        assert!(!store.update(&running).await.unwrap());
        assert_eq!(
            store.get("a").await.unwrap().unwrap().status,
            TaskStatus::Cancelled
        );
    }

    #[tokio::test]
    async fn a_task_is_forgotten_after_its_ttl_and_frees_its_place() {
        let store = MemoryTaskStore::new();
        assert!(
            store
                .create(&task("a", "ada", Duration::from_millis(30)), 1)
                .await
                .unwrap()
        );
        assert!(
            !store
                .create(&task("b", "ada", Duration::from_secs(60)), 1)
                .await
                .unwrap()
        );
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert_eq!(store.get("a").await.unwrap(), None);
        assert!(
            store
                .create(&task("b", "ada", Duration::from_secs(60)), 1)
                .await
                .unwrap()
        );
        store.sweep();
        assert_eq!(store.len(), 1);
    }
}
