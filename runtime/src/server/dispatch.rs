//! Pure dispatch: one message in, what to answer out. Knows nothing of pipes or sockets.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::jsonrpc::{self, INVALID_PARAMS, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND};
use crate::context::{Context, Peer};
use crate::registry::{Registry, Tool};
use crate::tool::{BoxFuture, Handler, Output, Produced};
use crate::{LogLevel, ToolResult};

/// Protocol versions of the handshake era, newest first.
pub(crate) const PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// What a server knows that does not change while it runs.
pub(crate) struct Dispatcher {
    pub(crate) registry: Registry,
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
}

/// Where the messages a call sends while it runs (progress, log messages) go: the connection's
/// writer on stdio, the request's own stream over HTTP.
pub(crate) type Sink = UnboundedSender<Vec<u8>>;

/// One client connection's state.
pub(crate) struct Session {
    phase: Mutex<Phase>,
    log_level: Arc<AtomicU8>,
    /// Calls under way, by request id, so that `notifications/cancelled` can reach them.
    in_flight: Mutex<HashMap<String, CancellationToken>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    New,
    Initialized { version: &'static str },
}

/// What to do with one message.
pub(crate) enum Step {
    /// Send this now.
    Reply(Vec<u8>),
    /// Nothing to send (a notification).
    Nothing,
    /// A tool call: run it alongside other messages; it yields its response, or nothing when
    /// the client cancelled it.
    Call(BoxFuture<Option<Vec<u8>>>),
}

impl Session {
    /// A new session, before `initialize`.
    pub(crate) fn new() -> Session {
        Session {
            phase: Mutex::new(Phase::New),
            log_level: Arc::new(AtomicU8::new(LogLevel::Info as u8)),
            in_flight: Mutex::new(HashMap::new()),
        }
    }

    fn phase(&self) -> MutexGuard<'_, Phase> {
        self.phase.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn in_flight(&self) -> MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Dispatcher {
    /// Handles one message from the client; what a call sends while it runs goes to `sink`.
    pub(crate) fn handle(
        self: &Arc<Self>,
        session: &Arc<Session>,
        line: &[u8],
        sink: &Sink,
    ) -> Step {
        match jsonrpc::parse(line) {
            Err(reply) => Step::Reply(reply),
            Ok(Incoming::Response) => Step::Nothing,
            Ok(Incoming::Notification { method, params }) => {
                self.notification(session, &method, &params);
                Step::Nothing
            }
            Ok(Incoming::Request { id, method, params }) => {
                self.request(session, id, &method, params, sink)
            }
        }
    }

    fn notification(&self, session: &Session, method: &str, params: &Value) {
        match method {
            "notifications/cancelled" => {
                let Some(id) = params.get("requestId") else {
                    return;
                };
                // Unknown or finished calls are ignored, as the protocol asks.
                if let Some(token) = session.in_flight().get(&id.to_string()) {
                    tracing::debug!(request = %id, "call cancelled by the client");
                    token.cancel();
                }
            }
            "notifications/initialized" => {}
            other => tracing::debug!(method = other, "notification ignored"),
        }
    }

    fn request(
        self: &Arc<Self>,
        session: &Arc<Session>,
        id: Value,
        method: &str,
        params: Value,
        sink: &Sink,
    ) -> Step {
        let phase = *session.phase();
        let reply = match (method, phase) {
            ("ping", _) => jsonrpc::result(&id, &json!({})),
            ("initialize", Phase::New) => self.initialize(session, &id, &params),
            ("initialize", Phase::Initialized { .. }) => {
                jsonrpc::error(&id, INVALID_REQUEST, "the session is already initialized")
            }
            ("tools/list" | "tools/call" | "logging/setLevel", Phase::New) => jsonrpc::error(
                &id,
                INVALID_REQUEST,
                "the session is not initialized: send `initialize` first",
            ),
            ("tools/list", Phase::Initialized { .. }) => self.list_tools(&id, &params),
            ("tools/call", Phase::Initialized { .. }) => {
                return self.call_tool(session, id, params, sink);
            }
            ("logging/setLevel", Phase::Initialized { .. }) => set_level(session, &id, &params),
            ("server/discover", _) => jsonrpc::error(
                &id,
                METHOD_NOT_FOUND,
                "method `server/discover` is not supported: this server speaks the `initialize` \
                 handshake (protocol 2024-11-05 to 2025-11-25)",
            ),
            (other, _) => jsonrpc::error(
                &id,
                METHOD_NOT_FOUND,
                &format!("method `{other}` is not supported"),
            ),
        };
        Step::Reply(reply)
    }

    fn initialize(&self, session: &Session, id: &Value, params: &Value) -> Vec<u8> {
        let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
            return jsonrpc::error(
                id,
                INVALID_PARAMS,
                "`initialize` needs a `protocolVersion` string",
            );
        };
        // A version we speak is echoed; any other gets our newest, and the client decides.
        let version = PROTOCOL_VERSIONS
            .into_iter()
            .find(|v| *v == requested)
            .unwrap_or(PROTOCOL_VERSIONS[0]);
        *session.phase() = Phase::Initialized { version };
        let client = params.pointer("/clientInfo/name").and_then(Value::as_str);
        tracing::info!(client, requested, version, "session initialized");
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": { "tools": { "listChanged": false }, "logging": {} },
            "serverInfo": { "name": self.name, "version": self.version },
        });
        if let Some(instructions) = &self.instructions {
            result["instructions"] = json!(instructions);
        }
        jsonrpc::result(id, &result)
    }

    fn list_tools(&self, id: &Value, params: &Value) -> Vec<u8> {
        // Every tool fits on one page, so no cursor was ever handed out.
        if let Some(cursor) = params.get("cursor").filter(|c| !c.is_null()) {
            return jsonrpc::error(
                id,
                INVALID_PARAMS,
                &format!("invalid cursor {cursor}: this server lists every tool on one page"),
            );
        }
        jsonrpc::result_bytes(id, self.registry.manifest().as_bytes())
    }

    fn call_tool(
        self: &Arc<Self>,
        session: &Arc<Session>,
        id: Value,
        params: Value,
        sink: &Sink,
    ) -> Step {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Step::Reply(jsonrpc::error(
                &id,
                INVALID_PARAMS,
                "`tools/call` needs a `name` string",
            ));
        };
        let Some(tool) = self.registry.get(name) else {
            return Step::Reply(jsonrpc::error(
                &id,
                INVALID_PARAMS,
                &format!("unknown tool `{name}`"),
            ));
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Default::default()),
            Some(args @ Value::Object(_)) => args.clone(),
            Some(_) => {
                return Step::Reply(jsonrpc::error(
                    &id,
                    INVALID_PARAMS,
                    "`arguments` must be an object",
                ));
            }
        };
        if let Err(problems) = tool.check_arguments(&arguments) {
            let text = if problems.contains('\n') {
                format!(
                    "invalid arguments for tool `{name}`:\n- {}",
                    problems.replace('\n', "\n- ")
                )
            } else {
                format!("invalid arguments for tool `{name}`: {problems}")
            };
            let result = serde_json::to_value(ToolResult::error(text)).expect("serialises");
            return Step::Reply(jsonrpc::result(&id, &result));
        }

        let key = id.to_string();
        let cancellation = CancellationToken::new();
        {
            let mut in_flight = session.in_flight();
            if in_flight.contains_key(&key) {
                return Step::Reply(jsonrpc::error(
                    &id,
                    INVALID_REQUEST,
                    &format!("request id {id} is already in use by a call under way"),
                ));
            }
            in_flight.insert(key.clone(), cancellation.clone());
        }
        let peer = Peer {
            outgoing: sink.clone(),
            log_level: Arc::clone(&session.log_level),
        };
        let progress_token = params.pointer("/_meta/progressToken").cloned();
        let ctx = Context::new(
            tool.name(),
            progress_token,
            cancellation.clone(),
            Some(peer),
        );
        let dispatcher = Arc::clone(self);
        let session = Arc::clone(session);
        let wire_name = tool.wire_name().to_owned();
        Step::Call(Box::pin(async move {
            let tool = dispatcher
                .registry
                .get(&wire_name)
                .expect("the registry does not change while serving");
            let outcome = tokio::select! {
                result = run(tool, arguments, ctx) => Some(result),
                () = cancellation.cancelled() => None,
            };
            session.in_flight().remove(&key);
            outcome.map(|result| jsonrpc::result(&id, &result))
        }))
    }
}

