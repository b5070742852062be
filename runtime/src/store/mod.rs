//! Where the HTTP transport keeps its sessions, so that several processes can serve one: the
//! [`SessionStore`] trait, the in-process [`MemoryStore`] every server has by default, and
//! `RedisStore` (feature `redis`) for replicas behind a load balancer.
//!
//! A session of the `initialize` handshake era outlives the request that opened it: the
//! protocol version it settled on, what the client said of itself, its log level, the resources
//! it follows and whom its access token named are needed by every later request. The transport
//! keeps these, the session's *record*, in the store under the session's id, reads it on each
//! request that names the session, and writes it back when a request changed it. With a store
//! that other processes share, any of them can serve any request of a session: `initialize` on
//! one, `tools/call` on a second, `DELETE` on a third.
//!
//! ```no_run
//! # #[cfg(feature = "redis")]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use toolwright::http::Http;
//! use toolwright::store::RedisStore;
//!
//! let http = Http::new().session_store(RedisStore::new("redis://127.0.0.1:6379/")?);
//! toolwright::server!().serve_http("127.0.0.1:8080", http).await?;
//! # Ok(())
//! # }
//! ```
//!
//! Besides the records, the store carries what the processes need of each other:
//!
//! - the events of each stream a call answers with, so that a client that lost its stream
//!   resumes it on any process (`GET` with `Last-Event-ID`) and receives every event after the
//!   one it names, once; the process that runs the call writes them as they are sent;
//! - messages between processes ([`publish`](SessionStore::publish)): the client's answer to a
//!   request a call sent it (sampling, elicitation) reaches the process whose call awaits it,
//!   and a cancellation reaches the process that runs the call;
//! - each process's heartbeat: a stream whose process has stopped (killed, its machine gone)
//!   ends for the client that resumed it with an error for its call, rather than never.
//!
//! What cannot move stays with its process, and is lost with it: a call's running future (a
//! call under way on a process that dies ends with that error), the session's own stream of
//! changes (`GET` without `Last-Event-ID`), which tells of the changes its process sees (its
//! lists, the resources changed through it), and a tool's
//! [`SessionState`](crate::state::SessionState). The limits on sessions and streams per client
//! (`Http::max_sessions_per_client`, of the `http` feature) are each process's own.
//!
//! A record is a short JSON document the transport writes and reads; a store keeps it as bytes
//! and need not understand it. Two requests that change the same session at once on two
//! processes (a `logging/setLevel` and a `resources/subscribe`) each write the whole record:
//! the later write wins.

mod memory;
#[cfg(feature = "redis")]
pub(crate) mod redis;

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

pub use memory::MemoryStore;
#[cfg(feature = "redis")]
pub use redis::RedisStore;

/// A random name for this process among those sharing a store: 8 hex digits. Each HTTP
/// endpoint and each task store in Redis draws its own, so that several in one process are told
/// apart too.
#[cfg(feature = "http")]
pub(crate) fn replica_name() -> String {
    format!("{:08x}", random_u32())
}

/// 32 random bits; without randomness, the process's id, which still tells processes of one
/// machine apart.
#[cfg(feature = "http")]
pub(crate) fn random_u32() -> u32 {
    let mut bytes = [0u8; 4];
    match getrandom::fill(&mut bytes) {
        Ok(()) => u32::from_be_bytes(bytes),
        Err(_) => std::process::id(),
    }
}

