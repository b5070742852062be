//! The client's end of a connection, whatever carries it: requests sent under ids of their own
//! and their answers awaited, the server's own requests answered by the handlers, and its
//! notifications delivered, progress to the request it is about.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::AbortHandle;

use super::error::Error;
use super::handlers::{Answerer, Handlers, LogFn, LogMessage, Notification, Progress, ProgressFn};
use super::link::{Failure, Inbound, Link, Outgoing, OutgoingKind};
use crate::answers::RpcError;
use crate::protocol::PROGRESS_TOKEN;
use crate::protocol::jsonrpc::{self, ErrorObject, Id, Incoming, METHOD_NOT_FOUND, Reply};

/// One connection to a server.
pub(crate) struct Peer {
    /// The server's name, in every error and log line about it.
    pub(crate) name: String,
    link: Box<dyn Link>,
    handlers: Handlers,
    next_id: AtomicI64,
    /// Our requests awaiting their answers, by id.
    waiting: Mutex<HashMap<i64, Waiting>>,
    /// The server's requests being answered, by id as JSON, so that it can cancel them.
    answering: Mutex<HashMap<String, AbortHandle>>,
    /// Why the connection ended, once it has.
    ended: watch::Sender<Option<String>>,
}

/// A request of ours, until its answer comes.
struct Waiting {
    answer: oneshot::Sender<Answer>,
    progress: Option<ProgressFn>,
    /// Answers the server's requests made for this one.
    answerer: Option<Answerer>,
    /// Takes the log messages sent for this one.
    log: Option<LogFn>,
}

/// What became of a request.
enum Answer {
    Result(Value),
    Error(ErrorObject),
    Failed(Failure),
}

/// How long a request may wait, and what to do meanwhile.
#[derive(Clone)]
pub(crate) struct Options {
    pub(crate) limit: Option<Duration>,
    pub(crate) progress: Option<ProgressFn>,
    /// The tool, prompt or resource the request names (a header over HTTP in 2026-07-28).
    pub(crate) name: Option<String>,
    /// Answers the server's requests made for this one, in place of the handlers.
    pub(crate) answerer: Option<Answerer>,
    /// Takes the log messages sent for this one, in place of the handlers.
    pub(crate) log: Option<LogFn>,
}

impl Options {
    /// A request's options with nothing but its time limit.
    pub(crate) fn limited(limit: Option<Duration>) -> Options {
        Options {
            limit,
            progress: None,
            name: None,
            answerer: None,
            log: None,
        }
    }
}

/// A request as sent, serialised in place, its members in the order a map of them writes.
#[derive(serde::Serialize)]
struct Message<'a> {
    id: i64,
    jsonrpc: &'static str,
    method: &'a str,
    params: Params<'a>,
}

/// A request's `params` as sent: its own members, and in its `_meta` the era's envelope and
/// the progress token beside its own; written from where they are, not copied into one object.
/// What the envelope and the token name overrides the request's own member of that name.
struct Params<'a> {
    params: &'a Value,
    envelope: &'a [(&'static str, Box<RawValue>)],
    progress: Option<i64>,
}

impl Serialize for Params<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.envelope.is_empty() && self.progress.is_none() {
            return self.params.serialize(serializer);
        }
        let empty = Map::new();
        let own = self.params.as_object().unwrap_or(&empty);
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in own {
            if key != "_meta" {
                map.serialize_entry(key, value)?;
            }
        }
        let meta = own
            .get("_meta")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        map.serialize_entry("_meta", &Meta { meta, params: self })?;
        map.end()
    }
}

