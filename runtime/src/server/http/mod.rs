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
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, ToSocketAddrs};
use tokio_util::sync::CancellationToken;

use super::builder::{Error, Server, start};
pub(crate) use config::HttpConfig;
use endpoint::Endpoint;

impl Server {
    /// Requires `Authorization: Bearer <token>` on every HTTP request; a request without it, or
    /// with another token, is answered `401 Unauthorized`. Set one whenever the server listens
    /// on an address other machines can reach.
    ///
    /// # Panics
    ///
    /// If the token is empty or contains whitespace or control characters, which no client
    /// could send in the header.
    #[must_use]
    #[track_caller]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Server {
        let token = token.into();
        assert!(
            !token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic()),
            "a bearer token is visible ASCII without spaces, and not empty"
        );
        self.http.token = Some(token);
        self
    }

    /// Makes the server an OAuth 2.1 resource server over HTTP: every request must carry an
    /// access token issued for it, which is checked as [`OAuth`](crate::auth::OAuth) describes,
    /// and each tool's scopes (`#[mcp_tool(scopes = [...])]`) are required of the token that
    /// calls it. The tool sees who called in [`Context::principal`](crate::Context::principal).
    /// Over stdio it does nothing: a local process's credentials come from its environment.
    ///
    /// A server has either this or a [shared bearer token](Server::bearer_token): with both,
    /// [`bind_http`](Server::bind_http) fails.
    #[cfg(feature = "oauth")]
    #[must_use]
    pub fn oauth(mut self, oauth: crate::auth::OAuth) -> Server {
        self.http.oauth = Some(oauth);
        self
    }

    /// Lets web pages from this origin (`https://app.example.com`) call the HTTP endpoint. Pages
    /// of this machine (`http://localhost:PORT`, `127.0.0.1`, `[::1]`) always may; a request from
    /// any other page is answered `403 Forbidden`.
    #[must_use]
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Server {
        self.http.origins.push(origin.into());
        self
    }

    /// Answers HTTP requests addressed to this host name too (their `Host` header), such as the
    /// name other machines reach this one by. The server always answers to `localhost`,
    /// `127.0.0.1`, `[::1]` and the address it listens on (any address, when it listens on all of
    /// them); a request for any other host is answered `403 Forbidden`, which defeats DNS
    /// rebinding.
    #[must_use]
    pub fn allow_host(mut self, host: impl Into<String>) -> Server {
        self.http.hosts.push(host.into());
        self
    }

    /// The most HTTP connections open at once. Past it, a new connection takes the place of
    /// the one that has waited longest without sending a request (or the rest of one), which
    /// is closed, so that idle or slow connections cannot keep a client with work out; when
    /// every connection is working, a new one is answered `503 Service Unavailable`. By
    /// default: the process's limit on open files less 128, 10,000 at most (896 under the
    /// common limit of 1,024).
    ///
    /// # Panics
    ///
    /// If `connections` is 0.
    #[must_use]
    #[track_caller]
    pub fn max_connections(mut self, connections: usize) -> Server {
        assert!(connections > 0, "a server takes one connection at least");
        self.http.max_connections = Some(connections);
        self
    }

    /// The most sessions one client keeps (256 by default). A client is the address its
    /// connections come from. Past the limit, a new session from the client ends the client's
    /// session unused the longest, or is answered `429 Too Many Requests` when each has a call
    /// under way; other clients' sessions are never ended for it. Behind a reverse proxy every
    /// client comes from the proxy's address: raise the limit to what all of them need.
    ///
    /// # Panics
    ///
    /// If `sessions` is 0.
    #[must_use]
    #[track_caller]
    pub fn max_sessions_per_client(mut self, sessions: usize) -> Server {
        assert!(sessions > 0, "a client may keep one session at least");
        self.http.max_sessions_per_client = Some(sessions);
        self
    }

    /// The most streams that wait for what changes one client keeps open (64 by default):
    /// sessions' own streams (GET), streams resumed (GET with `Last-Event-ID`) and
    /// `subscriptions/listen`. Past the limit a new one is answered `429 Too Many Requests`.
    /// Each holds a connection, so without the limit one client could keep every connection
    /// working and lock the others out. A session's own stream counts once from its first GET
    /// to the session's end, however often the client opens it again. The streams of calls
    /// under way are bounded by the [ceiling on calls](Server::max_concurrent_calls) instead.
    ///
    /// # Panics
    ///
    /// If `streams` is 0.
    #[must_use]
    #[track_caller]
    pub fn max_streams_per_client(mut self, streams: usize) -> Server {
        assert!(streams > 0, "a client may keep one stream open at least");
        self.http.max_streams_per_client = Some(streams);
        self
    }

    /// How long a client has to send a request's headers (10 seconds by default), counted from
    /// when it connects and from the end of each answer on a connection kept alive: a
    /// connection that sends nothing in that time, or too little, is closed. And how long it
    /// has to send the body once the headers are in (30 seconds by default): a body slower than
    /// that is answered `408 Request Timeout`.
    #[must_use]
    pub fn http_timeouts(mut self, headers: Duration, body: Duration) -> Server {
        self.http.header_timeout = Some(headers);
        self.http.body_timeout = Some(body);
        self
    }

    /// Keeps the handshake era's sessions in `store` instead of this process's memory: with a
    /// store that other processes share (`store::RedisStore`, with the `redis` feature), any of
    /// them serves any request of a session, so replicas behind a load balancer need no sticky
    /// sessions. See [`toolwright::store`](crate::store) for what moves between processes and
    /// what does not.
    #[must_use]
    pub fn session_store(mut self, store: impl crate::store::SessionStore) -> Server {
        self.http.store = Some(Arc::new(store));
        self
    }

    /// How long a session lives without a request naming it (a day by default): after it, the
    /// session has ended and a request naming it is answered `404 Not Found`, which tells the
    /// client to start a new one.
    ///
    /// # Panics
    ///
    /// If `lifetime` is under a second, which a store counting seconds could not keep.
    #[must_use]
    #[track_caller]
    pub fn session_lifetime(mut self, lifetime: Duration) -> Server {
        assert!(
            lifetime >= Duration::from_secs(1),
            "a session lives a second at least"
        );
        self.http.session_lifetime = Some(lifetime);
        self
    }

    /// Listens on `addr` for the Streamable HTTP transport, without serving yet; the
    /// [`HttpServer`] tells the address it got (bind port 0 to get a free one) and serves.
    ///
    /// The address is used as given: `127.0.0.1:8080` (the safe choice) is reachable from this
    /// machine only, `0.0.0.0:8080` from any machine that can reach this one, which is logged as
    /// a warning when no [bearer token](Server::bearer_token) is set and access tokens are not
    /// checked (`Server::oauth`).
    pub async fn bind_http(self, addr: impl ToSocketAddrs) -> Result<HttpServer, Error> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        #[cfg(feature = "oauth")]
        let oauth = self.http.oauth.is_some();
        #[cfg(not(feature = "oauth"))]
        let oauth = false;
        if !local_addr.ip().is_loopback() && self.http.token.is_none() && !oauth {
            tracing::warn!(
                address = %local_addr,
                "listening on an address other machines may reach, without a bearer token: \
                 anyone who can connect can call the tools. Check OAuth access tokens \
                 (--oauth-issuer), set a token (--token, or TOOLWRIGHT_TOKEN) or listen on \
                 127.0.0.1"
            );
        }
        let endpoint = Endpoint::new(self, local_addr).await?;
        Ok(HttpServer {
            listener,
            local_addr,
            endpoint: Arc::new(endpoint),
        })
    }

    /// Serves MCP over Streamable HTTP at `http://ADDR/mcp` until the process receives Ctrl-C
    /// (SIGINT) or SIGTERM; see [`HttpServer::run`].
    pub async fn serve_http(self, addr: impl ToSocketAddrs) -> Result<(), Error> {
        self.bind_http(addr).await?.run().await
    }

    /// Serves MCP over Streamable HTTP from a new runtime, with logs on stderr (`RUST_LOG`
    /// filters them, `info` by default), until Ctrl-C or SIGTERM. Returns the process's exit
    /// code: success when it was asked to stop, failure (with the reason on stderr) when the
    /// address cannot be listened on, the tools conflict or the transport fails.
    pub fn run_http(self, addr: &str) -> ExitCode {
        let Some(runtime) = start() else {
            return ExitCode::FAILURE;
        };
        let served = runtime.block_on(async {
            let server = match self.bind_http(addr).await {
                Ok(server) => server,
                Err(Error::Io(err)) => {
                    eprintln!("error: cannot listen on {addr}: {err}");
                    return Err(());
                }
                Err(err) => {
                    eprintln!("error: {err}");
                    return Err(());
                }
            };
            server.run().await.map_err(|err| eprintln!("error: {err}"))
        });
        // A blocking tool cannot be stopped: it has had its grace period, so it is left behind.
        runtime.shutdown_timeout(Duration::from_millis(100));
        match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(()) => ExitCode::FAILURE,
        }
    }
}

