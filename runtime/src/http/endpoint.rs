//! The `/mcp` endpoint: each POST's message through the service to a JSON
//! answer, a stream of events, or `202 Accepted`; the sessions, in [`sessions`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{CONNECTION, CONTENT_LENGTH};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use futures_util::StreamExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Http;
use super::access::{self, Access};
use super::authorization::Authorization;
use super::clients::{self, ClientId, Clients};
use super::connections::{self, TcpConnection, within};
use super::events::Replay;
use super::response::{Rejection, holding, json};
use super::stateless;
use crate::auth::Principal;
use crate::protocol::PRIMING_SINCE;
use crate::protocol::jsonrpc::{self, Id, Incoming, ReplyKind};
use crate::server::{Error, Limits, Session, Started, Step};
use crate::sink;
use crate::store::{MemoryStore, SessionStore};

mod answer;
mod replicas;
mod sessions;

use sessions::{LiveSession, Named};

/// The header that names a session.
const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");

/// The header with which a client resumes a stream: the id of the last event it received.
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// How long a session lives unused, unless the server says otherwise: a day.
pub(crate) const DEFAULT_SESSION_LIFETIME: std::time::Duration =
    std::time::Duration::from_secs(24 * 60 * 60);

/// What `405 Method Not Allowed` says the endpoint takes.
const ALLOWED: &str = "GET, POST, DELETE";

/// What every request to the endpoint shares.
pub(super) struct Endpoint {
    server: Started,
    access: Access,
    authorization: Authorization,
    pub(super) limits: Limits,
    /// How many connections it takes, and how long a request's headers may take.
    connection_limits: connections::ConnectionLimits,
    /// How long a request's body may take to arrive.
    body_timeout: std::time::Duration,
    /// What each client may hold.
    clients: Arc<Clients>,
    /// The live sessions of this process, by id; their records are in `store`.
    sessions: Mutex<HashMap<String, LiveSession>>,
    /// Where the sessions' records are, shared with other processes or not.
    store: Arc<dyn SessionStore>,
    /// The telemetry whose metrics `/metrics` serves.
    #[cfg(feature = "otel")]
    metrics: Option<crate::telemetry::Installed>,
    /// How long a session lives unused.
    session_lifetime: std::time::Duration,
    /// This process's name among those sharing the store.
    replica: Arc<str>,
    /// The calls under way, which a graceful stop waits for.
    calls: TaskTracker,
    /// Cancelled when calls still under way at the end of the grace period are to stop.
    stop: CancellationToken,
    /// Cancelled when the server stops: the streams that only wait for changes end.
    ending: CancellationToken,
    /// Numbers each event stream, so that event ids are unique.
    streams: AtomicU64,
}

/// How a call's answer reaches the client when it is a stream of events.
enum Delivery {
    /// The handshake era: events with ids, kept in the session's `replay` for resumption;
    /// `polling` when the client negotiated a version that expects a priming event, which lets
    /// a tool end the stream early too.
    Resumable { replay: Arc<Replay>, polling: bool },
    /// Protocol 2026-07-28: no ids, no resumption, and closing the stream cancels the call of
    /// this request's own `session`.
    Cancellable { session: Arc<Session> },
}

pub(super) fn router(endpoint: Arc<Endpoint>) -> Router {
    // Every path but `/mcp` answers without a body, whatever the method: one sent is drained
    // before the answer, as `serve` drains those it does not read.
    let others = Router::new();
    #[cfg(feature = "otel")]
    let others = match endpoint.metrics {
        Some(_) => others.route("/metrics", axum::routing::get(metrics)),
        None => others,
    };
    #[cfg(feature = "oauth")]
    let others = endpoint.authorization.route_metadata(others);
    let others =
        others
            .fallback(|| async { StatusCode::NOT_FOUND })
            .layer(middleware::from_fn_with_state(
                Arc::clone(&endpoint),
                drained,
            ));
    Router::new()
        .route("/mcp", any(serve))
        .merge(others)
        .with_state(endpoint)
}

