//! The context of one tool call: cancellation, progress and logging to the client, what the
//! client declared, and requests to it (sampling, elicitation, roots), as requests in the
//! handshake era and input-required results in 2026-07-28.

use std::fmt;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::auth::Principal;
use crate::live::ServerHandle;
use crate::protocol::{LogLevel, PROGRESS_TOKEN};
use crate::sink::Sink;
use crate::state::{SessionState, States};
use crate::tasks::{Job, Phase};
pub use ask::{CreateMessage, ElicitAction, Elicitation, Elicited, Keyed, Root, Sampled};
pub(crate) use input::{Inputs, RequestStateKey, read as read_inputs, until_asked};
pub use requests::ClientRequestError;
pub(crate) use requests::ClientRequests;

mod ask;
mod input;
mod requests;

/// The context of one tool call.
///
/// Take it as a parameter whose type is `Context` or `&Context`; the runtime supplies it and it is
/// not part of the input schema. Through it a tool learns that the call was cancelled, reports
/// progress, sends log messages, reads what the client declared
/// ([`client_capabilities`](Context::client_capabilities)), and asks the client for a completion
/// ([`create_message`](Context::create_message)) or the user for input
/// ([`elicit`](Context::elicit)).
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
    inner: Arc<Shared>,
}

struct Shared {
    tool: String,
    progress_token: Option<Value>,
    cancellation: CancellationToken,
    peer: Option<Peer>,
    /// The server's application state.
    states: Arc<States>,
    last_progress: Mutex<Option<f64>>,
    /// The server the call runs on.
    server: ServerHandle,
    /// Who called.
    who: Who,
    /// How long the call may run, and what that limit is.
    limit: Option<Limit>,
}

/// Who sent a request: the principal its access token names, and the address it came from.
#[derive(Clone, Debug, Default)]
pub(crate) struct Who {
    /// As the request's access token says, under OAuth.
    pub(crate) principal: Option<Arc<Principal>>,
    /// The peer of the connection it came on, over HTTP.
    pub(crate) address: Option<IpAddr>,
}

/// How long a call may run before it is stopped, and what sets it: the tool's or the server's
/// limit on a call, or the TTL of the task it runs as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// `#[mcp_tool(timeout = "...")]`, or [`Server::call_timeout`](crate::Server::call_timeout).
    Call(Duration),
    /// The TTL of the task it runs as, or may become.
    Task(Duration),
}

impl Limit {
    pub(crate) fn duration(self) -> Duration {
        match self {
            Limit::Call(duration) | Limit::Task(duration) => duration,
        }
    }
}

/// The way back to the client: the connection's outgoing messages and its log level, what the
/// client declared, and its session's requests awaiting an answer.
#[derive(Clone)]
pub(crate) struct Peer {
    /// Messages to the client, in order. An empty one is no message: it asks the transport to
    /// end the call's event stream there ([`Context::close_sse_stream`]); a transport without
    /// such streams drops it.
    pub(crate) outgoing: Sink,
    pub(crate) log_level: Arc<AtomicU8>,
    /// The client's `capabilities` and `clientInfo`: from `initialize`, or under protocol
    /// 2026-07-28 from the request's `_meta`.
    pub(crate) client_capabilities: Option<Arc<Value>>,
    pub(crate) client_info: Option<Arc<Value>>,
    pub(crate) requests: Arc<ClientRequests>,
    pub(crate) request_timeout: Duration,
    /// The protocol version the call speaks: the one `initialize` settled on, or 2026-07-28,
    /// which has no requests to the client.
    pub(crate) protocol_version: &'static str,
    /// Under protocol 2026-07-28, which has no requests to the client, the answers the client
    /// gave and the questions the call asks instead (input-required results).
    pub(crate) inputs: Option<Arc<Inputs>>,
    /// The session's id, where the transport names sessions (HTTP in the handshake era).
    pub(crate) session_id: Option<Arc<str>>,
    /// What the session keeps between calls; `None` in 2026-07-28, which has no sessions.
    pub(crate) session: Option<Arc<SessionState>>,
    /// The first capability a request of the call needed and the client had not declared: a
    /// call that then fails is answered, in 2026-07-28, as needing it.
    pub(crate) refused_capability: OnceLock<&'static str>,
    /// The task the call runs as, or may become (protocol 2026-07-28, where the server
    /// decides).
    pub(crate) task: Option<Arc<Job>>,
}

