//! The `/mcp` endpoint: sessions, and each POST's message through the dispatcher to a JSON
//! answer, a stream of events, or `202 Accepted`.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::guard::{self, Guard};
use super::{Refusal, Server};
use crate::server::dispatch::{Dispatcher, Session, Step};
use crate::server::jsonrpc::{self, Incoming};
use crate::server::{Error, Limits};
use crate::tool::BoxFuture;

/// JSON-RPC's code for an error of the server's own.
const INTERNAL_ERROR: i64 = -32603;

/// The header that names a session.
const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");

/// The most sessions kept at once. A new one past it ends the session unused the longest, so a
/// client that keeps opening sessions cannot exhaust memory.
const MAX_SESSIONS: usize = 10_000;

/// The first version whose clients expect a stream to open with a priming event (an id and no
/// data); older clients would take the empty data for a malformed message.
const PRIMING_SINCE: &str = "2025-11-25";

/// What every request to the endpoint shares.
pub(super) struct Endpoint {
    dispatcher: Arc<Dispatcher>,
    guard: Guard,
    pub(super) limits: Limits,
    sessions: Mutex<HashMap<String, Entry>>,
    /// The calls under way, which a graceful stop waits for.
    calls: TaskTracker,
    /// Cancelled when calls still under way at the end of the grace period are to stop.
    stop: CancellationToken,
    /// Numbers each event stream, so that event ids are unique.
    streams: AtomicU64,
}

struct Entry {
    session: Arc<Session>,
    last_used: Instant,
}

/// How a call ended, as the task that ran it reports: its response, or nothing when the client
/// cancelled it (or the server stopped it).
type Outcome = oneshot::Receiver<Option<Vec<u8>>>;

pub(super) fn router(endpoint: Arc<Endpoint>) -> Router {
    Router::new().route("/mcp", any(serve)).with_state(endpoint)
}

async fn serve(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let answer = match endpoint.guard.check(&parts.headers) {
        Err(refusal) => Err(refusal),
        Ok(()) if parts.method == Method::POST => endpoint.post(&parts.headers, body).await,
        Ok(()) if parts.method == Method::DELETE => endpoint.delete(&parts.headers),
        // No stream of the server's own is offered (nor resumption, which would use GET).
        Ok(()) => Err(Refusal::new(
            StatusCode::METHOD_NOT_ALLOWED,
            format!(
                "method {} is not allowed: POST a message, or DELETE the session",
                parts.method
            ),
        )
        .with_header("allow", "POST, DELETE")),
    };
    answer.unwrap_or_else(IntoResponse::into_response)
}

impl Endpoint {
    pub(super) fn new(server: Server, bound: SocketAddr) -> Result<Endpoint, Error> {
        let guard = Guard::new(bound, &server.http);
        let limits = server.limits();
        Ok(Endpoint {
            dispatcher: Arc::new(server.into_dispatcher()?),
            guard,
            limits,
            sessions: Mutex::new(HashMap::new()),
            calls: TaskTracker::new(),
            stop: CancellationToken::new(),
            streams: AtomicU64::new(0),
        })
    }

    /// Completes when every call under way has finished; no call starts after this is called.
    pub(super) async fn calls_finished(&self) {
        self.calls.close();
        self.calls.wait().await;
    }

