//! The store in the server's own memory: sessions end with the process, and only servers that
//! share the same value (in one process) share sessions.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{SessionStore, StoreFuture};

/// Every how many new sessions the expired ones are swept out.
const SWEEP_EVERY: u64 = 1024;

/// Sessions in this process's memory: what a server keeps its sessions in unless given another
/// [`SessionStore`]. Clones share the same sessions, so two servers of one process given clones
/// of one `MemoryStore` serve each other's sessions, as replicas sharing a Redis store do (a
/// test of a deployment, say).
///
/// ```no_run
/// use toolwright::store::MemoryStore;
///
/// # async fn run() -> Result<(), toolwright::Error> {
/// let store = MemoryStore::new();
/// let one = toolwright::server!().session_store(store.clone()).bind_http("127.0.0.1:0").await?;
/// let two = toolwright::server!().session_store(store).bind_http("127.0.0.1:0").await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Default)]
pub struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    sessions: HashMap<String, Kept>,
    created: u64,
}

struct Kept {
    record: Vec<u8>,
    expires: Instant,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// How many sessions it holds that have not expired.
    pub fn len(&self) -> usize {
        let now = Instant::now();
        let inner = self.inner();
        inner.sessions.values().filter(|k| k.expires > now).count()
    }

    /// Whether it holds no session that has not expired.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session's entry if it has not expired; an expired one is dropped.
    fn live<'a>(inner: &'a mut Inner, id: &str, now: Instant) -> Option<&'a mut Kept> {
        if inner.sessions.get(id).is_some_and(|k| k.expires <= now) {
            inner.sessions.remove(id);
        }
        inner.sessions.get_mut(id)
    }
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryStore")
            .field("sessions", &self.len())
            .finish()
    }
}

impl SessionStore for MemoryStore {
    fn create<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        lifetime: Duration,
    ) -> StoreFuture<'a, ()> {
        let now = Instant::now();
        let mut inner = self.inner();
        inner.created += 1;
        if inner.created.is_multiple_of(SWEEP_EVERY) {
            inner.sessions.retain(|_, k| k.expires > now);
        }
        inner.sessions.insert(
            id.to_owned(),
            Kept {
                record: record.to_vec(),
                expires: now + lifetime,
            },
        );
        Box::pin(std::future::ready(Ok(())))
    }

    fn load<'a>(&'a self, id: &'a str, lifetime: Duration) -> StoreFuture<'a, Option<Vec<u8>>> {
        let now = Instant::now();
        let mut inner = self.inner();
        let record = MemoryStore::live(&mut inner, id, now).map(|kept| {
            kept.expires = now + lifetime;
            kept.record.clone()
        });
        Box::pin(std::future::ready(Ok(record)))
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        lifetime: Duration,
    ) -> StoreFuture<'a, bool> {
        let now = Instant::now();
        let mut inner = self.inner();
        let updated = MemoryStore::live(&mut inner, id, now).map(|kept| {
            kept.expires = now + lifetime;
            kept.record = record.to_vec();
        });
        Box::pin(std::future::ready(Ok(updated.is_some())))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        let now = Instant::now();
        let mut inner = self.inner();
        let removed = inner.sessions.remove(id);
        Box::pin(std::future::ready(Ok(
            removed.is_some_and(|k| k.expires > now)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_session_lives_while_used_and_ends_when_removed() {
        let store = MemoryStore::new();
        let life = Duration::from_secs(60);
        store.create("a", b"one", life).await.unwrap();
        assert_eq!(
            store.load("a", life).await.unwrap().as_deref(),
            Some(&b"one"[..])
        );
        assert!(store.update("a", b"two", life).await.unwrap());
        assert_eq!(
            store.load("a", life).await.unwrap().as_deref(),
            Some(&b"two"[..])
        );
        assert!(
            !store.update("b", b"x", life).await.unwrap(),
            "no such session"
        );
        assert_eq!(store.load("b", life).await.unwrap(), None);
        assert!(store.remove("a").await.unwrap());
        assert!(!store.remove("a").await.unwrap());
        assert_eq!(store.load("a", life).await.unwrap(), None);
        assert!(store.is_empty());
    }

    #[tokio::test]
    async fn an_unused_session_expires_and_using_it_renews_it() {
        let store = MemoryStore::new();
        let short = Duration::from_millis(50);
        store.create("a", b"r", short).await.unwrap();
        store.create("b", b"r", short).await.unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert!(store.load("a", short).await.unwrap().is_some());
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert!(store.load("a", short).await.unwrap().is_some(), "renewed");
        assert_eq!(store.load("b", short).await.unwrap(), None, "expired");
        assert!(!store.update("b", b"r", short).await.unwrap());
        assert_eq!(store.len(), 1);
    }
}
