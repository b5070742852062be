//! The store in the server's own memory: sessions end with the process, and only servers that
//! share the same value (in one process) share sessions.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
// Tokio's clock, which is the system's but in tests that pause it: a session's lifetime is
// tested without waiting for it, whatever else the machine is doing.
use tokio::time::Instant;

use super::{Messages, SessionStore, StoreFuture, StoredEvents};

/// The most events one stream keeps, and the most bytes: past either, the oldest go.
const MAX_EVENTS: usize = 1024;
const MAX_BYTES: usize = 1024 * 1024;

/// Every how many new sessions the expired ones are swept out.
const SWEEP_EVERY: u64 = 1024;

/// Sessions in this process's memory: what a server keeps its sessions in unless given another
/// [`SessionStore`]. Clones share the same sessions, so two servers of one process given clones
/// of one `MemoryStore` serve each other's sessions, as replicas sharing a Redis store do (a
/// test of a deployment, say).
///
/// ```no_run
/// # #[cfg(feature = "http")]
/// # async fn run() -> Result<(), toolwright::Error> {
/// use toolwright::http::Http;
/// use toolwright::store::MemoryStore;
///
/// let store = MemoryStore::new();
/// let one = toolwright::server!()
///     .bind_http("127.0.0.1:0", Http::new().session_store(store.clone()))
///     .await?;
/// let two = toolwright::server!()
///     .bind_http("127.0.0.1:0", Http::new().session_store(store))
///     .await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Default)]
pub struct MemoryStore {
    inner: Arc<Mutex<Held>>,
}

#[derive(Default)]
struct Held {
    sessions: HashMap<String, KeptRecord>,
    created: u64,
    /// Who listens for messages, by the name each gave.
    listeners: Vec<(String, mpsc::UnboundedSender<Vec<u8>>)>,
    /// Streams kept for resumption, by session and number.
    streams: HashMap<(String, u64), KeptStream>,
    /// Until when each process said it was alive.
    alive: HashMap<String, Instant>,
}

struct KeptStream {
    origin: Vec<u8>,
    events: VecDeque<(u64, Vec<u8>)>,
    bytes: usize,
    ended: bool,
    expires: Instant,
    /// Told of each change, for readers that wait.
    changed: watch::Sender<()>,
}

struct KeptRecord {
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

