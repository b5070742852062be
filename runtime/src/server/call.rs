//! `tools/call`: which tool a call runs (by name, or through the progressive catalog's
//! meta-tools), its arguments checked, the tool run on its own task with panics caught, and what
//! it produced shaped into a `CallToolResult`.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::FutureExt as _;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::live::ServerHandle;
use super::service::{Sink, Step};
use super::session::Session;
use crate::apps;
use crate::catalog::{CALL_TOOL, Progressive, SEARCH_TOOL};
use crate::content::ToolResult;
use crate::context::{Context, Peer};
use crate::handler::{Handler, Output};
use crate::protocol::jsonrpc::{
    self, INVALID_PARAMS, INVALID_REQUEST, Id, MISSING_CLIENT_CAPABILITY,
};
use crate::protocol::{Client, Wire};
use crate::registry::{Registry, Tool};
use crate::schema::check::problem_list;
use crate::state::States;

/// What running tools needs, set up once at start.
pub(super) struct Calls {
    registry: Arc<Registry>,
    /// The application state tools take.
    states: Arc<States>,
    /// The progressive catalog's search, in that mode.
    progressive: Option<Progressive>,
    /// How long a call waits for the client to answer a request of its own.
    client_request_timeout: Duration,
    /// Which tools are disabled, and the handle tools reach the server by.
    server: ServerHandle,
}

/// Who a call answers to: the log level its messages must pass, what the client declared, and
/// the protocol version it speaks.
pub(super) struct Caller {
    pub(super) log_level: Arc<AtomicU8>,
    pub(super) client: Client,
    pub(super) protocol_version: &'static str,
}

/// Why a `tools/call` does not run a tool.
enum NotRun {
    /// A malformed request or an unknown tool: a JSON-RPC error.
    Protocol(String),
    /// A tool for MCP Apps views, called by a client that did not declare the extension: -32602,
    /// or in 2026-07-28 the error that names a missing client capability.
    Capability(String),
    /// An answer for the model: the progressive catalog's search, or a `call_tool` that cannot
    /// run what it names.
    Answered(ToolResult),
}

impl Calls {
    pub(super) fn new(
        registry: Arc<Registry>,
        states: Arc<States>,
        progressive: Option<Progressive>,
        client_request_timeout: Duration,
        server: ServerHandle,
    ) -> Calls {
        Calls {
            registry,
            states,
            progressive,
            client_request_timeout,
            server,
        }
    }

    /// The progressive catalog, in that mode.
    pub(super) fn progressive(&self) -> Option<&Progressive> {
        self.progressive.as_ref()
    }

