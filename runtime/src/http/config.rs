//! How the HTTP transport carries a server: [`Http`], its settings.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, ToSocketAddrs};

use super::HttpServer;
use super::endpoint::Endpoint;
use crate::server::{Error, Started};
use crate::store::SessionStore;

/// How the Streamable HTTP transport carries a [`Started`] server: who may call (a bearer
/// token, OAuth), from which pages and hosts, how many connections, sessions and streams it
/// keeps, how long it waits, and where sessions are kept. What [`HttpServer`] serves is
/// described there.
///
/// ```no_run
/// # async fn run() -> Result<(), toolwright::Error> {
/// use toolwright::http::Http;
///
/// let started = toolwright::server!().start().await?;
/// let server = Http::new()
///     .bearer_token("s3cret")
///     .allow_host("mcp.example.com")
///     .bind("0.0.0.0:8080", started)
///     .await?;
/// server.run().await
/// # }
/// ```
#[derive(Clone, Default)]
pub struct Http {
    pub(super) token: Option<String>,
    pub(super) origins: Vec<String>,
    pub(super) hosts: Vec<String>,
    /// The ceiling on connections; derived from the process's file limit when `None`.
    pub(super) max_connections: Option<usize>,
    /// The deadlines for a request's headers and its body; the defaults when `None`.
    pub(super) header_timeout: Option<Duration>,
    pub(super) body_timeout: Option<Duration>,
    /// What one client may hold; the defaults when `None`.
    pub(super) max_sessions_per_client: Option<usize>,
    pub(super) max_streams_per_client: Option<usize>,
    /// Where sessions are kept: a store of the server's own when `None`.
    pub(super) store: Option<Arc<dyn SessionStore>>,
    /// How long a session lives unused; the default when `None`.
    pub(super) session_lifetime: Option<Duration>,
    /// How access tokens are checked, when they are.
    #[cfg(feature = "oauth")]
    pub(super) oauth: Option<crate::auth::OAuth>,
    /// The telemetry whose metrics `/metrics` serves, when it does.
    #[cfg(feature = "otel")]
    pub(super) metrics: Option<crate::telemetry::Installed>,
}

impl Http {
    /// The transport as it is by default: open to this machine's pages and host names, no
    /// token, sessions in this process's memory.
    #[must_use]
    pub fn new() -> Http {
        Http::default()
    }

