//! What every transport of one server shares: how much it takes on, and how it stops.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

/// The default limit on one incoming message: 4 MiB.
pub(super) const DEFAULT_MAX_MESSAGE_SIZE: usize = 4 * 1024 * 1024;

/// The default ceiling on calls running at once.
pub(super) const DEFAULT_MAX_CONCURRENT_CALLS: usize = 64;

/// The default time calls under way get to finish once the client is gone.
pub(super) const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A server's limits, as its transports apply them.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    pub(crate) max_message_size: usize,
    /// One permit per call that may run; a call past the ceiling waits for one, while other
    /// messages (`ping`, cancellations, lists) are answered.
    pub(crate) calls: Arc<Semaphore>,
    pub(crate) shutdown_grace: Duration,
}