impl Context {
    pub(crate) fn new(
        tool: &str,
        progress_token: Option<Value>,
        cancellation: CancellationToken,
        peer: Option<Peer>,
        states: Arc<States>,
        server: ServerHandle,
        who: Who,
    ) -> Context {
        Context {
            inner: Arc::new(Shared {
                tool: tool.to_owned(),
                progress_token,
                cancellation,
                peer,
                states,
                last_progress: Mutex::new(None),
                server,
                who,
                limit: None,
            }),
        }
    }

    /// The same context, for a call that `limit` bounds: its cancellation becomes its own, a
    /// child of the call's, so that [`stop`](Context::stop) stops the tool alone, not the
    /// request or the task it answers.
    pub(crate) fn limited(mut self, limit: Option<Limit>) -> Context {
        let Some(limit) = limit else {
            return self;
        };
        let shared =
            Arc::get_mut(&mut self.inner).expect("a context is limited before it is shared");
        shared.cancellation = shared.cancellation.child_token();
        shared.limit = Some(limit);
        self
    }

    /// How long the call may run.
    pub(crate) fn limit(&self) -> Option<Limit> {
        self.inner.limit
    }

    /// Tells the tool to stop, past its limit: [`is_cancelled`](Context::is_cancelled) turns
    /// true.
    pub(crate) fn stop(&self) {
        if self.inner.limit.is_some() {
            self.inner.cancellation.cancel();
        }
    }

