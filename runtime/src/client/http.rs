//! A server reached over Streamable HTTP: each message a POST; a request's answer in the
//! response, as JSON or on an event stream with the notifications and requests that come
//! before it; in the handshake era, the session's id on every POST and a GET stream for what
//! the server sends unasked; in 2026-07-28, the method and name in headers, and a request
//! cancelled by closing its stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use eventsource_stream::Eventsource as _;
use futures_util::StreamExt as _;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Response, StatusCode};
use serde_json::Value;
use tokio::task::AbortHandle;

use super::endpoint::Url;
use super::error::Error;
use super::link::{Failure, Inbound, Inbox, Link, Outgoing, OutgoingKind};
use futures_util::future::BoxFuture;

const SESSION_ID: &str = "mcp-session-id";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const LAST_EVENT_ID: &str = "last-event-id";

/// The longest pause between two attempts to reopen the session's GET stream.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// A server at a URL.
pub(crate) struct Http {
    shared: Arc<Shared>,
    /// The tasks reading requests' responses, by request id.
    exchanges: Arc<Mutex<HashMap<i64, AbortHandle>>>,
    /// The task reading the session's GET stream.
    listening: Mutex<Option<AbortHandle>>,
}

/// What the tasks of a connection share.
struct Shared {
    name: String,
    url: reqwest::Url,
    client: reqwest::Client,
    headers: HeaderMap,
    inbox: Inbox,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    version: Option<&'static str>,
    stateless: bool,
    /// Set by the server with its answer to `initialize`.
    session: Option<HeaderValue>,
}

impl Http {
    /// A connection to the server `name` at `url`, whose messages go to `inbox`.
    pub(crate) fn new(name: &str, url: &Url, inbox: Inbox) -> Result<Http, Error> {
        let refused = |reason: String| Error::Connect {
            server: name.to_owned(),
            reason,
        };
        let parsed = reqwest::Url::parse(&url.url)
            .map_err(|error| refused(format!("`{}` is not a URL: {error}", url.url)))?;
        let mut headers = HeaderMap::new();
        for (key, value) in &url.headers {
            let key = HeaderName::try_from(key.as_str())
                .map_err(|error| refused(format!("`{key}` is not a header name: {error}")))?;
            let value = HeaderValue::try_from(value.as_str())
                .map_err(|error| refused(format!("the value of `{key}` is not one: {error}")))?;
            headers.append(key, value);
        }
        let client = reqwest::Client::builder()
            .build()
            .map_err(|error| refused(format!("no HTTP client: {error}")))?;
        Ok(Http {
            shared: Arc::new(Shared {
                name: name.to_owned(),
                url: parsed,
                client,
                headers,
                inbox,
                state: Mutex::new(State::default()),
            }),
            exchanges: Arc::new(Mutex::new(HashMap::new())),
            listening: Mutex::new(None),
        })
    }
}

