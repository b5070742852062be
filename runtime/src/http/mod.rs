//! The Streamable HTTP transport: one endpoint, `/mcp`, one JSON-RPC message per POST. In the
//! `initialize` handshake era (protocol 2025-11-25 and before) sessions are named by the
//! `Mcp-Session-Id` header and streams can be resumed; under protocol 2026-07-28 every POST
//! stands alone.

mod access;
mod authorization;
mod clients;
mod config;
mod connections;
mod endpoint;
mod events;
mod mirror;
mod response;
mod stateless;

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::server::Error;
pub use config::Http;
use endpoint::Endpoint;

/// A server listening for the Streamable HTTP transport, ready to serve: from [`Http::bind`]
/// (or [`Server::bind_http`](crate::Server::bind_http)).
///
/// Its one endpoint, `/mcp`, speaks both protocol eras, each POST's body deciding which.
///
/// In the `initialize` handshake era (2025-11-25 down to 2024-11-05) it answers:
///
/// - a POST of `initialize`: the result, and a new session's id in the `Mcp-Session-Id` header,
///   which every later request must carry (`400` without it, `404` once the session is unknown
///   or ended);
/// - a POST of a request: its response as `application/json`, or as `text/event-stream` when the
///   call sends progress or log messages, or requests of its own to the client (sampling,
///   elicitation), before its result; of a notification or a response: `202 Accepted` (a response
///   to one of the server's requests goes to the call in the same session that waits for it);
/// - a GET with `Last-Event-ID`: the rest of the stream that event is from (see below); without
///   it the session's own stream, which tells the client what changes (its lists, the resources
///   it subscribed to) and replaces the one the session had; DELETE: ends the session (`204`).
///
/// A stream's events carry ids (`<stream>-<n>`), and for a client of 2025-11-25 it opens with a
/// priming event (an id, `retry: 500` and no data). Disconnecting is no cancellation: the call
/// goes on and its messages are kept, so a client that lost the stream, or whose tool ended it
/// with [`Context::close_sse_stream`](crate::Context::close_sse_stream), GETs the rest with the
/// id of the last event it received. A session keeps its 32 newest streams, each its last 1024
/// events and 1 MiB (the response, the last event, is always kept), for an hour after their
/// last event, even once delivered (the client may have lost what was sent); a client resuming
/// from before what is kept misses the events dropped, and one whose stream was dropped whole
/// gets `400`. Sessions and streams live in the
/// [session store](Http::session_store): with one that several processes share, any of them
/// serves a session's requests and resumes its streams (see [`toolwright::store`](crate::store)).
///
/// A POST of protocol 2026-07-28 (a request whose `params._meta` names that version, or
/// `server/discover`, or one with `MCP-Protocol-Version: 2026-07-28`) stands alone: no session
/// id is read or issued, and its answer is JSON or a stream without ids that cannot be resumed,
/// where closing the stream cancels the call. Its `MCP-Protocol-Version`, `Mcp-Method` and (for
/// `tools/call`) `Mcp-Name` headers must mirror the body (`400` with -32020 otherwise); an
/// unsupported version is `400` with -32022 and the supported ones, an unknown method `404` with
/// -32601, another malformed request `400`. Notifications are taken (`202`) and dropped.
///
/// A request is refused, with a JSON-RPC error body, when its `Host` or `Origin` is not this
/// machine's (`403`), the [bearer token](Http::bearer_token) is missing or wrong (`401`), its
/// `MCP-Protocol-Version` is not one this server speaks (`400`), its `Accept` lacks
/// `application/json` or `text/event-stream` (`406`), its `Content-Type` is not JSON (`415`), its
/// body is larger than the [message size limit](crate::Server::max_message_size) (`413`) or is not one
/// JSON-RPC message (`400`). A request whose `Host` header is missing or repeated, or whose
/// request line names another host than its `Host`, is `400`.
///
/// Connections are limited so that idle or slow clients cannot keep others out: at most
/// [`max_connections`](Http::max_connections) are open (by default what the process may open
/// as files, less 128); when a new one comes at the ceiling, the open connection that has
/// waited longest for a request is closed, and when every one is working the new one gets
/// `503` with `Retry-After`. A request's headers must arrive within 10 seconds and its body
/// within 30 (`408` after that); both are set with [`timeouts`](Http::timeouts).
///
/// ```no_run
/// # async fn run() -> Result<(), toolwright::Error> {
/// use toolwright::http::Http;
///
/// let started = toolwright::Server::new("notes", "1.0.0").start().await?;
/// let server = Http::new().bind("127.0.0.1:0", started).await?;
/// eprintln!("MCP at {}", server.url());
/// server.run().await
/// # }
/// ```
pub struct HttpServer {
    listener: TcpListener,
    local_addr: SocketAddr,
    endpoint: Arc<Endpoint>,
}

impl HttpServer {
    /// The address the server listens on, with the port it got.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint's URL, `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.local_addr)
    }

    /// Serves until the process receives Ctrl-C (SIGINT) or SIGTERM, then stops as
    /// [`run_until`](HttpServer::run_until) does; a second signal stops at once.
    pub async fn run(self) -> Result<(), Error> {
        self.serve(shutdown_signal(), shutdown_signal()).await
    }

    /// Serves until `shutdown` completes. Then it takes no new connections, answers the requests
    /// it has, and gives calls under way the [grace period](crate::Server::shutdown_grace) to finish and
    /// send their results; calls still running then are stopped.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        self.serve(shutdown, std::future::pending()).await
    }

    async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
        now: impl Future<Output = ()>,
    ) -> Result<(), Error> {
        tracing::info!("serving MCP over HTTP at {}", self.url());
        let stopping = CancellationToken::new();
        let endpoint = Arc::clone(&self.endpoint);
        endpoint.listen_to_replicas();
        let router = endpoint::router(Arc::clone(&endpoint));
        let serving = connections::serve(
            self.listener,
            router,
            endpoint.connection_limits(),
            stopping.clone(),
        );
        let mut serving = std::pin::pin!(serving);
        tokio::select! {
            () = &mut serving => return Ok(()),
            () = shutdown => {}
        }
        let grace = endpoint.limits.shutdown_grace;
        tracing::info!(
            ?grace,
            "stopping: no new connections; calls under way may finish"
        );
        stopping.cancel();
        endpoint.end_streams();
        let finished = async {
            serving.await;
            endpoint.calls_finished().await;
        };
        tokio::select! {
            finished = tokio::time::timeout(grace, finished) => {
                if finished.is_err() {
                    tracing::warn!("calls still under way after the grace period are stopped");
                }
            }
            () = now => tracing::warn!("asked again to stop: calls still under way are stopped"),
        }
        endpoint.stop_calls();
        tracing::info!("stopped");
        Ok(())
    }
}

impl fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpServer")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

/// Completes on Ctrl-C (SIGINT) or, on Unix, SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                terminate.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}
