//! The context of one tool call: cancellation, progress and logging to the client.

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// The context of one tool call.
///
/// Take it as a parameter whose type is `Context` or `&Context`; the runtime supplies it and it is
/// not part of the input schema.
///
/// ```
/// use toolwright::{Context, LogLevel, mcp_tool};
///
/// /// Count to `n`, reporting progress.
/// #[mcp_tool]
/// async fn count(ctx: Context, n: u32) -> u32 {
///     for i in 1..=n {
///         if ctx.is_cancelled() {
///             break;
///         }
///         ctx.progress(f64::from(i), Some(f64::from(n)), None);
///     }
///     ctx.log(LogLevel::Info, "counted");
///     n
/// }
/// ```
#[derive(Clone)]
pub struct Context {
    inner: Arc<Inner>,
}

struct Inner {
    tool: String,
    progress_token: Option<Value>,
    cancellation: CancellationToken,
    peer: Option<Peer>,
    last_progress: Mutex<Option<f64>>,
}

/// The way back to the client: the connection's outgoing messages and its log level.
#[derive(Clone)]
pub(crate) struct Peer {
    pub(crate) outgoing: UnboundedSender<Vec<u8>>,
    pub(crate) log_level: Arc<AtomicU8>,
}

/// A log message's severity, as the protocol (and syslog) names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The protocol's name for the level.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level with this protocol name.
    pub fn from_name(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// A threshold above every level: no log message is sent. Protocol 2026-07-28 sends log
    /// messages for a request only when its `_meta` names a level.
    pub(crate) const OFF: u8 = LogLevel::ALL.len() as u8;
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Context {
    pub(crate) fn new(
        tool: &str,
        progress_token: Option<Value>,
        cancellation: CancellationToken,
        peer: Option<Peer>,
    ) -> Context {
        Context {
            inner: Arc::new(Inner {
                tool: tool.to_owned(),
                progress_token,
                cancellation,
                peer,
                last_progress: Mutex::new(None),
            }),
        }
    }

    /// A context connected to no client, for calling a tool function directly (in a test, say):
    /// progress and log messages go nowhere and it is never cancelled.
    pub fn detached(tool: &str) -> Context {
        Context::new(tool, None, CancellationToken::new(), None)
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.inner.tool
    }

    /// Whether the client cancelled the call. Its answer will not be sent, so stop when it is.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancellation.is_cancelled()
    }

    /// Completes when the client cancels the call.
    pub async fn cancelled(&self) {
        self.inner.cancellation.cancelled().await;
    }

    /// Reports progress to the client, if it asked for progress (with a `progressToken`).
    ///
    /// `progress` must increase from one report to the next, as the protocol requires; a report
    /// that does not is dropped. Returns whether the report was sent.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let (Some(token), Some(peer)) = (&self.inner.progress_token, &self.inner.peer) else {
            return false;
        };
        if self.is_cancelled() || !progress.is_finite() {
            return false;
        }
        {
            let mut last = self
                .inner
                .last_progress
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|l| progress <= l) {
                return false;
            }
            *last = Some(progress);
        }
        let mut params = json!({ "progressToken": token, "progress": progress });
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        peer.notify("notifications/progress", params)
    }

    /// Sends a log message to the client (`notifications/message`), if the client's log level
    /// lets it through: the one set with `logging/setLevel` (`info` until then), or under
    /// protocol 2026-07-28 the one the request names in its `_meta` (none: no messages).
    /// Returns whether it was sent. `data` is any JSON: a string, or an object with details.
    pub fn log(&self, level: LogLevel, data: impl Serialize) -> bool {
        let Some(peer) = &self.inner.peer else {
            return false;
        };
        if (level as u8) < peer.log_level.load(Ordering::Relaxed) {
            return false;
        }
        let data = serde_json::to_value(data).unwrap_or_else(|err| json!(err.to_string()));
        peer.notify(
            "notifications/message",
            json!({ "level": level, "logger": self.inner.tool, "data": data }),
        )
    }
}

impl Peer {
    fn notify(&self, method: &str, params: Value) -> bool {
        let message = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        let bytes = serde_json::to_vec(&message).expect("a JSON value serialises");
        self.outgoing.send(bytes).is_ok()
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("tool", &self.inner.tool)
            .field("progress_token", &self.inner.progress_token)
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}
