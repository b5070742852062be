//! `tools/call`: which tool a call runs (by name, or through the progressive catalog's
//! meta-tools), its arguments checked, the tool run on its own task with panics caught, and what
//! it produced shaped into a `CallToolResult`.

use std::fmt;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::FutureExt as _;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::session::Session;
use super::started::Step;
use crate::apps;
use crate::auth::Principal;
use crate::catalog::{CALL_TOOL, Progressive, SEARCH_TOOL};
use crate::content::ToolResult;
use crate::context::{Context, Inputs, Peer, StateKey, read_inputs, until_asked};
use crate::handler::{Handler, Output, panic_message};
use crate::live::ServerHandle;
use crate::protocol::jsonrpc::{
    INVALID_PARAMS, INVALID_REQUEST, Id, MISSING_CLIENT_CAPABILITY, Reply,
};
use crate::protocol::{Client, Wire};
use crate::registry::{Registry, Tool};
use crate::schema::check::problem_list;
use crate::sink::{self, Answer, Sink};
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
    /// Seals the state of input-required results.
    state_key: StateKey,
}

/// One round of a request of protocol 2026-07-28 that may ask the client questions
/// (input-required results): the answers it was given, and what the next round's state is sealed
/// for.
pub(super) struct Round {
    inputs: Arc<Inputs>,
    /// `<method>:<name>`: the tool or prompt asked for.
    target: String,
    arguments: Value,
}

impl Round {
    /// The round of a request to `method` for `name` with these arguments: none in the
    /// handshake era. `Err` refuses the request (-32602): a state this server did not seal, or
    /// answers that are not an object.
    pub(super) fn read(
        key: &StateKey,
        wire: &Wire,
        params: &Value,
        method: &str,
        name: &str,
        arguments: &Value,
    ) -> Result<Option<Round>, String> {
        if !wire.is_stateless() {
            return Ok(None);
        }
        let target = format!("{method}:{name}");
        let inputs = read_inputs(key, params, &target, arguments)?;
        Ok(Some(Round {
            inputs: Arc::new(inputs),
            target,
            arguments: arguments.clone(),
        }))
    }

    /// The answers and questions, for the run's context.
    pub(super) fn inputs(&self) -> Arc<Inputs> {
        Arc::clone(&self.inputs)
    }

    /// Runs `run`, in `round` when the request has one, and answers with `reply` of what it
    /// made, or with the round's answer: the questions when the run stopped for them, the error
    /// of an answer that does not answer its question.
    pub(super) async fn answer<T>(
        round: Option<Round>,
        run: impl Future<Output = T>,
        key: &StateKey,
        id: &Id,
        wire: &Wire,
        reply: impl FnOnce(T) -> Reply,
    ) -> Reply {
        let inputs = round.as_ref().map(Round::inputs);
        let made = until_asked(run, inputs.as_deref()).await;
        if let Some(settled) = round.and_then(|r| r.settle(made.is_some(), key, id, wire)) {
            return settled;
        }
        reply(made.expect("a run is stopped only for questions, which it answers with"))
    }

    /// What the round is answered with instead of the run's result: the questions, when the
    /// run stopped for them (it did not `finish`), or the error of an answer it was given that
    /// does not answer its question. `None`: the run's result stands.
    fn settle(self, finished: bool, key: &StateKey, id: &Id, wire: &Wire) -> Option<Reply> {
        if !finished {
            let members = self.inputs.required(key, &self.target, &self.arguments);
            return Some(Reply::result(id, &wire.input_required(members)));
        }
        let problem = self.inputs.malformed()?;
        Some(Reply::error(id, INVALID_PARAMS, problem))
    }
}

/// A request run as a call of its session under its id: `notifications/cancelled` for it (or,
/// in 2026-07-28, the client closing its stream) stops it, and then no answer is sent.
pub(super) struct Registered {
    session: Arc<Session>,
    key: String,
    cancellation: CancellationToken,
}