    /// Handles a `tools/call`: an answer at once for a call that runs nothing, or the call to
    /// run alongside other messages.
    pub(super) fn call(
        &self,
        session: &Arc<Session>,
        id: Id,
        mut params: Value,
        sink: &Sink,
        wire: Wire,
        caller: Caller,
    ) -> Step {
        let (tool, arguments) = match self.resolve(&mut params, caller.client.has_apps()) {
            Ok(found) => found,
            Err(NotRun::Protocol(message)) => {
                return Step::Reply(jsonrpc::error(&id, INVALID_PARAMS, &message));
            }
            Err(NotRun::Capability(message)) => {
                let code = match wire {
                    Wire::Handshake => INVALID_PARAMS,
                    Wire::Stateless { .. } => MISSING_CLIENT_CAPABILITY,
                };
                return Step::Reply(jsonrpc::error(&id, code, &message));
            }
            Err(NotRun::Answered(result)) => {
                let result = serde_json::to_value(result).expect("a tool result serialises");
                return Step::Reply(jsonrpc::result(&id, &wire.shape(result)));
            }
        };
        let name = tool.wire_name();
        if let Err(problems) = tool.check_arguments(&arguments) {
            let text = problem_list(&format!("invalid arguments for tool `{name}`"), &problems);
            let result = serde_json::to_value(ToolResult::error(text)).expect("serialises");
            return Step::Reply(jsonrpc::result(&id, &wire.shape(result)));
        }

        let key = id.to_string();
        let cancellation = CancellationToken::new();
        if !session.start_call(&key, &cancellation) {
            return Step::Reply(jsonrpc::error(
                &id,
                INVALID_REQUEST,
                &format!("request id {id} is already in use by a call under way"),
            ));
        }
        let peer = Peer {
            outgoing: sink.clone(),
            log_level: caller.log_level,
            client_capabilities: caller.client.capabilities,
            client_info: caller.client.info,
            requests: Arc::clone(session.requests()),
            request_timeout: self.client_request_timeout,
            protocol_version: caller.protocol_version,
            stateless: wire.is_stateless(),
            session_id: session.id(),
            // 2026-07-28 has no sessions: each request's session ends with it.
            session: (!wire.is_stateless()).then(|| Arc::clone(session.state())),
            refused_capability: OnceLock::new(),
        };
        let progress_token = params.pointer("/_meta/progressToken").cloned();
        let ctx = Context::new(
            tool.name(),
            progress_token,
            cancellation.clone(),
            Some(peer),
            Arc::clone(&self.states),
        )
        .with_server(self.server.clone());
        // Kept to read, once the tool has returned, what its requests to the client met.
        let called = ctx.clone();
        let registry = Arc::clone(&self.registry);
        let session = Arc::clone(session);
        let wire_name = name.to_owned();
        Step::Call(Box::pin(async move {
            let tool = registry
                .get(&wire_name)
                .expect("the registry does not change while serving");
            // Cancellation first: a tool that notices it and returns sends no response either.
            let outcome = tokio::select! {
                biased;
                () = cancellation.cancelled() => None,
                result = run(tool, arguments, ctx) => Some(result),
            };
            session.end_call(&key);
            outcome.map(|result| match called.refused_capability() {
                Some(capability) if wire.is_stateless() && result["isError"] == true => {
                    missing_capability(&id, &wire_name, capability)
                }
                _ => jsonrpc::result(&id, &wire.shape(result)),
            })
        }))
    }

    /// The tool a `tools/call` runs, and its arguments: the named tool, or in progressive mode
    /// the tool `call_tool` names. `search_tools` answers here, at once.
    fn resolve(&self, params: &mut Value, apps: bool) -> Result<(&Tool, Value), NotRun> {
        let arguments = params.get_mut("arguments").map(Value::take);
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(NotRun::Protocol(
                "`tools/call` needs a `name` string".to_owned(),
            ));
        };
        let arguments = match arguments {
            None | Some(Value::Null) => Value::Object(Default::default()),
            Some(args @ Value::Object(_)) => args,
            Some(_) => {
                return Err(NotRun::Protocol("`arguments` must be an object".to_owned()));
            }
        };
        // A view-only tool is called by the host for one of the server's views: never through
        // the catalog, which is the model's way in, nor by a client that has no views.
        let for_views = |tool: &Tool| {
            format!(
                "tool `{}` is called only by this server's MCP Apps views (its visibility is \
                 [\"app\"]), ",
                tool.wire_name()
            )
        };
        let direct = |tool: &'_ Tool| {
            if tool.is_app_only() && !apps {
                Err(NotRun::Capability(format!(
                    "{}and this client has not declared the extension \
                     (`capabilities.extensions[\"{}\"]`)",
                    for_views(tool),
                    apps::EXTENSION_ID
                )))
            } else {
                Ok(())
            }
        };
        let disabled = self.server.live().disabled();
        // A disabled tool is unknown until it is enabled again.
        let get = |name: &str| {
            self.registry
                .get(name)
                .filter(|_| !disabled.tools.contains(name))
        };
        let Some(progressive) = &self.progressive else {
            return match get(name) {
                Some(tool) => direct(tool).map(|()| (tool, arguments)),
                None => Err(NotRun::Protocol(format!("unknown tool `{name}`"))),
            };
        };
        let unknown = |name: &str| {
            format!("unknown tool `{name}`: `{SEARCH_TOOL}` finds the tools this server has")
        };
        match name {
            SEARCH_TOOL => Err(NotRun::Answered(
                progressive.search(arguments, &disabled.tools),
            )),
            CALL_TOOL => {
                let (name, arguments) = progressive
                    .unwrap_call(arguments)
                    .map_err(NotRun::Answered)?;
                match get(&name) {
                    Some(tool) if tool.is_app_only() => Err(NotRun::Answered(ToolResult::error(
                        format!("{}not through `{CALL_TOOL}`", for_views(tool)),
                    ))),
                    Some(tool) => Ok((tool, arguments)),
                    None => Err(NotRun::Answered(ToolResult::error(unknown(&name)))),
                }
            }
            name => match get(name) {
                Some(tool) => direct(tool).map(|()| (tool, arguments)),
                None => Err(NotRun::Protocol(unknown(name))),
            },
        }
    }
}

