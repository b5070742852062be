//! The connections of the HTTP transport: accepted under a ceiling, each served by hyper with a
//! deadline for its request headers (which also closes a keep-alive connection left idle), and
//! tracked, so that a connection that sends nothing cannot keep a client with work to do out.
//!
//! A connection is *waiting* from the moment it is accepted until a request's body is read, and
//! again from the end of each response; it is *working* while a request is handled and its
//! answer streams. At the ceiling, a new connection takes the place of the one waiting the
//! longest, which is closed: connections that send nothing, or send it slowly, only push each
//! other out, while a client that sends its request at once is served. When every connection is
//! working, a new one is answered `503` and closed.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt as _;

use super::response::holding;

/// How long a client has to send a request's headers, by default: from the moment it connects,
/// and from the end of each answer on a connection kept alive.
pub(crate) const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client has to send a request's body, by default, once its headers are in.
pub(crate) const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The file descriptors left to the rest of the process (files, the database, stdio) when the
/// ceiling on connections is derived from the process's limit.
const SPARE_DESCRIPTORS: u64 = 128;

/// The ceiling on connections when none is given: the process's limit on open files, less what
/// the rest of the process needs, and 10,000 at most.
pub(crate) fn default_max_connections() -> usize {
    #[cfg(unix)]
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX);
    #[cfg(not(unix))]
    let limit = u64::MAX;
    let usable = limit.saturating_sub(SPARE_DESCRIPTORS).clamp(16, 10_000);
    usize::try_from(usable).unwrap_or(10_000)
}

/// Every connection open, by number.
pub(super) struct Connections {
    max: usize,
    open: Mutex<HashMap<u64, Arc<TcpConnection>>>,
    next: AtomicU64,
}

/// One connection: whether it is working, since when it waits, and how to close it.
pub(super) struct TcpConnection {
    id: u64,
    /// The address the connection comes from.
    peer: IpAddr,
    state: Mutex<Activity>,
    closed: CancellationToken,
}

#[derive(Clone, Copy)]
enum Activity {
    Waiting { since: Instant },
    Working,
}

impl Connections {
    pub(super) fn new(max: usize) -> Arc<Connections> {
        Arc::new(Connections {
            max: max.max(1),
            open: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
        })
    }

    fn open(&self) -> MutexGuard<'_, HashMap<u64, Arc<TcpConnection>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for a new connection: a free one, or the place of the connection that has been
    /// waiting the longest, which is closed; `None` when every connection is working.
    fn admit(&self, peer: IpAddr) -> Option<Arc<TcpConnection>> {
        let mut open = self.open();
        if open.len() >= self.max {
            let oldest = open
                .values()
                .filter_map(|c| match *c.state() {
                    Activity::Waiting { since } => Some((since, c.id)),
                    Activity::Working => None,
                })
                .min()
                .map(|(_, id)| id)?;
            if let Some(evicted) = open.remove(&oldest) {
                evicted.closed.cancel();
                tracing::debug!(
                    connections = self.max,
                    "closed the connection waiting the longest"
                );
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(TcpConnection {
            id,
            peer,
            state: Mutex::new(Activity::Waiting {
                since: Instant::now(),
            }),
            closed: CancellationToken::new(),
        });
        open.insert(id, Arc::clone(&connection));
        Some(connection)
    }

    fn close(&self, connection: &TcpConnection) {
        self.open().remove(&connection.id);
    }

    /// How many connections are open.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.open().len()
    }
}

impl TcpConnection {
    fn state(&self) -> MutexGuard<'_, Activity> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The address the connection comes from.
    pub(super) fn peer(&self) -> IpAddr {
        self.peer
    }

    /// A request's body is in: the connection works until its answer is sent.
    pub(super) fn working(&self) {
        *self.state() = Activity::Working;
    }

    /// The answer is sent: the connection waits for the next request.
    fn waiting(&self) {
        *self.state() = Activity::Waiting {
            since: Instant::now(),
        };
    }
}

/// How the transport takes connections: the ceiling on them, the deadline for headers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnectionLimits {
    pub(crate) max_connections: usize,
    pub(crate) header_timeout: Duration,
}