/// The `_meta` of [`Params`].
struct Meta<'a> {
    meta: &'a Map<String, Value>,
    params: &'a Params<'a>,
}

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Params {
            envelope, progress, ..
        } = self.params;
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in *envelope {
            map.serialize_entry(key, value)?;
        }
        if let Some(token) = progress {
            map.serialize_entry(PROGRESS_TOKEN, token)?;
        }
        for (key, value) in self.meta {
            let overridden = envelope.iter().any(|(name, _)| name == key)
                || (progress.is_some() && key == PROGRESS_TOKEN);
            if !overridden {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

impl Peer {
    /// A connection to `name` over `link`, whose transport sends what it receives to the inbox
    /// `inbound` reads: read from now on, in a task of its own, for as long as the peer lives.
    pub(crate) fn start(
        name: String,
        link: Box<dyn Link>,
        handlers: Handlers,
        inbound: mpsc::UnboundedReceiver<Inbound>,
    ) -> Arc<Peer> {
        let peer = Arc::new(Peer {
            name,
            link,
            handlers,
            next_id: AtomicI64::new(0),
            waiting: Mutex::new(HashMap::new()),
            answering: Mutex::new(HashMap::new()),
            ended: watch::Sender::new(None),
        });
        tokio::spawn(pump(Arc::downgrade(&peer), inbound));
        peer
    }

    pub(crate) fn handlers(&self) -> &Handlers {
        &self.handlers
    }

    pub(crate) fn link(&self) -> &dyn Link {
        &*self.link
    }

    /// Sends the request `method` with `params`, `envelope`'s members added to its `_meta`
    /// (and the progress token, when `options` follow progress), and waits for its result.
    pub(crate) async fn request(
        self: &Arc<Self>,
        method: &str,
        params: &Value,
        envelope: &[(&'static str, Box<RawValue>)],
        options: Options,
    ) -> Result<Value, Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let params = Params {
            params,
            envelope,
            progress: options.progress.is_some().then_some(id),
        };
        let (answer, answered) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                id,
                Waiting {
                    answer,
                    progress: options.progress,
                    answerer: options.answerer,
                    log: options.log,
                },
            );
        let ended = self.ended.borrow().clone();
        if let Some(reason) = ended {
            self.forget(id);
            return Err(self.closed(method, reason));
        }
        let message = Message {
            id,
            jsonrpc: "2.0",
            method,
            params,
        };
        let outgoing = Outgoing {
            bytes: serde_json::to_vec(&message).expect("JSON serialises"),
            kind: OutgoingKind::Request {
                id,
                method: method.to_owned(),
                name: options.name,
            },
        };
        // From here, a request given up (its future dropped, or past its limit) is cancelled.
        let mut cancel = Cancel {
            peer: self,
            id,
            armed: true,
        };
        if let Err(reason) = self.link.send(outgoing).await {
            cancel.armed = false;
            self.forget(id);
            return Err(self.closed(method, reason));
        }
        let answer = match options.limit {
            Some(limit) => match tokio::time::timeout(limit, answered).await {
                Ok(answer) => answer,
                Err(_) => {
                    return Err(Error::Timeout {
                        server: self.name.clone(),
                        method: method.to_owned(),
                        limit,
                    });
                }
            },
            None => answered.await,
        };
        cancel.armed = false;
        match answer {
            Ok(Answer::Result(result)) => Ok(result),
            Ok(Answer::Error(error)) => Err(Error::Rpc {
                server: self.name.clone(),
                method: method.to_owned(),
                error: RpcError {
                    code: error.code,
                    message: error.message,
                    data: error.data,
                },
            }),
            Ok(Answer::Failed(Failure::Closed(reason))) => Err(self.closed(method, reason)),
            Ok(Answer::Failed(Failure::Protocol(reason))) => Err(Error::Protocol {
                server: self.name.clone(),
                method: method.to_owned(),
                reason,
            }),
            // The peer forgot it without an answer: the connection ended.
            Err(_) => {
                let reason = self.ended.borrow().clone();
                Err(self.closed(method, reason.unwrap_or_else(|| "it ended".to_owned())))
            }
        }
    }

    /// Completes when the connection ends: why it did.
    pub(crate) async fn ended(&self) -> String {
        let mut ended = self.ended.subscribe();
        let reason = ended
            .wait_for(Option::is_some)
            .await
            .map(|reason| reason.clone());
        // The sender lives as long as the peer, which `self` borrows.
        reason
            .ok()
            .flatten()
            .unwrap_or_else(|| "it ended".to_owned())
    }

    /// Sends the notification `method` with `params`.
    pub(crate) async fn notify(&self, method: &str, params: Value) -> Result<(), String> {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.link
            .send(Outgoing {
                bytes: serde_json::to_vec(&message).expect("JSON serialises"),
                kind: OutgoingKind::Notification {
                    method: method.to_owned(),
                },
            })
            .await
    }

    fn closed(&self, method: &str, reason: String) -> Error {
        Error::Closed {
            server: self.name.clone(),
            method: method.to_owned(),
            reason,
        }
    }

    fn forget(&self, id: i64) -> Option<Waiting> {
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
    }

    /// Takes in what the transport received.
    fn receive(self: &Arc<Self>, inbound: Inbound) {
        match inbound {
            Inbound::Message { bytes, related } => self.message(&bytes, related),
            Inbound::Failed { id, reason } => {
                if let Some(waiting) = self.forget(id) {
                    let _ = waiting.answer.send(Answer::Failed(reason));
                }
            }
            Inbound::Ended(reason) => self.end(reason),
        }
    }

    /// The connection ended for `reason`: every request waiting fails with it.
    fn end(&self, reason: String) {
        tracing::debug!(target: "toolwright::client", server = %self.name, "connection ended: {reason}");
        self.ended.send_replace(Some(reason.clone()));
        let waiting: Vec<Waiting> = self
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(_, waiting)| waiting)
            .collect();
        for waiting in waiting {
            let _ = waiting
                .answer
                .send(Answer::Failed(Failure::Closed(reason.clone())));
        }
        for (_, task) in self
            .answering
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
        {
            task.abort();
        }
    }

    fn message(self: &Arc<Self>, bytes: &[u8], related: Option<i64>) {
        match jsonrpc::parse(bytes) {
            Err(_) => {
                let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]);
                tracing::warn!(
                    target: "toolwright::client",
                    server = %self.name,
                    "a message that is not JSON-RPC, dropped: {shown}"
                );
            }
            Ok(Incoming::Response { id, outcome }) => {
                let waiting = match &id {
                    Id::Number(n) => n.as_i64().and_then(|id| self.forget(id)),
                    _ => None,
                };
                let Some(waiting) = waiting else {
                    tracing::debug!(
                        target: "toolwright::client",
                        server = %self.name,
                        "an answer to no request waiting ({id}), dropped"
                    );
                    return;
                };
                let _ = waiting.answer.send(match outcome {
                    Ok(result) => Answer::Result(result),
                    Err(error) => Answer::Error(error),
                });
            }
            Ok(Incoming::Request {
                id, method, params, ..
            }) => {
                self.answer(id, method, params, related);
            }
            Ok(Incoming::Notification { method, params }) => {
                self.notified(method, params, related);
            }
        }
    }

    fn notified(&self, method: String, params: Value, related: Option<i64>) {
        match method.as_str() {
            "notifications/message" => match self.of_waiting(related, |w| w.log.clone()) {
                Some(log) => log(LogMessage::read(&params)),
                None => self.handlers.notify(Notification { method, params }),
            },
            "notifications/progress" => {
                let token = params.get(PROGRESS_TOKEN).and_then(Value::as_i64);
                match self.of_waiting(token, |w| w.progress.clone()) {
                    Some(progress) => progress(Progress::read(&params)),
                    None => self.handlers.notify(Notification { method, params }),
                }
            }
            "notifications/cancelled" => {
                let Some(id) = params.get("requestId") else {
                    return;
                };
                let task = self
                    .answering
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id.to_string());
                if let Some(task) = task {
                    task.abort();
                }
            }
            _ => self.handlers.notify(Notification { method, params }),
        }
    }

    /// What `take` takes of our request `id` while it waits: where a notification tied to it
    /// goes.
    fn of_waiting<T>(
        &self,
        id: Option<i64>,
        take: impl FnOnce(&Waiting) -> Option<T>,
    ) -> Option<T> {
        let waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        take(waiting.get(&id?)?)
    }

    /// The answerer of the server's requests made for our request `related` (the one on whose
    /// HTTP response they came), or, when none says, for the only request waiting that has
    /// one: a request tied to none of ours goes to the handlers.
    fn answerer(&self, related: Option<i64>) -> Option<Answerer> {
        let waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        match related {
            Some(id) => waiting.get(&id)?.answerer.clone(),
            None => {
                let mut answerers = waiting.values().filter_map(|w| w.answerer.as_ref());
                let only = answerers.next()?;
                answerers.next().is_none().then(|| Arc::clone(only))
            }
        }
    }

    /// Answers the server's request `id`, made for our request `related` if it came on its
    /// HTTP response, in a task of its own, which the server may cancel.
    fn answer(self: &Arc<Self>, id: Id, method: String, params: Value, related: Option<i64>) {
        let key = id.to_string();
        let peer = Arc::downgrade(self);
        let answered = match (self.answerer(related), method.as_str()) {
            // `ping` is the client's to answer, whoever asks.
            (Some(answerer), wanted) if wanted != "ping" => Some(answerer(method.clone(), params)),
            _ => self
                .handlers
                .for_request(&method)
                .map(|handler| handler(params)),
        };
        let task_key = key.clone();
        let task = tokio::spawn(async move {
            let outcome = match answered {
                Some(answered) => answered.await,
                None => Err(RpcError {
                    code: METHOD_NOT_FOUND,
                    message: format!("this client does not answer `{method}`"),
                    data: None,
                }),
            };
            let reply = match outcome {
                Ok(result) => Reply::result(&id, &result),
                Err(error) => match &error.data {
                    Some(data) => Reply::error_with_data(&id, error.code, &error.message, data),
                    None => Reply::error(&id, error.code, &error.message),
                },
            };
            let Some(peer) = peer.upgrade() else { return };
            peer.answering
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&task_key);
            let sent = peer
                .link
                .send(Outgoing {
                    bytes: reply.into_bytes(),
                    kind: OutgoingKind::Response,
                })
                .await;
            if let Err(reason) = sent {
                tracing::debug!(
                    target: "toolwright::client",
                    server = %peer.name,
                    "an answer to its request not sent: {reason}"
                );
            }
        });
        self.answering
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, task.abort_handle());
    }
}