    /// Serves the metrics of `telemetry` for Prometheus at `/metrics`, in its text format, from
    /// the same instruments as OTLP exports (`telemetry` installed with
    /// [`Telemetry::prometheus`](crate::telemetry::Telemetry::prometheus); `--metrics` on the
    /// command line). `/metrics` is guarded as `/mcp` is: the hosts and origins the endpoint
    /// refuses are refused there too, and the bearer token or OAuth access token it requires
    /// is required there (Prometheus sends one with `authorization` in its scrape config).
    #[cfg(feature = "otel")]
    #[must_use]
    pub fn metrics(mut self, telemetry: crate::telemetry::Installed) -> Http {
        self.metrics = Some(telemetry);
        self
    }

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
    pub fn bearer_token(mut self, token: impl Into<String>) -> Http {
        let token = token.into();
        assert!(
            !token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic()),
            "a bearer token is visible ASCII without spaces, and not empty"
        );
        self.token = Some(token);
        self
    }

    /// Makes the server an OAuth 2.1 resource server over HTTP: every request must carry an
    /// access token issued for it, which is checked as [`OAuth`](crate::auth::OAuth) describes,
    /// and each tool's scopes (`#[mcp_tool(scopes = [...])]`) are required of the token that
    /// calls it. The tool sees who called in [`Context::principal`](crate::Context::principal).
    /// Over stdio it does nothing: a local process's credentials come from its environment.
    ///
    /// A server has either this or a [shared bearer token](Http::bearer_token): with both,
    /// [`bind`](Http::bind) fails.
    #[cfg(feature = "oauth")]
    #[must_use]
    pub fn oauth(mut self, oauth: crate::auth::OAuth) -> Http {
        self.oauth = Some(oauth);
        self
    }

    /// Lets web pages from this origin (`https://app.example.com`) call the HTTP endpoint. Pages
    /// of this machine (`http://localhost:PORT`, `127.0.0.1`, `[::1]`) always may; a request from
    /// any other page is answered `403 Forbidden`.
    #[must_use]
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Http {
        self.origins.push(origin.into());
        self
    }

    /// Answers HTTP requests addressed to this host name too (their `Host` header), such as the
    /// name other machines reach this one by. The server always answers to `localhost`,
    /// `127.0.0.1`, `[::1]` and the address it listens on (any address, when it listens on all of
    /// them); a request for any other host is answered `403 Forbidden`, which defeats DNS
    /// rebinding.
    #[must_use]
    pub fn allow_host(mut self, host: impl Into<String>) -> Http {
        self.hosts.push(host.into());
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
    pub fn max_connections(mut self, connections: usize) -> Http {
        assert!(connections > 0, "a server takes one connection at least");
        self.max_connections = Some(connections);
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
    pub fn max_sessions_per_client(mut self, sessions: usize) -> Http {
        assert!(sessions > 0, "a client may keep one session at least");
        self.max_sessions_per_client = Some(sessions);
        self
    }

    /// The most streams that wait for what changes one client keeps open (64 by default):
    /// sessions' own streams (GET), streams resumed (GET with `Last-Event-ID`) and
    /// `subscriptions/listen`. Past the limit a new one is answered `429 Too Many Requests`.
    /// Each holds a connection, so without the limit one client could keep every connection
    /// working and lock the others out. A session's own stream counts once from its first GET
    /// to the session's end, however often the client opens it again. The streams of calls
    /// under way are bounded by the [ceiling on calls](crate::Server::max_concurrent_calls) instead.
    ///
    /// # Panics
    ///
    /// If `streams` is 0.
    #[must_use]
    #[track_caller]
    pub fn max_streams_per_client(mut self, streams: usize) -> Http {
        assert!(streams > 0, "a client may keep one stream open at least");
        self.max_streams_per_client = Some(streams);
        self
    }

    /// How long a client has to send a request's headers (10 seconds by default), counted from
    /// when it connects and from the end of each answer on a connection kept alive: a
    /// connection that sends nothing in that time, or too little, is closed. And how long it
    /// has to send the body once the headers are in (30 seconds by default): a body slower than
    /// that is answered `408 Request Timeout`.
    #[must_use]
    pub fn timeouts(mut self, headers: Duration, body: Duration) -> Http {
        self.header_timeout = Some(headers);
        self.body_timeout = Some(body);
        self
    }

    /// Keeps the handshake era's sessions in `store` instead of this process's memory: with a
    /// store that other processes share (`store::RedisStore`, with the `redis` feature), any of
    /// them serves any request of a session, so replicas behind a load balancer need no sticky
    /// sessions. See [`toolwright::store`](crate::store) for what moves between processes and
    /// what does not.
    #[must_use]
    pub fn session_store(mut self, store: impl crate::store::SessionStore) -> Http {
        self.store = Some(Arc::new(store));
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
    pub fn session_lifetime(mut self, lifetime: Duration) -> Http {
        assert!(
            lifetime >= Duration::from_secs(1),
            "a session lives a second at least"
        );
        self.session_lifetime = Some(lifetime);
        self
    }

    /// Listens on `addr` for the Streamable HTTP transport of `server`, without serving yet;
    /// the [`HttpServer`] tells the address it got (bind port 0 to get a free one) and serves.
    ///
    /// The address is used as given: `127.0.0.1:8080` (the safe choice) is reachable from this
    /// machine only, `0.0.0.0:8080` from any machine that can reach this one, which is logged as
    /// a warning when no [bearer token](Http::bearer_token) is set and access tokens are not
    /// checked (`Http::oauth`). Where sessions are kept is logged (`sessions: in memory`), and
    /// the [session store](Http::session_store) is [pinged](crate::store::SessionStore::ping):
    /// one that does not answer fails the bind with [`Error::SessionStore`].
    pub async fn bind(
        self,
        addr: impl ToSocketAddrs,
        server: Started,
    ) -> Result<HttpServer, Error> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        self.warn_if_open(local_addr);
        let endpoint = Endpoint::new(server, self, local_addr)?;
        endpoint.open_store().await?;
        Ok(HttpServer {
            listener,
            local_addr,
            endpoint: Arc::new(endpoint),
        })
    }

    /// Warns when other machines may reach the endpoint and nothing checks who calls.
    fn warn_if_open(&self, local_addr: SocketAddr) {
        #[cfg(feature = "oauth")]
        let oauth = self.oauth.is_some();
        #[cfg(not(feature = "oauth"))]
        let oauth = false;
        if !local_addr.ip().is_loopback() && self.token.is_none() && !oauth {
            tracing::warn!(
                address = %local_addr,
                "listening on an address other machines may reach, without a bearer token: \
                 anyone who can connect can call the tools. Check OAuth access tokens \
                 (--oauth-issuer), set a token (--token, or TOOLWRIGHT_TOKEN) or listen on \
                 127.0.0.1"
            );
        }
    }
}

impl fmt::Debug for Http {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("Http");
        f.field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("origins", &self.origins)
            .field("hosts", &self.hosts)
            .field("max_connections", &self.max_connections)
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("max_sessions_per_client", &self.max_sessions_per_client)
            .field("max_streams_per_client", &self.max_streams_per_client)
            .field("store", &self.store.as_ref().map_or("memory", |_| "given"))
            .field("session_lifetime", &self.session_lifetime);
        #[cfg(feature = "oauth")]
        f.field("oauth", &self.oauth);
        f.finish()
    }
}