/// The answer, in 2026-07-28, to a call that failed after the tool asked the client for what
/// needs a capability the client did not declare.
fn missing_capability(id: &Id, tool: &str, capability: &str) -> Vec<u8> {
    jsonrpc::error_with_data(
        id,
        MISSING_CLIENT_CAPABILITY,
        &format!(
            "tool `{tool}` needs the client's `{capability}` capability, which this request's \
             `io.modelcontextprotocol/clientCapabilities` does not declare"
        ),
        &json!({ "requiredCapabilities": { capability: {} } }),
    )
}

/// Runs the tool, catching a panic, and shapes what it produced into a `CallToolResult`. The
/// call is already a task of its own; dropping this future (the call was cancelled) drops the
/// tool's future with it.
async fn run(tool: &Tool, arguments: Value, ctx: Context) -> Value {
    let caught = match tool.handler() {
        Handler::Async(handler) => {
            AssertUnwindSafe(handler(arguments, ctx))
                .catch_unwind()
                .await
        }
        Handler::Sync(handler) => panic::catch_unwind(AssertUnwindSafe(|| handler(arguments, ctx))),
        Handler::Blocking(handler) => {
            match tokio::task::spawn_blocking(move || handler(arguments, ctx)).await {
                Ok(output) => Ok(output),
                Err(err) if err.is_panic() => Err(err.into_panic()),
                Err(_) => Ok(Output::Error(format!(
                    "tool `{}` was stopped before it finished",
                    tool.name()
                ))),
            }
        }
    };
    let output = caught.unwrap_or_else(|payload| {
        let message = panic_message(&*payload);
        tracing::error!(tool = tool.name(), message, "tool panicked");
        Output::Error(format!("tool `{}` panicked: {message}", tool.name()))
    });
    call_result(tool, output)
}

pub(super) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// The `CallToolResult` for what a tool produced.
fn call_result(tool: &Tool, output: Output) -> Value {
    let result = match output {
        Output::Value(value) if tool.is_structured() => {
            let text = serde_json::to_string(&value).expect("a JSON value serialises");
            ToolResult::text(text).with_structured(value)
        }
        Output::Value(Value::String(text)) => ToolResult::text(text),
        Output::Value(value) => {
            ToolResult::text(serde_json::to_string(&value).expect("a JSON value serialises"))
        }
        Output::Result(result) => result,
        Output::Empty => ToolResult::new(),
        Output::Error(message) => ToolResult::error(message),
    };
    let result = match tool.check_output(&result) {
        Ok(()) => result,
        Err(problems) => {
            // Sending it would break the contract the tool lists; a tool error says why instead.
            tracing::error!(
                tool = tool.name(),
                problems,
                "a result does not match the tool's output schema; sent as a tool error (debug \
                 builds with the `validate` feature check this)"
            );
            ToolResult::error(problem_list(
                &format!(
                    "tool `{}` returned a result that does not match its output schema",
                    tool.name()
                ),
                &problems,
            ))
        }
    };
    serde_json::to_value(result).expect("a tool result serialises")
}