    /// Who called, as the request's access token says: its subject, its client, the scopes it
    /// was granted and its claims. There is one when the server checks OAuth access tokens
    /// (`http::Http::oauth`, with the `oauth` feature) and the request came over HTTP, or when a test
    /// calls as one ([`Server::test_client_as`](crate::Server::test_client_as)); none on stdio,
    /// with a shared bearer token, or with no authorization at all.
    ///
    /// ```
    /// use toolwright::{Context, mcp_tool};
    ///
    /// /// Who am I?
    /// #[mcp_tool]
    /// fn whoami(ctx: Context) -> String {
    ///     match ctx.principal().and_then(|p| p.subject()) {
    ///         Some(subject) => format!("you are {subject}"),
    ///         None => "you are anonymous".to_owned(),
    ///     }
    /// }
    /// ```
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.who.principal.as_deref()
    }

    /// The address the request came from, over HTTP: the peer of its connection, which behind a
    /// reverse proxy is the proxy's. `None` on stdio, and for a detached context.
    pub fn client_address(&self) -> Option<IpAddr> {
        self.inner.who.address
    }

    /// The server the call runs on: to tell the clients that a resource changed
    /// ([`ServerHandle::resource_updated`]), or to disable and enable tools, prompts and
    /// resources. A detached context's handle is on no server: it tells nobody.
    pub fn server(&self) -> &ServerHandle {
        &self.inner.server
    }

    /// A context connected to no client, for calling a tool function directly (in a test, say):
    /// progress and log messages go nowhere, it is never cancelled, and it has no session and no
    /// application state (pass a `State` to the function yourself).
    pub fn detached(tool: &str) -> Context {
        Context::new(
            tool,
            None,
            CancellationToken::new(),
            None,
            Arc::default(),
            ServerHandle::default(),
            Who::default(),
        )
    }

    /// The first capability a request of the call needed and the client had not declared.
    pub(crate) fn refused_capability(&self) -> Option<&'static str> {
        self.inner.peer.as_ref()?.refused_capability.get().copied()
    }

    /// The server's application state, for the `State` parameters of generated code.
    pub(crate) fn states(&self) -> &States {
        &self.inner.states
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.inner.tool
    }

    /// The id of the task the call runs as, when it runs as one (a tool with
    /// `#[mcp_tool(task = "optional")]` or `"required"`, called by a client that asked for a
    /// task, or in protocol 2026-07-28 one that declared the tasks extension): see
    /// [`tasks`](crate::tasks). `None` in a plain call.
    pub fn task_id(&self) -> Option<&str> {
        let job = self.job()?;
        (job.phase() == Phase::Task).then(|| job.id())
    }

    /// Says how the task is going, for people: the `statusMessage` the client reads with the
    /// task's status. It is written in the background (the last one set is kept, once the task
    /// ends too), so a blocking tool sets it as an async one does. Nothing happens in a plain
    /// call, or once the task has ended.
    ///
    /// ```
    /// use toolwright::{Context, mcp_tool};
    ///
    /// /// Export every note, as a task when the client asks for one.
    /// #[mcp_tool(task = "optional")]
    /// async fn export(ctx: Context) -> String {
    ///     for part in 1..=3 {
    ///         ctx.set_status_message(format!("exporting part {part} of 3"));
    ///     }
    ///     "exported".to_owned()
    /// }
    /// ```
    pub fn set_status_message(&self, message: impl Into<String>) {
        if let Some(job) = self.job() {
            job.note(message.into());
        }
    }

    /// Asks, under protocol 2026-07-28, for the task to begin only at
    /// [`start_task`](Context::start_task): the tool's questions until then are asked within the
    /// call (input-required results, the call run again with the answers), and the client gets
    /// the task once the tool starts its long part. Call it first thing in the tool, before any
    /// question. Without it, a call that may become a task becomes one as soon as it waits on
    /// anything. In the handshake era, where the client asks for the task, and in a plain call,
    /// nothing happens.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::context::{ClientRequestError, Elicitation};
    /// use toolwright::{Context, mcp_tool};
    ///
    /// /// Rebuild the index, once the user says which.
    /// #[mcp_tool(task = "required")]
    /// async fn rebuild(ctx: Context) -> Result<String, ClientRequestError> {
    ///     ctx.defer_task();
    ///     let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    ///     let answer = ctx
    ///         .keyed("index")
    ///         .elicit(Elicitation::with_schema("Which index?", form))
    ///         .await?;
    ///     ctx.start_task().await;
    ///     // The long part: the client polls the task meanwhile.
    ///     Ok(format!("rebuilt {:?}", answer.content()))
    /// }
    /// ```
    pub fn defer_task(&self) {
        if let Some(job) = self.job() {
            job.defer();
        }
    }

    /// Begins the task that [`defer_task`](Context::defer_task) put off: the client is answered
    /// with it, and the tool goes on as the task. Nothing happens when the call is already a
    /// task, or a plain call.
    pub async fn start_task(&self) {
        if let Some(job) = self.job() {
            job.start().await;
        }
    }

    fn job(&self) -> Option<&Arc<Job>> {
        self.inner.peer.as_ref()?.task.as_ref()
    }

    /// Whether the call was cancelled: by the client, or because it ran past its time limit
    /// ([`Server::call_timeout`](crate::Server::call_timeout), `#[mcp_tool(timeout = "...")]`).
    /// Its answer will not be sent, or was already, so stop when it is.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancellation.is_cancelled()
    }

    /// Completes when the call is cancelled, by the client or past its time limit.
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
        let mut params = json!({ PROGRESS_TOKEN: token, "progress": progress });
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        peer.notify("notifications/progress", params)
    }

    /// What the client declared it can do: the `capabilities` of its `initialize` request, or
    /// under protocol 2026-07-28 the request's `io.modelcontextprotocol/clientCapabilities`.
    /// `None` for a detached context.
    pub fn client_capabilities(&self) -> Option<&Value> {
        self.inner.peer.as_ref()?.client_capabilities.as_deref()
    }

    /// Whether the client shows MCP Apps views (see [`apps::client_supports`](crate::apps::client_supports)):
    /// a tool with a view may then keep its text short, since the view shows the rest. Its
    /// result must still make sense as text, which is all a model reads.
    pub fn supports_apps(&self) -> bool {
        self.client_capabilities()
            .is_some_and(crate::apps::client_supports)
    }

    /// Who the client is (`clientInfo`: `name`, `version`, ...), as it said in `initialize` or
    /// under protocol 2026-07-28 in the request's `io.modelcontextprotocol/clientInfo`, if it
    /// said.
    ///
    /// The client says it of itself, and anyone can say anything: it is for logs, statistics
    /// and working around a known client's quirks, never for deciding what a caller may do.
    pub fn client_info(&self) -> Option<&Value> {
        self.inner.peer.as_ref()?.client_info.as_deref()
    }

    /// The client's name (`clientInfo.name`: `claude-ai`, `Visual Studio Code`, ...), as it says
    /// it; see [`client_info`](Context::client_info) for what it may be trusted with.
    pub fn client_name(&self) -> Option<&str> {
        self.client_info()?.get("name")?.as_str()
    }

    /// The client's version (`clientInfo.version`), as it says it.
    pub fn client_version(&self) -> Option<&str> {
        self.client_info()?.get("version")?.as_str()
    }

    /// The protocol version the call speaks: the one `initialize` settled on (2024-11-05 to
    /// 2025-11-25), or 2026-07-28. What the client can be asked differs between them: only the
    /// handshake era has sessions and requests to the client. `None` for a detached context.
    pub fn protocol_version(&self) -> Option<&'static str> {
        Some(self.inner.peer.as_ref()?.protocol_version)
    }

    /// The session the call belongs to, by the id the HTTP transport gave it (`Mcp-Session-Id`):
    /// for correlating a session's calls in logs. `None` on stdio, whose session is the
    /// connection, and in 2026-07-28, which has no sessions.
    ///
    /// Whoever holds the id can speak for the session, so log a prefix of it, not all of it, and
    /// never take it for who the caller is.
    pub fn session_id(&self) -> Option<&str> {
        self.inner.peer.as_ref()?.session_id.as_deref()
    }

    /// What the session keeps between its calls (see [`SessionState`]): on stdio the connection,
    /// over HTTP the session `initialize` opened. `None` in 2026-07-28, which has no sessions,
    /// and for a detached context.
    pub fn session(&self) -> Option<&SessionState> {
        self.inner.peer.as_ref()?.session.as_deref()
    }

    /// The least severe log message the client lets through; `None` when it wants none (or
    /// for a detached context).
    #[cfg(feature = "gateway")]
    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        let peer = self.inner.peer.as_ref()?;
        LogLevel::stored(peer.log_level.load(Ordering::Relaxed))
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