    pub(super) fn stop_calls(&self) {
        self.stop.cancel();
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn post(&self, headers: &HeaderMap, body: Body) -> Result<Response, Refusal> {
        guard::check_accept(headers)?;
        guard::check_content_type(headers)?;
        let version = guard::protocol_version(headers)?;
        let body = self.read_body(headers, body).await?;
        let (id, initialize) = match jsonrpc::parse(&body) {
            Err(reply) => return Ok(json(StatusCode::BAD_REQUEST, reply)),
            Ok(Incoming::Request { id, method, .. }) => (Some(id), method == "initialize"),
            Ok(_) => (None, false),
        };
        let session_id = headers.get(SESSION_ID).map(|v| v.to_str().unwrap_or(""));
        let known = session_id.and_then(|sid| self.session(sid));
        let (session, new) = match (known, session_id) {
            (Some(session), _) => (session, false),
            // A client that lost its session starts another with `initialize`.
            (None, _) if initialize => (Arc::new(Session::new()), true),
            (None, Some(_)) => {
                return Err(Refusal::new(
                    StatusCode::NOT_FOUND,
                    "unknown or terminated session: send `initialize` to start a new one",
                )
                .with_id(id.as_ref()));
            }
            (None, None) => {
                return Err(Refusal::new(
                    StatusCode::BAD_REQUEST,
                    "the `Mcp-Session-Id` header is missing: send `initialize` first, then the \
                     session id it returns with every request",
                )
                .with_id(id.as_ref()));
            }
        };

        let (sink, notifications) = mpsc::unbounded_channel();
        let step = self.dispatcher.handle(&session, &body, &sink);
        // The call's context holds the only other sender: what it sends is this request's alone.
        drop(sink);
        Ok(match step {
            Step::Nothing => StatusCode::ACCEPTED.into_response(),
            Step::Reply(reply) if new => self.open_session(session, reply, id.as_ref())?,
            Step::Reply(reply) => json(StatusCode::OK, reply),
            Step::Shared(reply) => json(StatusCode::OK, reply.into_vec()),
            Step::Call(call) => self.call(call, notifications, version, id).await,
        })
    }

    /// Ends a session: later requests naming it get 404.
    fn delete(&self, headers: &HeaderMap) -> Result<Response, Refusal> {
        guard::protocol_version(headers)?;
        let Some(session_id) = headers.get(SESSION_ID) else {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "the `Mcp-Session-Id` header is missing: name the session to end",
            ));
        };
        let session_id = session_id.to_str().unwrap_or("");
        match self.sessions().remove(session_id) {
            Some(entry) => {
                // Calls of the session waiting for the client's answers stop waiting.
                entry.session.close();
                tracing::info!("session ended by the client");
                Ok(StatusCode::NO_CONTENT.into_response())
            }
            None => Err(Refusal::new(
                StatusCode::NOT_FOUND,
                "unknown or terminated session",
            )),
        }
    }

    fn session(&self, id: &str) -> Option<Arc<Session>> {
        let mut sessions = self.sessions();
        let entry = sessions.get_mut(id)?;
        entry.last_used = Instant::now();
        Some(Arc::clone(&entry.session))
    }

    /// Keeps the session a successful `initialize` started, and names it in the answer.
    fn open_session(
        &self,
        session: Arc<Session>,
        reply: Vec<u8>,
        id: Option<&Value>,
    ) -> Result<Response, Refusal> {
        let succeeded = serde_json::from_slice::<Value>(&reply)
            .is_ok_and(|reply| reply.get("result").is_some());
        if !succeeded {
            return Ok(json(StatusCode::OK, reply));
        }
        let session_id = new_session_id().map_err(|err| {
            tracing::error!(error = %err, "no randomness for a session id");
            Refusal::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot start a session: the system gave no randomness",
            )
            .with_id(id)
        })?;
        {
            let mut sessions = self.sessions();
            if sessions.len() >= MAX_SESSIONS && !evict_one(&mut sessions) {
                return Err(Refusal::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "too many sessions with calls under way: try again later",
                )
                .with_id(id));
            }
            sessions.insert(
                session_id.clone(),
                Entry {
                    session,
                    last_used: Instant::now(),
                },
            );
        }
        let mut response = json(StatusCode::OK, reply);
        response.headers_mut().insert(
            SESSION_ID,
            HeaderValue::from_str(&session_id).expect("hex is a valid header value"),
        );
        Ok(response)
    }

    /// Reads the body, refusing it as soon as it passes the message size limit.
    async fn read_body(&self, headers: &HeaderMap, body: Body) -> Result<Vec<u8>, Refusal> {
        let limit = self.limits.max_message_size;
        let too_large = |size: String| {
            Refusal::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("message of {size} bytes refused: the limit is {limit} bytes"),
            )
        };
        let declared = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if let Some(size) = declared.filter(|&size| size > limit as u64) {
            return Err(too_large(size.to_string()));
        }
        let mut bytes = Vec::new();
        let mut chunks = body.into_data_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|err| {
                Refusal::new(
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

    /// Runs a call on a task of its own, so that it finishes even if the client goes away
    /// (disconnecting is no cancellation). The answer is plain JSON when the result comes
    /// first, and an event stream when the call sends notifications before it.
    async fn call(
        &self,
        call: BoxFuture<Option<Vec<u8>>>,
        mut notifications: UnboundedReceiver<Vec<u8>>,
        version: &str,
        id: Option<Value>,
    ) -> Response {
        let id = id.unwrap_or(Value::Null);
        let (report, mut outcome) = oneshot::channel();
        let stop = self.stop.clone();
        let slots = Arc::clone(&self.limits.calls);
        self.calls.spawn(async move {
            let run = async {
                // The semaphore is never closed, so the permit always comes.
                let _permit = slots.acquire_owned().await;
                call.await
            };
            tokio::select! {
                response = run => { let _ = report.send(response); }
                () = stop.cancelled() => {}
            }
        });
        let first = tokio::select! {
            biased;
            Some(notification) = notifications.recv() => notification,
            ended = &mut outcome => match notifications.try_recv() {
                Ok(notification) => {
                    let mut events = EventStream::new(self, version, id, notifications, None);
                    events.ready.push_back(notification);
                    events.finish(ended);
                    return events.into_response();
                }
                Err(_) => return match ended {
                    Ok(Some(response)) => json(StatusCode::OK, response),
                    // Cancelled: no response is sent, as the protocol asks.
                    Ok(None) => StatusCode::ACCEPTED.into_response(),
                    Err(_) => json(StatusCode::OK, stopped(&id)),
                },
            },
        };
        let mut events = EventStream::new(self, version, id, notifications, Some(outcome));
        events.ready.push_back(first);
        events.into_response()
    }
}

/// Ends the session unused the longest among those with no call under way. Returns whether
/// there was one.
fn evict_one(sessions: &mut HashMap<String, Entry>) -> bool {
    let idle = sessions
        .iter()
        // A call under way holds the session too.
        .filter(|(_, entry)| Arc::strong_count(&entry.session) == 1)
        .min_by_key(|(_, entry)| entry.last_used)
        .map(|(id, _)| id.clone());
    match idle {
        Some(id) => {
            if let Some(entry) = sessions.remove(&id) {
                entry.session.close();
            }
            tracing::info!("session ended: the most sessions are open");
            true
        }
        None => false,
    }
}

/// The response to a call the server stopped at the end of its grace period: the client would
/// otherwise wait for one that never comes.
fn stopped(id: &Value) -> Vec<u8> {
    jsonrpc::error(
        id,
        INTERNAL_ERROR,
        "the server stopped before the call finished",
    )
}

/// 128 random bits in hex: visible ASCII, and not to be guessed.
fn new_session_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// One call's answer as server-sent events: a priming event, the notifications the call sends,
/// then its response; the stream ends after it.
struct EventStream {
    /// The request's id, for the error sent if the server stops the call.
    id: Value,
    stream: u64,
    sent: u64,
    prime: bool,
    ready: VecDeque<Vec<u8>>,
    notifications: UnboundedReceiver<Vec<u8>>,
    outcome: Option<Outcome>,
}

impl EventStream {
    fn new(
        endpoint: &Endpoint,
        version: &str,
        id: Value,
        notifications: UnboundedReceiver<Vec<u8>>,
        outcome: Option<Outcome>,
    ) -> EventStream {
        EventStream {
            id,
            stream: endpoint.streams.fetch_add(1, Ordering::Relaxed),
            sent: 0,
            prime: version >= PRIMING_SINCE,
            ready: VecDeque::new(),
            notifications,
            outcome,
        }
    }

    /// The call has ended: what it sent before it ended, then its response (if it has one), are
    /// the last events.
    fn finish(&mut self, ended: Result<Option<Vec<u8>>, oneshot::error::RecvError>) {
        while let Ok(notification) = self.notifications.try_recv() {
            self.ready.push_back(notification);
        }
        match ended {
            Ok(Some(response)) => self.ready.push_back(response),
            Ok(None) => {}
            Err(_) => self.ready.push_back(stopped(&self.id)),
        }
        self.outcome = None;
    }

    /// One event: `id: <stream>-<n>` and the message as its data (compact JSON has no newline).
    fn event(&mut self, data: &[u8]) -> Bytes {
        let id = format!("id: {}-{}\ndata: ", self.stream, self.sent);
        self.sent += 1;
        let mut event = Vec::with_capacity(id.len() + data.len() + 2);
        event.extend_from_slice(id.as_bytes());
        event.extend_from_slice(data);
        event.extend_from_slice(b"\n\n");
        Bytes::from(event)
    }

    async fn next(mut self) -> Option<(Result<Bytes, Infallible>, EventStream)> {
        loop {
            if std::mem::take(&mut self.prime) {
                let event = self.event(b"");
                return Some((Ok(event), self));
            }
            if let Some(message) = self.ready.pop_front() {
                let event = self.event(&message);
                return Some((Ok(event), self));
            }
            let outcome = self.outcome.as_mut()?;
            tokio::select! {
                biased;
                Some(notification) = self.notifications.recv() => self.ready.push_back(notification),
                ended = outcome => self.finish(ended),
            }
        }
    }

    fn into_response(self) -> Response {
        let body = Body::from_stream(futures_util::stream::unfold(self, EventStream::next));
        (
            [
                (CONTENT_TYPE, HeaderValue::from_static("text/event-stream")),
                (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            ],
            body,
        )
            .into_response()
    }
}

/// A JSON body with this status.
pub(super) fn json(status: StatusCode, body: Vec<u8>) -> Response {
    (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
    )
        .into_response()
}
