//! Requests the server sends to the client (`sampling/createMessage`, `elicitation/create`):
//! numbering them, and routing each response back to the call that waits for it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::protocol::jsonrpc::Id;
use crate::sink::Sink;

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Why a request to the client ([`Context::create_message`](super::Context::create_message),
/// [`Context::elicit`](super::Context::elicit)) got no
/// result.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientRequestError {
    /// The context is connected to no client ([`Context::detached`](super::Context::detached)).
    #[error("no client is connected: a detached context cannot send `{method}`")]
    NotConnected {
        /// The request's method.
        method: &'static str,
    },
    /// The client did not declare the capability the request needs, so it may not be sent.
    #[error(
        "the client did not declare the `{capability}` capability, so `{method}` cannot be sent \
         to it"
    )]
    MissingCapability {
        /// The capability, as `initialize` names it: `sampling`, `elicitation`.
        capability: &'static str,
        /// The request's method.
        method: &'static str,
    },
    /// Under protocol 2026-07-28, the question is asked of the client in the call's answer (an
    /// input-required result), and the call runs again with the answer: this run is over. Only
    /// a question asked from another thread than the call's sees it; the call's own stops at
    /// the question.
    #[error(
        "`{method}` is asked of the client in the call's answer (protocol 2026-07-28), and the \
         call runs again with the answer"
    )]
    Asked {
        /// The request's method.
        method: &'static str,
    },
    /// The client answered with an error.
    #[error("the client answered with error {code}: {message}")]
    Client {
        /// The JSON-RPC error code.
        code: i64,
        /// The client's message.
        message: String,
        /// The error's `data`, if any.
        data: Option<Value>,
    },
    /// The client did not answer in time (see `Server::client_request_timeout`); the request
    /// was withdrawn.
    #[error("the client did not answer within {0:?}")]
    Timeout(Duration),
    /// The call was cancelled while it waited; the request was withdrawn.
    #[error("the call was cancelled while it waited for the client")]
    Cancelled,
    /// The connection closed or the session ended before the client answered.
    #[error("the client went away before it answered")]
    Disconnected,
    /// The client's result is not what the method returns.
    #[error("the client's result is not what `{method}` returns: {problem}")]
    InvalidResult {
        /// The request's method.
        method: &'static str,
        /// What is wrong with it.
        problem: String,
    },
}

/// How a request of ours was resolved: the client's result, or its error.
pub(crate) type Resolution = Result<Value, ClientRequestError>;

/// One session's requests to the client that await their answer.
pub(crate) struct ClientRequests {
    /// What each request's id starts with: `tw-`, and the name of the process that sent it
    /// when several serve one session, so that an answer reaching another finds its way.
    prefix: String,
    next: AtomicU64,
    state: Mutex<Outstanding>,
}

struct Outstanding {
    /// By request id: where its answer goes.
    waiting: HashMap<String, oneshot::Sender<Resolution>>,
    /// The client is gone: no request is sent, none is answered.
    closed: bool,
}

impl ClientRequests {
    pub(crate) fn new() -> ClientRequests {
        ClientRequests::with_prefix("tw-".to_owned())
    }