/// Cancels a request given up before its answer came: the server is told, and stops.
struct Cancel<'a> {
    peer: &'a Arc<Peer>,
    id: i64,
    armed: bool,
}

impl Drop for Cancel<'_> {
    fn drop(&mut self) {
        if !self.armed || self.peer.forget(self.id).is_none() {
            return;
        }
        self.peer.link.abandon(self.id);
        let peer = Arc::clone(self.peer);
        let id = self.id;
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(async move {
                let params = json!({"requestId": id, "reason": "the client gave up waiting"});
                let _ = peer.notify("notifications/cancelled", params).await;
            });
        }
    }
}

/// Hands what the transport received to the peer, for as long as it lives.
async fn pump(peer: Weak<Peer>, mut inbound: mpsc::UnboundedReceiver<Inbound>) {
    while let Some(message) = inbound.recv().await {
        let Some(peer) = peer.upgrade() else { return };
        peer.receive(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `params` a request sends.
    fn sent(
        params: Value,
        envelope: &[(&'static str, Box<RawValue>)],
        progress: Option<i64>,
    ) -> Value {
        let params = Params {
            params: &params,
            envelope,
            progress,
        };
        serde_json::to_value(params).expect("params serialise")
    }

    fn raw(value: Value) -> Box<RawValue> {
        serde_json::value::to_raw_value(&value).expect("JSON serialises")
    }

    #[test]
    fn params_are_sent_as_they_are_without_an_envelope_or_a_token() {
        let params = json!({ "name": "echo", "_meta": { "progressToken": "theirs" } });
        assert_eq!(sent(params.clone(), &[], None), params);
        assert_eq!(sent(Value::Null, &[], None), Value::Null);
    }

    #[test]
    fn the_envelope_and_the_token_join_the_requests_own_meta_and_win() {
        let envelope = [
            (
                "io.modelcontextprotocol/protocolVersion",
                raw(json!("2026-07-28")),
            ),
            (
                "io.modelcontextprotocol/clientInfo",
                raw(json!({ "name": "c" })),
            ),
        ];
        let params = json!({
            "name": "echo",
            "arguments": { "text": "hi" },
            "_meta": {
                "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "progressToken": "theirs",
                "io.modelcontextprotocol/protocolVersion": "1999-01-01",
            },
        });
        assert_eq!(
            sent(params, &envelope, Some(7)),
            json!({
                "name": "echo",
                "arguments": { "text": "hi" },
                "_meta": {
                    "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                    "progressToken": 7,
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": { "name": "c" },
                },
            })
        );
    }

    #[test]
    fn params_that_are_no_object_become_one_to_carry_the_token() {
        assert_eq!(
            sent(json!([1, 2]), &[], Some(3)),
            json!({ "_meta": { "progressToken": 3 } })
        );
        assert_eq!(
            sent(json!({ "_meta": "odd" }), &[], Some(3)),
            json!({ "_meta": { "progressToken": 3 } })
        );
    }
}
