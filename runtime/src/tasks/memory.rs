//! Tasks in the server's own memory: they end with the process.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use super::record::now_ms;
use super::{TaskFuture, TaskRecord, TaskStore};

/// How long after a sweep a new task sweeps every forgotten one out again: a store that took its
/// tasks long ago frees them with its next one.
const SWEEP_AFTER_MS: u64 = 1000;

/// Tasks in this process's memory: the [`TaskStore`] a server has unless given another. Clones
/// share the same tasks.
#[derive(Clone, Default)]
pub struct MemoryTaskStore {
    inner: Arc<Mutex<Held>>,
}

#[derive(Default)]
struct Held {
    tasks: HashMap<String, TaskRecord>,
    /// Each owner's tasks, by when each is forgotten.
    owners: HashMap<String, BTreeSet<(u64, String)>>,
    swept_ms: u64,
}

impl Held {
    /// Drops every forgotten task.
    fn sweep(&mut self, now: u64) {
        let tasks = &mut self.tasks;
        self.owners.retain(|_, held| {
            forget_expired(held, tasks, now);
            !held.is_empty()
        });
        self.swept_ms = now;
    }
}

/// Drops the forgotten tasks of one owner, who holds `held`.
fn forget_expired(
    held: &mut BTreeSet<(u64, String)>,
    tasks: &mut HashMap<String, TaskRecord>,
    now: u64,
) {
    while held.first().is_some_and(|(expires, _)| *expires <= now) {
        if let Some((_, id)) = held.pop_first() {
            tasks.remove(&id);
        }
    }
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

    /// Drops every forgotten task now, rather than with the next new task (which sweeps them
    /// out when a second has passed since the last sweep; each owner's, always).
    pub fn sweep(&self) {
        self.inner().sweep(now_ms());
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
        if now.saturating_sub(inner.swept_ms) >= SWEEP_AFTER_MS {
            inner.sweep(now);
        }
        let Held { tasks, owners, .. } = &mut *inner;
        let held = owners.entry(task.owner.clone()).or_default();
        forget_expired(held, tasks, now);
        let kept = held.len() < cap;
        if kept {
            held.insert((task.expires_ms(), task.id.clone()));
            tasks.insert(task.id.clone(), task.clone());
        } else if held.is_empty() {
            owners.remove(&task.owner);
        }
        Box::pin(std::future::ready(Ok(kept)))
    }

    fn get<'a>(&'a self, id: &'a str) -> TaskFuture<'a, Option<TaskRecord>> {
        let now = now_ms();
        let inner = self.inner();
        let task = inner.tasks.get(id).filter(|t| !t.expired_at(now)).cloned();
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

    fn replace<'a>(&'a self, task: &'a TaskRecord, seen: u64) -> TaskFuture<'a, bool> {
        let now = now_ms();
        let mut inner = self.inner();
        let written = match inner.tasks.get_mut(&task.id) {
            Some(kept)
                if !kept.expired_at(now) && !kept.status.is_final() && kept.updated_ms == seen =>
            {
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
            .owners
            .get(owner)
            .into_iter()
            .flatten()
            .filter_map(|(_, id)| inner.tasks.get(id))
            .filter(|t| !t.expired_at(now))
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
    async fn ten_thousand_forgotten_tasks_are_swept_out() {
        let store = MemoryTaskStore::new();
        let second = Duration::from_secs(1);
        let creating = std::time::Instant::now();
        for n in 0..10_000 {
            let owner = format!("owner{}", n % 100);
            assert!(
                store
                    .create(&task(&format!("t{n}"), &owner, second), 100)
                    .await
                    .unwrap()
            );
        }
        // Task timestamps are the wall clock's (the protocol shows them), so paused time cannot
        // hold them: on a machine too starved to create them all within their second, some
        // have rightly expired, and only the sweep below is checked (half a second leaves the
        // wall clock's milliseconds room).
        if creating.elapsed() < second / 2 {
            assert_eq!(store.len(), 10_000, "held until they expire");
        }
        tokio::time::sleep(Duration::from_millis(1100)).await;
        // One more task sweeps the forgotten ones out: a second has passed since the last sweep.
        assert!(
            store
                .create(&task("last", "owner0", second), 100)
                .await
                .unwrap()
        );
        assert_eq!(store.len(), 1);
        assert_eq!(store.get("t9999").await.unwrap(), None);
        tokio::time::sleep(Duration::from_millis(1100)).await;
        store.sweep();
        assert_eq!(store.len(), 0);
        assert!(store.is_empty());
    }

    #[tokio::test]
    async fn a_write_after_another_since_it_read_is_refused() {
        let store = MemoryTaskStore::new();
        let read = task("a", "ada", Duration::from_secs(3600));
        store.create(&read, 10).await.unwrap();
        let mut answered = read.clone();
        answered
            .input_responses
            .insert("name".into(), serde_json::json!("Ada"));
        answered.touched();
        assert!(store.replace(&answered, read.updated_ms).await.unwrap());
        let mut stale = read.clone();
        stale.moved(TaskStatus::InputRequired, Some("asking".into()));
        assert!(!store.replace(&stale, read.updated_ms).await.unwrap());
        let kept = store.get("a").await.unwrap().unwrap();
        assert_eq!(kept.input_responses["name"], "Ada");
        assert!(kept.updated_ms > read.updated_ms);
        stale.updated_ms = kept.updated_ms;
        stale.moved(TaskStatus::Completed, None);
        assert!(store.replace(&stale, kept.updated_ms).await.unwrap());
        let mut late = stale.clone();
        late.moved(TaskStatus::Cancelled, None);
        assert!(
            !store.replace(&late, stale.updated_ms).await.unwrap(),
            "it ended"
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