/// A server listening for the Streamable HTTP transport, ready to serve: from
/// [`Server::bind_http`].
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
/// [session store](Server::session_store): with one that several processes share, any of them
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
/// machine's (`403`), the [bearer token](Server::bearer_token) is missing or wrong (`401`), its
/// `MCP-Protocol-Version` is not one this server speaks (`400`), its `Accept` lacks
/// `application/json` or `text/event-stream` (`406`), its `Content-Type` is not JSON (`415`), its
/// body is larger than the [message size limit](Server::max_message_size) (`413`) or is not one
/// JSON-RPC message (`400`). A request whose `Host` header is missing or repeated, or whose
/// request line names another host than its `Host`, is `400`.
///
/// Connections are limited so that idle or slow clients cannot keep others out: at most
/// [`max_connections`](Server::max_connections) are open (by default what the process may open
/// as files, less 128); when a new one comes at the ceiling, the open connection that has
/// waited longest for a request is closed, and when every one is working the new one gets
/// `503` with `Retry-After`. A request's headers must arrive within 10 seconds and its body
/// within 30 (`408` after that); both are set with [`http_timeouts`](Server::http_timeouts).
///
/// ```no_run
/// # async fn run() -> Result<(), toolwright::Error> {
/// let server = toolwright::Server::new("notes", "1.0.0")
///     .bind_http("127.0.0.1:0")
///     .await?;
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
    /// it has, and gives calls under way the [grace period](Server::shutdown_grace) to finish and
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
            endpoint.connection_settings(),
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