    /// Requests whose ids start with `prefix`.
    pub(crate) fn with_prefix(prefix: String) -> ClientRequests {
        ClientRequests {
            prefix,
            next: AtomicU64::new(1),
            state: Mutex::new(Outstanding {
                waiting: HashMap::new(),
                closed: false,
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, Outstanding> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends a request on `sink` and waits for the client's answer, until `timeout` passes or
    /// `cancellation` fires. Either of those, or dropping the future, withdraws the request and
    /// tells the client so (`notifications/cancelled`).
    pub(crate) async fn send(
        &self,
        sink: &Sink,
        method: &str,
        params: Value,
        timeout: Duration,
        cancellation: &CancellationToken,
    ) -> Resolution {
        if cancellation.is_cancelled() {
            return Err(ClientRequestError::Cancelled);
        }
        // Ids of our own, unlike any a client would reuse for its requests.
        let id = format!(
            "{}{}",
            self.prefix,
            self.next.fetch_add(1, Ordering::Relaxed)
        );
        let (answer, answered) = oneshot::channel();
        {
            let mut state = self.state();
            if state.closed {
                return Err(ClientRequestError::Disconnected);
            }
            state.waiting.insert(id.clone(), answer);
        }
        let _pending = Pending {
            requests: self,
            sink,
            id: &id,
        };
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let bytes = serde_json::to_vec(&request).expect("a JSON value serialises");
        if sink.send(bytes).is_err() {
            return Err(ClientRequestError::Disconnected);
        }
        tracing::debug!(request = %id, method, "request sent to the client");
        tokio::select! {
            answer = answered => answer.unwrap_or(Err(ClientRequestError::Disconnected)),
            () = cancellation.cancelled() => Err(ClientRequestError::Cancelled),
            () = tokio::time::sleep(timeout) => Err(ClientRequestError::Timeout(timeout)),
        }
    }

    /// Hands the client's answer to the call waiting for it. An answer nobody waits for (a
    /// withdrawn request, an id that is not ours) is dropped.
    pub(crate) fn resolve(&self, id: &Id, answer: Resolution) {
        let waiting = id.as_str().and_then(|id| self.state().waiting.remove(id));
        match waiting {
            Some(waiting) => {
                let _ = waiting.send(answer);
            }
            None => tracing::debug!(response = %id, "response to no pending request dropped"),
        }
    }

    /// The client is gone: requests waiting fail, and new ones are not sent.
    pub(crate) fn close(&self) {
        let mut state = self.state();
        state.closed = true;
        // Dropping the senders wakes the waiting calls.
        state.waiting.clear();
    }
}

/// A request sent and not yet answered. Dropped before its answer (the call was cancelled or
/// timed out, or its future dropped), it withdraws the request.
struct Pending<'a> {
    requests: &'a ClientRequests,
    sink: &'a Sink,
    id: &'a str,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        // Still waiting: nobody answered it, nor closed the session.
        let withdrawn = self.requests.state().waiting.remove(self.id).is_some();
        if withdrawn {
            // The client may stop working on it; a late answer is dropped by `resolve`.
            let cancelled = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": { "requestId": self.id, "reason": "the tool call no longer waits for it" },
            });
            let _ = self
                .sink
                .send(serde_json::to_vec(&cancelled).expect("a JSON value serialises"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_reach_the_request_with_their_id() {
        let requests = ClientRequests::new();
        let (sink, mut sent) = crate::sink::channel();
        let never = CancellationToken::new();
        let call = requests.send(&sink, "ping", json!({}), Duration::from_secs(5), &never);
        let answer = async {
            let request: Value = serde_json::from_slice(&sent.recv().await.unwrap()).unwrap();
            assert_eq!(request["id"], "tw-1");
            requests.resolve(&Id::String("tw-2".into()), Ok(json!("wrong")));
            requests.resolve(&Id::String("tw-1".into()), Ok(json!({"ok": true})));
        };
        let (answer, ()) = tokio::join!(call, answer);
        assert_eq!(answer.unwrap(), json!({"ok": true}));
        assert!(
            sent.try_recv().is_none(),
            "an answered request is not withdrawn"
        );
    }

    #[tokio::test]
    async fn a_timed_out_request_is_withdrawn() {
        let requests = ClientRequests::new();
        let (sink, mut sent) = crate::sink::channel();
        let never = CancellationToken::new();
        let answer = requests
            .send(&sink, "ping", json!({}), Duration::from_millis(10), &never)
            .await;
        assert!(matches!(answer, Err(ClientRequestError::Timeout(_))));
        let _request = sent.recv().await.unwrap();
        let cancelled: Value = serde_json::from_slice(&sent.recv().await.unwrap()).unwrap();
        assert_eq!(cancelled["method"], "notifications/cancelled");
        assert_eq!(cancelled["params"]["requestId"], "tw-1");
        assert!(requests.state().waiting.is_empty());
    }

    #[tokio::test]
    async fn closing_fails_waiting_and_later_requests() {
        let requests = ClientRequests::new();
        let (sink, _sent) = crate::sink::channel();
        let never = CancellationToken::new();
        let call = requests.send(&sink, "ping", json!({}), Duration::from_secs(5), &never);
        let close = async {
            tokio::task::yield_now().await;
            requests.close();
        };
        let (answer, ()) = tokio::join!(call, close);
        assert!(matches!(answer, Err(ClientRequestError::Disconnected)));
        let answer = requests
            .send(&sink, "ping", json!({}), Duration::from_secs(5), &never)
            .await;
        assert!(matches!(answer, Err(ClientRequestError::Disconnected)));
    }
}
