//! Where the HTTP transport keeps its sessions, so that several processes can serve one: the
//! [`SessionStore`] trait, the in-process [`MemoryStore`] every server has by default, and
//! [`RedisStore`] (feature `redis`) for replicas behind a load balancer.
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
//! use toolwright::store::RedisStore;
//!
//! toolwright::server!()
//!     .session_store(RedisStore::new("redis://127.0.0.1:6379/")?)
//!     .serve_http("127.0.0.1:8080")
//!     .await?;
//! # Ok(())
//! # }
//! ```
//!
//! What is not in the record stays with the process that has it, and is said plainly where it
//! matters: a call's running future and its cancellation, the answers a call waits for from the
//! client (sampling, elicitation), the session's own stream of changes (GET), a tool's
//! [`SessionState`](crate::state::SessionState), and the events kept for a client to resume a
//! stream. A request that needs one of these must reach the process that holds it.
//!
//! A record is a short JSON document the transport writes and reads; a store keeps it as bytes
//! and need not understand it. Two requests that change the same session at once on two
//! processes (a `logging/setLevel` and a `resources/subscribe`) each write the whole record:
//! the later write wins.

mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

pub use memory::MemoryStore;
#[cfg(feature = "redis")]
pub use redis::RedisStore;

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
}

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