impl Registered {
    /// Registers the request `id` of `session`; `Err` is the answer when a call under way has
    /// that id.
    pub(super) fn new(session: &Arc<Session>, id: &Id) -> Result<Registered, Reply> {
        let key = id.to_string();
        let cancellation = CancellationToken::new();
        if !session.start_call(&key, &cancellation) {
            return Err(Reply::error(
                id,
                INVALID_REQUEST,
                &format!("request id {id} is already in use by a request under way"),
            ));
        }
        Ok(Registered {
            session: Arc::clone(session),
            key,
            cancellation,
        })
    }

    /// What the run's context sees as its cancellation.
    pub(super) fn cancellation(&self) -> CancellationToken {
        self.cancellation.clone()
    }

    /// The call that makes `answer`, unless it is cancelled first. The call stays registered
    /// until its answer is taken to be written, and a cancellation read until then stops it
    /// too: the client asked for none.
    pub(super) fn run(self, answer: impl Future<Output = Reply> + Send + 'static) -> Step {
        Step::Call(Box::pin(async move {
            // Cancellation first: a run that notices it and returns sends no answer either.
            let answered = tokio::select! {
                biased;
                () = self.cancellation.cancelled() => None,
                answer = answer => Some(answer),
            };
            Some(Answer::of(self, answered?))
        }))
    }
}

impl sink::Call for Registered {
    fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.session.end_call(&self.key);
    }
}