    fn inner(&self) -> MutexGuard<'_, Held> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session's entry if it has not expired; an expired one is dropped.
    fn live<'a>(inner: &'a mut Held, id: &str, now: Instant) -> Option<&'a mut KeptRecord> {
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
    fn describe(&self) -> String {
        "memory".to_owned()
    }

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
            KeptRecord {
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

    fn open_stream<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        origin: &'a [u8],
        lifetime: Duration,
    ) -> StoreFuture<'a, ()> {
        let now = Instant::now();
        let mut inner = self.inner();
        if inner.streams.len().is_multiple_of(SWEEP_EVERY as usize) {
            inner.streams.retain(|_, kept| kept.expires > now);
        }
        inner.streams.insert(
            (session.to_owned(), stream),
            KeptStream {
                origin: origin.to_vec(),
                events: VecDeque::new(),
                bytes: 0,
                ended: false,
                expires: now + lifetime,
                changed: watch::channel(()).0,
            },
        );
        Box::pin(std::future::ready(Ok(())))
    }

    fn append_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        first: u64,
        events: &'a [Vec<u8>],
        ended: bool,
        lifetime: Duration,
    ) -> StoreFuture<'a, ()> {
        let mut inner = self.inner();
        if let Some(kept) = inner.streams.get_mut(&(session.to_owned(), stream)) {
            for (n, event) in (first..).zip(events) {
                kept.bytes += event.len();
                kept.events.push_back((n, event.clone()));
            }
            while kept.events.len() > 1
                && (kept.events.len() > MAX_EVENTS || kept.bytes > MAX_BYTES)
            {
                if let Some((_, dropped)) = kept.events.pop_front() {
                    kept.bytes -= dropped.len();
                }
            }
            kept.ended |= ended;
            kept.expires = Instant::now() + lifetime;
            kept.changed.send_replace(());
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn read_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        from: u64,
        wait: Duration,
    ) -> StoreFuture<'a, Option<StoredEvents>> {
        let key = (session.to_owned(), stream);
        Box::pin(async move {
            let deadline = Instant::now() + wait;
            loop {
                let mut changed = {
                    let now = Instant::now();
                    let inner = self.inner();
                    let Some(kept) = inner.streams.get(&key).filter(|k| k.expires > now) else {
                        return Ok(None);
                    };
                    let events: Vec<(u64, Vec<u8>)> = kept
                        .events
                        .iter()
                        .filter(|(n, _)| *n >= from)
                        .cloned()
                        .collect();
                    if !events.is_empty() || kept.ended || now >= deadline {
                        return Ok(Some(StoredEvents::new(
                            kept.origin.clone(),
                            events,
                            kept.ended,
                        )));
                    }
                    kept.changed.subscribe()
                };
                let _ = tokio::time::timeout_at(deadline, changed.changed()).await;
            }
        })
    }

    fn forget_stream<'a>(&'a self, session: &'a str, stream: u64) -> StoreFuture<'a, ()> {
        self.inner().streams.remove(&(session.to_owned(), stream));
        Box::pin(std::future::ready(Ok(())))
    }

    fn heartbeat<'a>(&'a self, me: &'a str, ttl: Duration) -> StoreFuture<'a, ()> {
        self.inner()
            .alive
            .insert(me.to_owned(), Instant::now() + ttl);
        Box::pin(std::future::ready(Ok(())))
    }

    fn alive<'a>(&'a self, replica: &'a str) -> StoreFuture<'a, bool> {
        let alive = self
            .inner()
            .alive
            .get(replica)
            .is_some_and(|until| *until > Instant::now());
        Box::pin(std::future::ready(Ok(alive)))
    }

    fn publish<'a>(&'a self, to: Option<&'a str>, message: &'a [u8]) -> StoreFuture<'a, ()> {
        let mut inner = self.inner();
        // A listener whose stream was dropped is gone.
        inner.listeners.retain(|(name, listener)| {
            if to.is_none_or(|to| to == name) {
                listener.send(message.to_vec()).is_ok()
            } else {
                !listener.is_closed()
            }
        });
        Box::pin(std::future::ready(Ok(())))
    }

    fn messages(&self, me: &str) -> Messages {
        let (sender, mut receiver) = mpsc::unbounded_channel();
        self.inner().listeners.push((me.to_owned(), sender));
        Box::pin(futures_util::stream::poll_fn(move |cx| {
            receiver.poll_recv(cx)
        }))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        let now = Instant::now();
        let mut inner = self.inner();
        let removed = inner.sessions.remove(id);
        // Its streams go with it.
        inner.streams.retain(|(session, _), _| session != id);
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
    async fn a_stream_s_events_are_read_from_any_number_and_waited_for() {
        let store = MemoryStore::new();
        let life = Duration::from_secs(60);
        let none = Duration::ZERO;
        assert_eq!(store.read_events("s", 1, 0, none).await.unwrap(), None);
        store.open_stream("s", 1, b"origin", life).await.unwrap();
        let events = [b"zero".to_vec(), b"one".to_vec()];
        store
            .append_events("s", 1, 0, &events, false, life)
            .await
            .unwrap();
        let read = store.read_events("s", 1, 1, none).await.unwrap().unwrap();
        assert_eq!(
            read,
            StoredEvents::new(b"origin".to_vec(), vec![(1, b"one".to_vec())], false)
        );
        let waiting = store.read_events("s", 1, 2, Duration::from_secs(5));
        let appending = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            store
                .append_events("s", 1, 2, &[b"two".to_vec()], true, life)
                .await
                .unwrap();
        };
        let (read, ()) = tokio::join!(waiting, appending);
        let read = read.unwrap().unwrap();
        assert_eq!(
            (read.events, read.ended),
            (vec![(2, b"two".to_vec())], true)
        );
        store.forget_stream("s", 1).await.unwrap();
        assert_eq!(
            store.read_events("s", 1, 0, none).await.unwrap(),
            None,
            "forgotten"
        );
        // A session's streams end with it.
        store.create("s", b"record", life).await.unwrap();
        store.open_stream("s", 2, b"origin", life).await.unwrap();
        store.remove("s").await.unwrap();
        assert_eq!(store.read_events("s", 2, 0, none).await.unwrap(), None);
        store
            .heartbeat("a", Duration::from_millis(30))
            .await
            .unwrap();
        assert!(store.alive("a").await.unwrap());
        assert!(!store.alive("b").await.unwrap());
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert!(!store.alive("a").await.unwrap(), "its heartbeat ran out");
    }

    #[tokio::test]
    async fn messages_reach_the_process_named_or_every_one() {
        use futures_util::StreamExt;

        let store = MemoryStore::new();
        let mut a = store.messages("a");
        let mut b = store.messages("b");
        store.publish(Some("b"), b"to b").await.unwrap();
        store.publish(None, b"to all").await.unwrap();
        assert_eq!(a.next().await.unwrap(), b"to all");
        assert_eq!(b.next().await.unwrap(), b"to b");
        assert_eq!(b.next().await.unwrap(), b"to all");
        drop(a);
        store.publish(None, b"again").await.unwrap();
        assert_eq!(
            store.inner().listeners.len(),
            1,
            "a dropped listener is forgotten"
        );
    }

    #[tokio::test(start_paused = true)]
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
