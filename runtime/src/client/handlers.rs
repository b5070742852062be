//! What the client does with what the server sends unasked: its requests (sampling,
//! elicitation, roots, ping), answered by the handlers the client was built with, and its
//! notifications, delivered to one callback; and a request's progress.

use std::sync::Arc;

use serde_json::Value;

use crate::answers::RpcError;
use crate::protocol::LogLevel;
use futures_util::future::BoxFuture;

/// Answers one kind of the server's requests: its `params` in, the result out.
pub(crate) type RequestHandler =
    Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value, RpcError>> + Send + Sync>;

/// Answers the server's requests made for one request of the client's: their method and
/// `params` in, the result out.
pub(crate) type Answerer =
    Arc<dyn Fn(String, Value) -> BoxFuture<'static, Result<Value, RpcError>> + Send + Sync>;

/// Takes a request's progress.
pub(crate) type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// Takes the server's notifications.
pub(crate) type NotificationFn = Arc<dyn Fn(Notification) + Send + Sync>;

/// The handlers a client was built with.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) sampling: Option<RequestHandler>,
    pub(crate) elicitation: Option<RequestHandler>,
    pub(crate) roots: Option<RequestHandler>,
    pub(crate) notification: Option<NotificationFn>,
}

impl Handlers {
    /// The handler of the server's request `method`, if the client answers it.
    pub(crate) fn for_request(&self, method: &str) -> Option<RequestHandler> {
        match method {
            "ping" => Some(Arc::new(|_| {
                Box::pin(async { Ok(Value::Object(Default::default())) })
            })),
            "sampling/createMessage" => self.sampling.clone(),
            "elicitation/create" => self.elicitation.clone(),
            "roots/list" => self.roots.clone(),
            _ => None,
        }
    }

    /// Delivers a notification to the callback, if there is one.
    pub(crate) fn notify(&self, notification: Notification) {
        if let Some(callback) = &self.notification {
            callback(notification);
        }
    }

    /// The capabilities a client with these handlers declares.
    pub(crate) fn capabilities(&self) -> Value {
        let mut capabilities = serde_json::Map::new();
        if self.sampling.is_some() {
            capabilities.insert("sampling".to_owned(), Value::Object(Default::default()));
        }
        if self.elicitation.is_some() {
            capabilities.insert(
                "elicitation".to_owned(),
                serde_json::json!({"form": {}, "url": {}}),
            );
        }
        if self.roots.is_some() {
            capabilities.insert(
                "roots".to_owned(),
                serde_json::json!({"listChanged": false}),
            );
        }
        Value::Object(capabilities)
    }
}

/// A notification from the server: a log message, a list that changed, a resource updated.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Notification {
    /// Its method: `notifications/message`, `notifications/tools/list_changed`, ...
    pub method: String,
    /// Its `params`, as the server sent them.
    pub params: Value,
}

/// Takes a request's log messages.
pub(crate) type LogFn = Arc<dyn Fn(LogMessage) + Send + Sync>;

/// A log message the server sent (`notifications/message`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LogMessage {
    /// How grave it is; `info` when the server gave no level this client knows.
    pub level: LogLevel,
    /// Who logged it, if the server says.
    pub logger: Option<String>,
    /// What was logged: any JSON value, as sent.
    pub data: Value,
}

impl LogMessage {
    pub(crate) fn read(params: &Value) -> LogMessage {
        LogMessage {
            level: params
                .get("level")
                .cloned()
                .and_then(|level| serde_json::from_value(level).ok())
                .unwrap_or(LogLevel::Info),
            logger: params
                .get("logger")
                .and_then(Value::as_str)
                .map(str::to_owned),
            data: params.get("data").cloned().unwrap_or(Value::Null),
        }
    }
}

/// How far a request has come, as the server reports it (`notifications/progress`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// The progress so far: it only grows.
    pub progress: f64,
    /// The total, if the server knows it.
    pub total: Option<f64>,
    /// What is being done, in words.
    pub message: Option<String>,
}

impl Progress {
    pub(crate) fn read(params: &Value) -> Progress {
        Progress {
            progress: params
                .get("progress")
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
            total: params.get("total").and_then(Value::as_f64),
            message: params
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    }
}