impl Context {
    /// Ends the event stream that carries this call's answer, now, while the call goes on: the
    /// client reconnects after the stream's `retry` interval, with `Last-Event-ID`, and receives
    /// what the call sent since, its result included (SEP-1699 polling). A long call thereby
    /// holds no connection open while it works; if its answer has not begun, it begins as an
    /// event stream, which ends at once.
    ///
    /// That is over Streamable HTTP, to a client of protocol 2025-11-25, whose streams open with
    /// a priming event so that it can resume them. Anywhere else this does nothing: on stdio,
    /// under protocol 2026-07-28 (where a closed stream cancels the call), for clients of older
    /// versions, which could not resume, and for a detached context.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use toolwright::{Context, mcp_tool};
    ///
    /// /// Rebuild the search index; takes minutes.
    /// #[mcp_tool]
    /// async fn reindex(ctx: Context) -> &'static str {
    ///     // The client polls for the result instead of holding the connection.
    ///     ctx.close_sse_stream();
    ///     tokio::time::sleep(Duration::from_millis(10)).await;
    ///     "reindexed"
    /// }
    /// ```
    pub fn close_sse_stream(&self) {
        if let Some(peer) = &self.inner.peer
            && !self.is_cancelled()
        {
            let _ = peer.outgoing.send(Vec::new());
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_detached_context_has_no_client_to_ask() {
        let ctx = Context::detached("t");
        assert_eq!(ctx.client_capabilities(), None);
        assert_eq!(
            ctx.sample_text("hi", 10).await,
            Err(ClientRequestError::NotConnected {
                method: "sampling/createMessage"
            })
        );
    }
}