/// `next`'s answer to a request whose body it does not read, once the body is drained.
async fn drained(State(endpoint): State<Arc<Endpoint>>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let headers = parts.headers.clone();
    let answer = next.run(Request::from_parts(parts, Body::empty()));
    endpoint.unread(&headers, body, answer).await
}

/// The metrics, for Prometheus: to a request that passes the checks `/mcp` makes of its host,
/// origin and token.
#[cfg(feature = "otel")]
async fn metrics(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let checked = match endpoint.access.check(&parts.headers, &parts.uri) {
        Ok(()) => endpoint.authorization.authenticate(&parts.headers).await,
        Err(rejection) => Err(rejection),
    };
    if let Err(rejection) = checked {
        return rejection.into_response();
    }
    let text = endpoint
        .metrics
        .as_ref()
        .and_then(crate::telemetry::Installed::prometheus_text);
    match text {
        Some(text) => (
            [(
                axum::http::header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        None => Rejection::new(
            StatusCode::NOT_FOUND,
            "this server keeps no metrics for Prometheus: install its telemetry with \
             `Telemetry::prometheus` (`--metrics`)",
        )
        .into_response(),
    }
}

async fn serve(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let connection = parts.extensions.get::<Arc<TcpConnection>>().cloned();
    let client = connection
        .as_ref()
        .map_or_else(ClientId::unknown, |connection| {
            ClientId::address(connection.peer())
        });
    let working = || {
        if let Some(connection) = &connection {
            connection.working();
        }
    };
    let checked = match endpoint.access.check(&parts.headers, &parts.uri) {
        Ok(()) => endpoint.authorization.authenticate(&parts.headers).await,
        Err(rejection) => Err(rejection),
    };
    let principal = match checked {
        Ok(principal) => principal,
        Err(rejection) => return endpoint.refused(rejection, &parts.headers, body).await,
    };
    let client = client.of(principal.as_deref());
    if parts.method == Method::POST {
        return endpoint
            .post(&parts.headers, body, working, client, principal)
            .await
            .unwrap_or_else(IntoResponse::into_response);
    }
    // Other methods carry no message: a body sent with one is drained before the answer.
    let answer = async {
        let answer = if stateless::applies(&parts.headers, None, &Value::Null) {
            Err(Rejection::new(
                StatusCode::METHOD_NOT_ALLOWED,
                format!(
                    "method {} is not allowed under protocol 2026-07-28, which has neither sessions \
                     nor streams to resume: every request is a POST",
                    parts.method
                ),
            )
            .with_header("allow", "POST"))
        } else if parts.method == Method::GET {
            working();
            endpoint
                .get(&parts.headers, client, principal.as_deref())
                .await
        } else if parts.method == Method::DELETE {
            endpoint
                .delete(&parts.headers, client, principal.as_deref())
                .await
        } else {
            Err(Rejection::new(
                StatusCode::METHOD_NOT_ALLOWED,
                format!(
                    "method {} is not allowed: POST a message, GET the session's stream (with \
                     `Last-Event-ID` to resume one), or DELETE the session",
                    parts.method
                ),
            )
            .with_header("allow", ALLOWED))
        };
        answer.unwrap_or_else(IntoResponse::into_response)
    };
    endpoint.unread(&parts.headers, body, answer).await
}

impl Endpoint {
    /// The endpoint of `server`, listening at `bound`, as `http` configures it.
    pub(super) fn new(server: Started, http: Http, bound: SocketAddr) -> Result<Endpoint, Error> {
        #[cfg_attr(not(feature = "oauth"), allow(unused_mut))]
        let mut access = Access::new(bound, &http);
        let authorization = Authorization::configured(&http, &server, bound)?;
        #[cfg(feature = "oauth")]
        if let Authorization::OAuth(verifier) = &authorization {
            access.allow_host(verifier.resource_host());
        }
        let connection_limits = connections::ConnectionLimits {
            max_connections: http
                .max_connections
                .unwrap_or_else(connections::default_max_connections),
            header_timeout: http
                .header_timeout
                .unwrap_or(connections::DEFAULT_HEADER_TIMEOUT),
        };
        let body_timeout = http
            .body_timeout
            .unwrap_or(connections::DEFAULT_BODY_TIMEOUT);
        let clients = Clients::new(
            http.max_sessions_per_client
                .unwrap_or(clients::DEFAULT_SESSIONS),
            http.max_streams_per_client
                .unwrap_or(clients::DEFAULT_STREAMS),
        );
        let store = http.store.unwrap_or_else(|| Arc::new(MemoryStore::new()));
        let session_lifetime = http.session_lifetime.unwrap_or(DEFAULT_SESSION_LIFETIME);
        Ok(Endpoint {
            limits: server.limits().clone(),
            server,
            access,
            authorization,
            connection_limits,
            body_timeout,
            clients,
            sessions: Mutex::new(HashMap::new()),
            store,
            #[cfg(feature = "otel")]
            metrics: http.metrics,
            session_lifetime,
            replica: Arc::from(crate::store::replica_name()),
            calls: TaskTracker::new(),
            stop: CancellationToken::new(),
            ending: CancellationToken::new(),
            // Stream numbers start at a random multiple of 2^32, so that processes sharing a
            // store number their streams apart.
            streams: AtomicU64::new(replicas::first_stream()),
        })
    }

    /// Says where the sessions are kept, and asks the store whether it answers: a server
    /// whose store does not answer as it starts does not start.
    pub(super) async fn open_store(&self) -> Result<(), Error> {
        let store = self.store.describe();
        tracing::info!("sessions: in {store}");
        self.store
            .ping()
            .await
            .map_err(|error| Error::SessionStore { store, error })
    }

    /// How the transport takes connections.
    pub(super) fn connection_limits(&self) -> connections::ConnectionLimits {
        self.connection_limits
    }

    /// Completes when every call under way has finished; no call starts after this is called.
    pub(super) async fn calls_finished(&self) {
        self.calls.close();
        self.calls.wait().await;
    }

    pub(super) fn stop_calls(&self) {
        self.stop.cancel();
    }

    /// Ends the streams that only wait for changes (the sessions' own, `subscriptions/listen`),
    /// which would otherwise hold the server until the grace period is over.
    pub(super) fn end_streams(&self) {
        self.ending.cancel();
        self.server.stop();
    }

    /// A POST: its body read within the deadline, then `working` (the connection is no longer
    /// merely waiting), then the message handled.
    async fn post(
        &self,
        headers: &HeaderMap,
        body: Body,
        working: impl FnOnce(),
        client: ClientId,
        principal: Option<Arc<Principal>>,
    ) -> Result<Response, Rejection> {
        if let Err(rejection) =
            access::check_accept(headers).and_then(|()| access::check_content_type(headers))
        {
            return Ok(self.refused(rejection, headers, body).await);
        }
        let limit = self.body_timeout;
        let Some(body) = within(limit, self.read_body(headers, body)).await else {
            return Err(Rejection::new(
                StatusCode::REQUEST_TIMEOUT,
                format!("the body did not arrive within {limit:?}"),
            )
            .with_header("connection", "close"));
        };
        let body = body?;
        working();
        let message = match jsonrpc::parse(&body) {
            Err(reply) => return Ok(json(StatusCode::BAD_REQUEST, reply.into_bytes())),
            Ok(message) => message,
        };
        let (id, method, params) = match &message {
            Incoming::Request {
                id, method, params, ..
            } => (Some(id), Some(method.as_str()), params),
            Incoming::Notification { params, .. } => (None, None, params),
            Incoming::Response { .. } => (None, None, &Value::Null),
        };
        if let (Some(principal), Some(method)) = (&principal, method)
            && let Some((tool, scopes)) = self.server.scopes(method, params)
        {
            self.authorization
                .authorize(principal, scopes, &format!("tool `{tool}`"))
                .map_err(|refused| refused.with_id(id))?;
        }
        let stateless = stateless::applies(headers, method, params);
        let initialize = method == Some("initialize");
        let id = id.cloned();
        if stateless {
            return Ok(self
                .post_stateless(headers, message, client, principal)
                .await);
        }
        if initialize && stateless::header_names_era(headers) {
            let id = id.unwrap_or(Id::Null);
            return Ok(json(
                StatusCode::NOT_FOUND,
                stateless::no_initialize(&id).into_bytes(),
            ));
        }
        access::protocol_version(headers).map_err(|refused| refused.with_id(id.as_ref()))?;
        let session_id = headers.get(SESSION_ID).map(|v| v.to_str().unwrap_or(""));
        let known = match session_id {
            Some(sid) => self
                .session(sid, principal.as_deref(), client)
                .await
                .map_err(|refused| refused.with_id(id.as_ref()))?,
            None => None,
        };
        let found = match (known, session_id) {
            (Some(known), _) => known,
            // A client that lost its session starts another with `initialize`.
            (None, _) if initialize => {
                let session = Arc::new(Session::of_replica(&self.replica));
                let (sink, _) = sink::channel();
                let owner = principal.as_deref();
                return Ok(match self.server.handle(&session, message, &sink) {
                    Step::Reply(reply) if reply.kind() == ReplyKind::Opened => {
                        self.open_session(session, reply, id.as_ref(), client, owner)
                            .await?
                    }
                    Step::Reply(reply) => json(StatusCode::OK, reply.into_bytes()),
                    // `initialize` is answered at once.
                    Step::Nothing | Step::Call(_) | Step::Stream(_) => {
                        StatusCode::ACCEPTED.into_response()
                    }
                });
            }
            (None, Some(_)) => {
                return Err(Rejection::new(
                    StatusCode::NOT_FOUND,
                    "unknown or terminated session: send `initialize` to start a new one",
                )
                .with_id(id.as_ref()));
            }
            (None, None) => {
                return Err(Rejection::new(
                    StatusCode::BAD_REQUEST,
                    "the `Mcp-Session-Id` header is missing: send `initialize` first, then the \
                     session id it returns with every request",
                )
                .with_id(id.as_ref()));
            }
        };

        if let Some(sid) = session_id
            && self.relay(sid, &message, &body).await
        {
            // An answer to another process's request: it goes there.
            return Ok(StatusCode::ACCEPTED.into_response());
        }
        let (sink, notifications) = sink::channel();
        let step = self
            .server
            .handle_as(&found.session, message, &sink, client.who(principal));
        // The call's context holds the only other sender: what it sends is this request's alone.
        drop(sink);
        // What the request changed of the session is in the store before it is answered, so
        // that the next request finds it, wherever it goes.
        self.save(&found)
            .await
            .map_err(|refused| refused.with_id(id.as_ref()))?;
        let Named {
            session, replay, ..
        } = found;
        Ok(match step {
            Step::Nothing => StatusCode::ACCEPTED.into_response(),
            Step::Reply(reply) => json(StatusCode::OK, reply.into_bytes()),
            Step::Stream(stream) => {
                let slot = self
                    .clients
                    .open_stream(client)
                    .map_err(|refused| refused.with_id(id.as_ref()))?;
                let polling = session
                    .negotiated_version()
                    .is_some_and(|v| v >= PRIMING_SINCE);
                let delivery = Delivery::Resumable { replay, polling };
                let answer = self.call(stream, notifications, delivery, id, true).await;
                holding(answer, slot)
            }
            Step::Call(call) => {
                // Only a client that negotiated it expects a priming event (an id and no data);
                // an older one would take the empty data for a malformed message.
                let polling = session
                    .negotiated_version()
                    .is_some_and(|v| v >= PRIMING_SINCE);
                let delivery = Delivery::Resumable { replay, polling };
                self.call(call, notifications, delivery, id, true).await
            }
        })
    }

    /// A POST of protocol 2026-07-28: its own session, which ends with it; no session id is
    /// read or issued.
    async fn post_stateless(
        &self,
        headers: &HeaderMap,
        message: Incoming,
        client: ClientId,
        principal: Option<Arc<Principal>>,
    ) -> Response {
        let (id, method, params, declared) = match message {
            Incoming::Request {
                id,
                method,
                params,
                client,
            } => (id, method, params, client),
            // The era defines no notification a client sends over HTTP: it is taken and dropped.
            Incoming::Notification { .. } => return StatusCode::ACCEPTED.into_response(),
            Incoming::Response { .. } => {
                return json(
                    StatusCode::BAD_REQUEST,
                    stateless::not_a_request().into_bytes(),
                );
            }
        };
        let tool = (method == "tools/call")
            .then(|| params.get("name").and_then(Value::as_str))
            .flatten();
        let mirrored = tool.map_or(&[][..], |name| self.server.mirrored(name));
        let checked = stateless::check_headers(headers, &id, &method, &params, &declared, mirrored);
        if let Err(reply) = checked {
            return json(StatusCode::BAD_REQUEST, reply.into_bytes());
        }
        let session = Arc::new(Session::stateless());
        let (sink, notifications) = sink::channel();
        let message = Incoming::Request {
            id: id.clone(),
            method,
            params,
            client: declared,
        };
        let step = self
            .server
            .handle_as(&session, message, &sink, client.who(principal));
        drop(sink);
        match step {
            Step::Nothing => StatusCode::ACCEPTED.into_response(),
            Step::Reply(reply) => stateless::response(reply),
            Step::Call(call) => {
                let delivery = Delivery::Cancellable { session };
                self.call(call, notifications, delivery, Some(id), true)
                    .await
            }
            Step::Stream(stream) => {
                let slot = match self.clients.open_stream(client) {
                    Ok(slot) => slot,
                    Err(refused) => return refused.with_id(Some(&id)).into_response(),
                };
                let delivery = Delivery::Cancellable { session };
                let answer = self
                    .call(stream, notifications, delivery, Some(id), false)
                    .await;
                holding(answer, slot)
            }
        }
    }

    /// The answer to a request refused before its body was read, once the body is drained (see
    /// [`Endpoint::unread`]).
    async fn refused(&self, rejection: Rejection, headers: &HeaderMap, body: Body) -> Response {
        self.unread(headers, body, async { rejection.into_response() })
            .await
    }

    /// `answer`, made for a request whose body it does not need, once that body is read and
    /// dropped. Hyper closes a connection whose last request body was not read to its end, and
    /// may do so after writing an answer that does not say so: a client that sends its next
    /// request on the connection, as one following a `401` to the server's metadata does, then
    /// reads "server disconnected" when the body had not all arrived as the answer was made. A
    /// body that passes the message size limit or does not arrive in time is not waited for:
    /// the answer says `Connection: close`.
    async fn unread(
        &self,
        headers: &HeaderMap,
        body: Body,
        answer: impl Future<Output = Response>,
    ) -> Response {
        let drained = self.drain(headers, body).await;
        let mut response = answer.await;
        if !drained {
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }

    /// Whether `body` was read to its end, within the body's time limit and the message size
    /// limit, its bytes counted and dropped.
    async fn drain(&self, headers: &HeaderMap, body: Body) -> bool {
        let limit = self.limits.max_message_size as u64;
        if declared_length(headers).is_some_and(|size| size > limit) {
            return false;
        }
        let read = async {
            let mut size = 0;
            let mut chunks = body.into_data_stream();
            while let Some(chunk) = chunks.next().await {
                let Ok(chunk) = chunk else { return false };
                size += chunk.len() as u64;
                if size > limit {
                    return false;
                }
            }
            true
        };
        within(self.body_timeout, read).await.unwrap_or(false)
    }

    /// Reads the body, refusing it as soon as it passes the message size limit; the refusal
    /// closes the connection, since the rest of the body is not read.
    async fn read_body(&self, headers: &HeaderMap, body: Body) -> Result<Vec<u8>, Rejection> {
        let limit = self.limits.max_message_size;
        let too_large = |size: String| {
            Rejection::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("message of {size} bytes refused: the limit is {limit} bytes"),
            )
            .with_header("connection", "close")
        };
        if let Some(size) = declared_length(headers).filter(|&size| size > limit as u64) {
            return Err(too_large(size.to_string()));
        }
        let mut bytes = Vec::new();
        let mut chunks = body.into_data_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|err| {
                Rejection::new(
                    StatusCode::BAD_REQUEST,
                    format!("cannot read the body: {err}"),
                )
            })?;
            if bytes.len() + chunk.len() > limit {
                return Err(too_large(format!("more than {limit}")));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }
}

/// The body's length its `Content-Length` declares.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok())
}