impl Shared {
    /// A POST of `bytes`, with the headers its era and session ask for.
    fn post(
        &self,
        bytes: Vec<u8>,
        method: Option<&str>,
        name: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut request = self
            .client
            .request(Method::POST, self.url.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        if let Some(session) = &state.session {
            request = request.header(SESSION_ID, session.clone());
        }
        // `initialize` goes without a version: it is the one that settles it.
        if let Some(version) = state.version
            && method != Some("initialize")
        {
            request = request.header(PROTOCOL_VERSION, version);
        }
        if state.stateless {
            if let Some(method) = method {
                request = request.header("mcp-method", method);
            }
            if let Some(name) = name.filter(|_| {
                matches!(
                    method,
                    Some("tools/call" | "prompts/get" | "resources/read")
                )
            }) {
                request = request.header("mcp-name", name);
            }
        }
        request.body(bytes)
    }

    fn deliver(&self, inbound: Inbound) {
        let _ = self.inbox.send(inbound);
    }

    /// Reads the response to the request `id`: its answer, and whatever comes before it.
    async fn exchange(self: Arc<Self>, id: i64, method: String, response: Response) {
        let status = response.status();
        if method == "initialize"
            && let Some(session) = response.headers().get(SESSION_ID)
        {
            self.state.lock().unwrap_or_else(|e| e.into_inner()).session = Some(session.clone());
        }
        if !status.is_success() {
            let failure = self.refusal(id, response).await;
            if let Some(failure) = failure {
                self.deliver(Inbound::Failed {
                    id,
                    reason: failure,
                });
            }
            return;
        }
        if status == StatusCode::ACCEPTED {
            self.deliver(Inbound::Failed {
                id,
                reason: Failure::Protocol("202 Accepted, with no answer, for a request".to_owned()),
            });
            return;
        }
        let kind = content_type(&response);
        let ended = if kind.starts_with("text/event-stream") {
            self.events(response, &mut None, Some(id)).await
        } else if kind.starts_with("application/json") {
            match response.bytes().await {
                Ok(body) => {
                    self.deliver(Inbound::Message {
                        bytes: body.to_vec(),
                        related: Some(id),
                    });
                    return;
                }
                Err(error) => format!("the response broke off: {error}"),
            }
        } else {
            self.deliver(Inbound::Failed {
                id,
                reason: Failure::Protocol(format!("a response of type `{kind}`")),
            });
            return;
        };
        // An answer already delivered makes this a no-op: the request is no longer waiting.
        self.deliver(Inbound::Failed {
            id,
            reason: Failure::Closed(ended),
        });
    }

    /// What an HTTP error says: a JSON-RPC error in its body is delivered as the answer to
    /// `id`; anything else is the failure returned.
    async fn refusal(&self, id: i64, response: Response) -> Option<Failure> {
        let status = response.status();
        let body = response.bytes().await.unwrap_or_default();
        if let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(&body)
            && message.contains_key("error")
        {
            message.insert("id".to_owned(), Value::from(id));
            message.insert("jsonrpc".to_owned(), Value::from("2.0"));
            let bytes = serde_json::to_vec(&message).expect("JSON serialises");
            self.deliver(Inbound::Message {
                bytes,
                related: Some(id),
            });
            return None;
        }
        let text = String::from_utf8_lossy(&body[..body.len().min(200)])
            .trim()
            .to_owned();
        let said = if text.is_empty() {
            String::new()
        } else {
            format!(": {text}")
        };
        Some(match status {
            // A session the server forgot is over for every request: the connection ends.
            StatusCode::NOT_FOUND if self.has_session() => {
                let reason = format!("the session is over (404 Not Found{said})");
                self.deliver(Inbound::Ended(reason.clone()));
                Failure::Closed(reason)
            }
            _ => Failure::Protocol(format!("HTTP {status}{said}")),
        })
    }

    fn has_session(&self) -> bool {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .session
            .is_some()
    }

    /// Delivers every event of an event stream, the response to our request `related` if it is
    /// one; how the stream ended. `last` keeps the id of the last event that had one.
    async fn events(
        &self,
        response: Response,
        last: &mut Option<String>,
        related: Option<i64>,
    ) -> String {
        let mut events = response.bytes_stream().eventsource();
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => {
                    if !event.id.is_empty() {
                        *last = Some(event.id);
                    }
                    if !event.data.trim().is_empty() {
                        self.deliver(Inbound::Message {
                            bytes: event.data.into_bytes(),
                            related,
                        });
                    }
                }
                Err(error) => return format!("the event stream broke off: {error}"),
            }
        }
        "the event stream ended before the answer".to_owned()
    }

    /// Reads the session's GET stream, reopening it when it ends, until the server says it
    /// offers none (405) or the session is over.
    async fn listen(self: Arc<Self>) {
        let mut last: Option<String> = None;
        let mut backoff = Duration::from_millis(250);
        loop {
            let mut request = {
                let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                let mut request = self
                    .client
                    .get(self.url.clone())
                    .headers(self.headers.clone())
                    .header(ACCEPT, "text/event-stream");
                if let Some(session) = &state.session {
                    request = request.header(SESSION_ID, session.clone());
                }
                if let Some(version) = state.version {
                    request = request.header(PROTOCOL_VERSION, version);
                }
                request
            };
            if let Some(last) = &last {
                request = request.header(LAST_EVENT_ID, last.as_str());
            }
            match request.send().await {
                Ok(response) if response.status().is_success() => {
                    backoff = Duration::from_millis(250);
                    let ended = self.events(response, &mut last, None).await;
                    tracing::debug!(target: "toolwright::client", server = %self.name, "its GET stream: {ended}");
                }
                Ok(response)
                    if matches!(
                        response.status(),
                        StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_FOUND
                    ) =>
                {
                    return;
                }
                Ok(response) => tracing::debug!(
                    target: "toolwright::client",
                    server = %self.name,
                    "its GET stream refused: {}", response.status()
                ),
                Err(error) => tracing::debug!(
                    target: "toolwright::client",
                    server = %self.name,
                    "its GET stream failed: {error}"
                ),
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

fn content_type(response: &Response) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

impl Link for Http {
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            match message.kind {
                OutgoingKind::Request { id, method, name } => {
                    let shared = Arc::clone(&self.shared);
                    let post = shared.post(message.bytes, Some(&method), name.as_deref());
                    let exchanges = Arc::clone(&self.exchanges);
                    let task = tokio::spawn(async move {
                        match post.send().await {
                            Ok(response) => {
                                Arc::clone(&shared).exchange(id, method, response).await
                            }
                            Err(error) => shared.deliver(Inbound::Failed {
                                id,
                                reason: Failure::Closed(format!("the POST failed: {error}")),
                            }),
                        }
                        exchanges
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .remove(&id);
                    });
                    self.exchanges
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(id, task.abort_handle());
                    Ok(())
                }
                kind => {
                    let method = match &kind {
                        OutgoingKind::Notification { method } => Some(method.as_str()),
                        _ => None,
                    };
                    let response = self
                        .shared
                        .post(message.bytes, method, None)
                        .send()
                        .await
                        .map_err(|error| format!("the POST failed: {error}"))?;
                    if !response.status().is_success() {
                        return Err(format!("HTTP {}", response.status()));
                    }
                    if method == Some("notifications/initialized") {
                        let listening = tokio::spawn(Arc::clone(&self.shared).listen());
                        *self.listening.lock().unwrap_or_else(|e| e.into_inner()) =
                            Some(listening.abort_handle());
                    }
                    Ok(())
                }
            }
        })
    }

    fn abandon(&self, id: i64) {
        let stateless = self
            .shared
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .stateless;
        if stateless
            && let Some(task) = self
                .exchanges
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id)
        {
            task.abort();
        }
    }

    fn settled(&self, version: &'static str, stateless: bool) {
        let mut state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        state.version = Some(version);
        state.stateless = stateless;
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.stop_tasks();
            let session = self
                .shared
                .state
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .session
                .take();
            if let Some(session) = session {
                let delete = self
                    .shared
                    .client
                    .delete(self.shared.url.clone())
                    .headers(self.shared.headers.clone())
                    .header(SESSION_ID, session)
                    .send();
                let _ = tokio::time::timeout(Duration::from_secs(5), delete).await;
            }
            self.shared.deliver(Inbound::Ended(
                "the client closed the connection".to_owned(),
            ));
        })
    }
}

impl Http {
    /// Stops the session's GET stream and every request's exchange.
    fn stop_tasks(&self) {
        let listening = self
            .listening
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(listening) = listening {
            listening.abort();
        }
        for (_, task) in self
            .exchanges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
        {
            task.abort();
        }
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        self.stop_tasks();
    }
}