/// Accepts connections and serves `router` on each, until `stopping` is cancelled; then every
/// connection finishes the request it is answering and closes, and this returns once all have.
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    settings: ConnectionLimits,
    stopping: CancellationToken,
) {
    let connections = Connections::new(settings.max_connections);
    let tracker = TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stopping.cancelled() => break,
        };
        let (stream, peer) = match accepted {
            Ok((stream, peer)) => (stream, peer.ip()),
            Err(err) => {
                // Out of descriptors, or a connection reset before it was accepted: the
                // listener keeps going once a moment has passed.
                tracing::warn!(error = %err, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        match connections.admit(peer) {
            Some(connection) => {
                let connections = Arc::clone(&connections);
                let router = router.clone();
                let stopping = stopping.clone();
                tracker.spawn(async move {
                    serve_one(stream, router, &connection, settings, stopping).await;
                    connections.close(&connection);
                });
            }
            None => {
                tracing::warn!(
                    connections = settings.max_connections,
                    "refused a connection: every connection is working"
                );
                tracker.spawn(refuse(stream));
            }
        }
    }
    tracker.close();
    tracker.wait().await;
}

/// Serves one connection until it closes, its client goes quiet too long, it is pushed out for
/// a new one, or the server stops (then after the answer under way).
async fn serve_one(
    stream: TcpStream,
    router: Router,
    connection: &Arc<TcpConnection>,
    settings: ConnectionLimits,
    stopping: CancellationToken,
) {
    let tracked = Arc::clone(connection);
    let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
        request.extensions_mut().insert(Arc::clone(&tracked));
        let answered = router.clone().oneshot(request.map(Body::new));
        let tracked = Arc::clone(&tracked);
        async move {
            let response = answered.await?;
            Ok::<_, std::convert::Infallible>(holding(response, Answering(tracked)))
        }
    });
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(Some(settings.header_timeout))
        .serve_connection(TokioIo::new(stream), service);
    let mut served = std::pin::pin!(served);
    tokio::select! {
        result = served.as_mut() => {
            if let Err(err) = result {
                tracing::debug!(error = %err, "a connection ended");
            }
        }
        () = connection.closed.cancelled() => {}
        () = stopping.cancelled() => {
            served.as_mut().graceful_shutdown();
            let _ = served.await;
        }
    }
}

/// Answers a connection there is no room for: `503`, to try again in a moment.
async fn refuse(mut stream: TcpStream) {
    const BODY: &str = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\
        \"message\":\"the server has as many connections as it takes, each working: try again \
        in a moment\"}}";
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    let write = async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    };
    // A client that does not read its refusal does not hold the place either.
    let _: Result<io::Result<()>, _> = tokio::time::timeout(Duration::from_secs(1), write).await;
}

/// Held by an answer's body, which tells its connection when it is sent (or dropped): from
/// then on the connection waits again.
struct Answering(Arc<TcpConnection>);

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.waiting();
    }
}

/// Runs `future` within `limit`, or says it took too long.
pub(super) async fn within<T>(limit: Duration, future: impl Future<Output = T>) -> Option<T> {
    tokio::time::timeout(limit, future).await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_ceiling_the_connection_waiting_longest_makes_room() {
        let connections = Connections::new(2);
        let admit = || connections.admit(IpAddr::from([127, 0, 0, 1]));
        let first = admit().unwrap();
        let second = admit().unwrap();
        second.working();
        let third = admit().unwrap();
        assert!(first.closed.is_cancelled(), "the waiting one is closed");
        assert!(!second.closed.is_cancelled(), "the working one is kept");
        assert_eq!(connections.len(), 2);
        third.working();
        // Every connection works: there is no room.
        assert!(admit().is_none());
        second.waiting();
        assert!(admit().is_some());
        assert!(second.closed.is_cancelled());
    }
}