impl fmt::Debug for Registered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registered")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// Where a request comes from: its session, where what it sends while it runs goes, the era it
/// is answered in, and who asks.
pub(super) struct Origin<'a> {
    pub(super) session: &'a Arc<Session>,
    pub(super) sink: &'a Sink,
    /// Who sent the request, as its access token says.
    pub(super) principal: Option<Arc<Principal>>,
    pub(super) wire: Wire,
    pub(super) caller: Caller,
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
        state_key: StateKey,
    ) -> Calls {
        Calls {
            registry,
            states,
            progressive,
            client_request_timeout,
            server,
            state_key,
        }
    }

    /// The progressive catalog, in that mode.
    pub(super) fn progressive(&self) -> Option<&Progressive> {
        self.progressive.as_ref()
    }

    /// The way back to the client for a request from `origin`: its sink, what it declared, its
    /// session's requests, and under 2026-07-28 the `inputs` its questions are answered from.
    pub(super) fn peer(&self, origin: &Origin<'_>, inputs: Option<Arc<Inputs>>) -> Peer {
        let Origin {
            session,
            sink,
            wire,
            caller,
            principal: _,
        } = origin;
        Peer {
            outgoing: (*sink).clone(),
            log_level: Arc::clone(&caller.log_level),
            client_capabilities: caller.client.capabilities.clone(),
            client_info: caller.client.info.clone(),
            requests: Arc::clone(session.requests()),
            request_timeout: self.client_request_timeout,
            protocol_version: caller.protocol_version,
            inputs,
            session_id: session.id(),
            // 2026-07-28 has no sessions: each request's session ends with it.
            session: (!wire.is_stateless()).then(|| Arc::clone(session.state())),
            refused_capability: OnceLock::new(),
        }
    }

    /// The handle tools reach the server by.
    pub(super) fn server(&self) -> &ServerHandle {
        &self.server
    }

    /// The key that seals the state of input-required results.
    pub(super) fn state_key(&self) -> &StateKey {
        &self.state_key
    }

    /// Handles a `tools/call`: an answer at once for a call that runs nothing, or the call to
    /// run alongside other messages.
    pub(super) fn call(&self, origin: Origin<'_>, id: Id, mut params: Value) -> Step {
        let caller = &origin.caller;
        let wire = origin.wire.clone();
        let session = origin.session;
        let (tool, arguments) = match self.resolve(&mut params, caller.client.has_apps()) {
            Ok(found) => found,
            Err(NotRun::Protocol(message)) => {
                return Step::Reply(Reply::error(&id, INVALID_PARAMS, &message));
            }
            Err(NotRun::Capability(message)) => {
                let code = match wire {
                    Wire::Handshake => INVALID_PARAMS,
                    Wire::Stateless { .. } => MISSING_CLIENT_CAPABILITY,
                };
                return Step::Reply(Reply::error(&id, code, &message));
            }
            Err(NotRun::Answered(result)) => {
                let result = serde_json::to_value(result).expect("a tool result serialises");
                return Step::Reply(Reply::result(&id, &wire.shape(result)));
            }
        };
        let name = tool.wire_name();
        if let Err(problems) = tool.check_arguments(&arguments) {
            let text = problem_list(&format!("invalid arguments for tool `{name}`"), &problems);
            let result = serde_json::to_value(ToolResult::error(text)).expect("serialises");
            return Step::Reply(Reply::result(&id, &wire.shape(result)));
        }
        let round = match Round::read(
            &self.state_key,
            &wire,
            &params,
            "tools/call",
            name,
            &arguments,
        ) {
            Ok(round) => round,
            Err(message) => return Step::Reply(Reply::error(&id, INVALID_PARAMS, &message)),
        };

        let registered = match Registered::new(session, &id) {
            Ok(registered) => registered,
            Err(reply) => return Step::Reply(reply),
        };
        let peer = self.peer(&origin, round.as_ref().map(Round::inputs));
        let progress_token = params.pointer("/_meta/progressToken").cloned();
        let ctx = Context::new(
            tool.name(),
            progress_token,
            registered.cancellation(),
            Some(peer),
            Arc::clone(&self.states),
            self.server.clone(),
            origin.principal.clone(),
        );
        // Kept to read, once the tool has returned, what its requests to the client met.
        let called = ctx.clone();
        let registry = Arc::clone(&self.registry);
        let wire_name = name.to_owned();
        let state_key = self.state_key.clone();
        registered.run(async move {
            let tool = registry
                .get(&wire_name)
                .expect("the registry does not change while serving");
            let reply = |result: Value| match called.refused_capability() {
                Some(capability) if wire.is_stateless() && result["isError"] == true => {
                    missing_capability(&id, &wire_name, capability)
                }
                _ => Reply::result(&id, &wire.shape(result)),
            };
            Round::answer(
                round,
                run(tool, arguments, ctx),
                &state_key,
                &id,
                &wire,
                reply,
            )
            .await
        })
    }

    /// The tool a `tools/call` with these `params` runs (the one it names, or the one
    /// `call_tool` names in the progressive catalog) and its scopes, when it has some.
    #[cfg(feature = "http")]
    pub(super) fn scopes(&self, params: &Value) -> Option<(String, &'static [&'static str])> {
        let named = params.get("name").and_then(Value::as_str);
        let name = match named {
            Some(CALL_TOOL) if self.progressive.is_some() => {
                params.pointer("/arguments/name").and_then(Value::as_str)
            }
            named => named,
        };
        // A tool disabled now is checked too: it may be enabled before the call runs.
        let tool = name.and_then(|name| self.registry.get(name))?;
        (!tool.scopes().is_empty()).then(|| (tool.wire_name().to_owned(), tool.scopes()))
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
fn missing_capability(id: &Id, tool: &str, capability: &str) -> Reply {
    Reply::error_with_data(
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

/// Runs `work` on tokio's blocking thread pool, where it holds up no other call, catching a
/// panic.
pub(super) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> std::thread::Result<T> {
    match tokio::task::spawn_blocking(move || panic::catch_unwind(AssertUnwindSafe(work))).await {
        Ok(caught) => caught,
        Err(err) if err.is_panic() => Err(err.into_panic()),
        Err(_) => Err(Box::new("it was stopped before it finished")),
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