fn set_level(session: &Session, id: &Value, params: &Value) -> Vec<u8> {
    match params
        .get("level")
        .and_then(Value::as_str)
        .and_then(LogLevel::from_name)
    {
        Some(level) => {
            session.log_level.store(level as u8, Ordering::Relaxed);
            jsonrpc::result(id, &json!({}))
        }
        None => jsonrpc::error(
            id,
            INVALID_PARAMS,
            "`level` must be one of `debug`, `info`, `notice`, `warning`, `error`, `critical`, \
             `alert`, `emergency`",
        ),
    }
}

/// Runs the tool on its own task, so that a panic is caught and a cancelled call is dropped, and
/// shapes what it produced into a `CallToolResult`.
async fn run(tool: &Tool, arguments: Value, ctx: Context) -> Value {
    let joined = match tool.handler() {
        Handler::Async(handler) => {
            let task = tokio::spawn(handler(arguments, ctx));
            let abort = task.abort_handle();
            // Dropping this future (the call was cancelled) aborts the tool's task too.
            let _guard = AbortOnDrop(abort);
            task.await
        }
        Handler::Blocking(handler) => {
            tokio::task::spawn_blocking(move || handler(arguments, ctx)).await
        }
    };
    let output = match joined {
        Ok(output) => output,
        Err(err) if err.is_panic() => {
            let message = panic_message(&*err.into_panic());
            tracing::error!(tool = tool.name(), message, "tool panicked");
            Output(Produced::Error(format!(
                "tool `{}` panicked: {message}",
                tool.name()
            )))
        }
        Err(_) => Output(Produced::Error(format!(
            "tool `{}` was stopped before it finished",
            tool.name()
        ))),
    };
    call_result(tool, output)
}

struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// The `CallToolResult` for what a tool produced.
pub(crate) fn call_result(tool: &Tool, output: Output) -> Value {
    let result = match output.0 {
        Produced::Value(value) if tool.is_structured() => {
            let text = serde_json::to_string(&value).expect("a JSON value serialises");
            ToolResult::text(text).with_structured(value)
        }
        Produced::Value(Value::String(text)) => ToolResult::text(text),
        Produced::Value(value) => {
            ToolResult::text(serde_json::to_string(&value).expect("a JSON value serialises"))
        }
        Produced::Result(result) => result,
        Produced::Empty => ToolResult::new(),
        Produced::Error(message) => ToolResult::error(message),
    };
    serde_json::to_value(result).expect("a tool result serialises")
}