/// What a [`SessionStore`] method returns: a future of its outcome, borrowing the store.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Where the HTTP transport keeps the records of its sessions; see [the module](self).
///
/// Every method takes the session's id (32 hex digits, random); a session that has not been
/// used for `lifetime` ends, as if removed, and using it (`load`, `update`) starts its
/// lifetime again. A store that cannot answer returns a [`StoreError`]: the request that needed
/// it is answered `503 Service Unavailable`, and the next one tries again.
///
/// Implement it to keep sessions elsewhere (a SQL database, another key-value store); each
/// method must be atomic on its own, as the transport may call them from several processes at
/// once.
pub trait SessionStore: Send + Sync + 'static {
    /// Keeps the record of a new session. The id is new: a store may overwrite what it holds
    /// under it.
    fn create<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        lifetime: Duration,
    ) -> StoreFuture<'a, ()>;

    /// The record of a session, its lifetime started again; `None` once the session was
    /// removed or expired (or never was).
    fn load<'a>(&'a self, id: &'a str, lifetime: Duration) -> StoreFuture<'a, Option<Vec<u8>>>;

    /// Replaces the record of a session that still exists, its lifetime started again; `false`
    /// (and nothing written) when it does not.
    fn update<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        lifetime: Duration,
    ) -> StoreFuture<'a, bool>;

    /// Ends a session; `false` when it did not exist.
    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool>;

    /// Begins keeping a stream's events for a client to resume on any process: `origin` is
    /// the transport's note of where the stream comes from, returned with its events. The
    /// stream's events are kept for `lifetime` after its last one. By default nothing is kept,
    /// and a stream is resumed only on the process that sent it.
    fn open_stream<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        origin: &'a [u8],
        lifetime: Duration,
    ) -> StoreFuture<'a, ()> {
        let _ = (session, stream, origin, lifetime);
        Box::pin(std::future::ready(Ok(())))
    }

    /// Adds events to a stream [opened](Self::open_stream) before, numbered from `first` on,
    /// and, when `ended`, notes that none comes after them. A store may keep only the newest
    /// of a stream's events (1,024 at least).
    fn append_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        first: u64,
        events: &'a [Vec<u8>],
        ended: bool,
        lifetime: Duration,
    ) -> StoreFuture<'a, ()> {
        let _ = (session, stream, first, events, ended, lifetime);
        Box::pin(std::future::ready(Ok(())))
    }

    /// A stream's events numbered `from` on, in order, waiting up to `wait` for one when none
    /// is there yet; `None` when the store does not know the stream (never opened, expired).
    fn read_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        from: u64,
        wait: Duration,
    ) -> StoreFuture<'a, Option<StoredEvents>> {
        let _ = (session, stream, from, wait);
        Box::pin(std::future::ready(Ok(None)))
    }

    /// Forgets a stream: one of too many kept for its session. By default nothing is done.
    fn forget_stream<'a>(&'a self, session: &'a str, stream: u64) -> StoreFuture<'a, ()> {
        let _ = (session, stream);
        Box::pin(std::future::ready(Ok(())))
    }

    /// Says that the process named `me` is alive, for `ttl`.
    fn heartbeat<'a>(&'a self, me: &'a str, ttl: Duration) -> StoreFuture<'a, ()> {
        let _ = (me, ttl);
        Box::pin(std::future::ready(Ok(())))
    }

    /// Whether the process named `replica` said it was alive within its last `ttl`: a stream
    /// it sends whose process died ends for the client that resumed it, with an error. By
    /// default, every process is.
    fn alive<'a>(&'a self, replica: &'a str) -> StoreFuture<'a, bool> {
        let _ = replica;
        Box::pin(std::future::ready(Ok(true)))
    }

    /// Sends `message` to the process that named itself `to` in [`messages`](Self::messages),
    /// or to every such process when `to` is `None`. Delivery is at most once, to processes
    /// listening at the time: what no process hears is lost. By default nothing is sent: a
    /// store whose processes do not message each other cannot route a client's answer to the
    /// process whose call awaits it.
    fn publish<'a>(&'a self, to: Option<&'a str>, message: &'a [u8]) -> StoreFuture<'a, ()> {
        let _ = (to, message);
        Box::pin(std::future::ready(Ok(())))
    }

    /// The messages for the process named `me`: those published to it and those published to
    /// every process. The stream lasts as long as the store, listening again by itself after
    /// a failure (what was published meanwhile is lost). By default, none ever comes.
    fn messages(&self, me: &str) -> Messages {
        let _ = me;
        Box::pin(futures_util::stream::pending())
    }

    /// Where the sessions are kept, as the server says it at start (`sessions: in memory`,
    /// `sessions: in Redis at redis://10.0.0.5:6379/0`): never a password. By default, "the
    /// application's own store".
    fn describe(&self) -> String {
        "the application's own store".to_owned()
    }

    /// Whether the store answers, asked once as the server starts: one that does not stops
    /// it, with this error, rather than leave every request that needs a session to fail. By
    /// default it answers.
    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// A stream's events as a [`SessionStore`] keeps them: from [`SessionStore::read_events`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredEvents {
    /// What [`SessionStore::open_stream`] was given.
    pub origin: Vec<u8>,
    /// The events asked for, each with its number, in order.
    pub events: Vec<(u64, Vec<u8>)>,
    /// No event comes after these.
    pub ended: bool,
}

impl StoredEvents {
    /// Events of a stream from `origin`.
    pub fn new(origin: Vec<u8>, events: Vec<(u64, Vec<u8>)>, ended: bool) -> StoredEvents {
        StoredEvents {
            origin,
            events,
            ended,
        }
    }
}

/// The messages a process of a [`SessionStore`] receives: from [`SessionStore::messages`].
pub type Messages = Pin<Box<dyn futures_util::Stream<Item = Vec<u8>> + Send>>;

/// A [`SessionStore`] could not answer: its server is down, slow or refused the command.
#[derive(Debug)]
pub struct StoreError(Box<dyn StdError + Send + Sync>);

impl StoreError {
    /// An error of a store, from what went wrong.
    pub fn new(error: impl Into<Box<dyn StdError + Send + Sync>>) -> StoreError {
        StoreError(error.into())
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl StdError for StoreError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.0.source()
    }
}
