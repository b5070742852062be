//! Pure dispatch: one parsed message in, what to answer out. Knows nothing of pipes or sockets:
//! the transports frame bytes and hand each message over through [`Started`](super::Started).

use std::sync::Arc;
use std::sync::atomic::AtomicU8;
use std::time::Duration;

use serde_json::{Value, json};

use super::call::{Caller, Calls, Origin};
use super::identity::{Capabilities, Discovered, Initialized, ServerInfo};
use super::listing::ToolLists;
use super::pipeline::{Layers, Run};
use super::session::{Era, Session};
use super::step::Step;
use super::{completion, listen, prompts, resources};
use crate::catalog::{Catalog, Progressive, Ranking};
use crate::context::{ClientRequestError, RequestStateKey, Who};
use crate::live::{Live, ServerHandle};
use crate::protocol::jsonrpc::{
    INVALID_PARAMS, INVALID_REQUEST, Id, Incoming, METHOD_NOT_FOUND, Reply,
    UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::protocol::method::Method;
use crate::protocol::{
    Client, Envelope, HANDSHAKE_VERSIONS, LogLevel, SERVER_INFO_KEY, STATELESS_VERSIONS,
    ServerMeta, Wire, has_envelope,
};
#[cfg(feature = "http")]
use crate::registry::Mirrored;
use crate::registry::{Registry, Tool};
use crate::sink::Sink;
use crate::state::States;
use crate::tasks::TaskConfig;
use crate::tasks::Tasks;

/// What a server knows that does not change while it runs.
pub(crate) struct Dispatcher {
    registry: Arc<Registry>,
    /// Who the server says it is.
    server_info: ServerInfo,
    instructions: Option<String>,
    /// The `tools/list` results, serialised at start and again when a tool is disabled or
    /// enabled.
    tools: ToolLists,
    /// What changes while the server runs, and who is told.
    live: Arc<Live>,
    /// What the server offers, in both eras.
    capabilities: Capabilities,
    /// How long stateless-era clients may cache a list, in milliseconds.
    ttl_ms: u64,
    /// The `server/discover` result, serialised at start.
    discover: Vec<u8>,
    /// The `_meta` of every stateless-era result: who answers.
    result_meta: Arc<ServerMeta>,
    /// The application state tools and prompts take.
    states: Arc<States>,
    calls: Calls,
}

/// What a server's author chose, for [`Dispatcher::new`].
pub(crate) struct ServerConfig {
    /// Who the server says it is (`serverInfo`).
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    /// The most tools on one `tools/list` page; `None`: all on one.
    pub(crate) page_size: Option<usize>,
    /// How long stateless-era clients may cache what `server/discover` and `tools/list` return.
    pub(crate) cache_ttl: Duration,
    /// How long a call waits for the client to answer a request of its own.
    pub(crate) client_request_timeout: Duration,
    /// How long a call may run, unless its tool says otherwise.
    pub(crate) call_timeout: Option<Duration>,
    pub(crate) catalog: Catalog,
    /// The application state tools take.
    pub(crate) states: Arc<States>,
    /// The handle on the server, which its tools reach and its author may hold.
    pub(crate) server: ServerHandle,
    /// Seals the state of input-required results.
    pub(crate) state_key: RequestStateKey,
    /// The model the progressive catalog ranks by meaning with, too.
    #[cfg(feature = "semantic")]
    pub(crate) embedder: Option<Arc<crate::search::Embedder>>,
    /// The tools' vectors built with the binary, and where they are kept between starts.
    #[cfg(feature = "semantic")]
    pub(crate) kept: crate::search::Kept,
    /// The layers every call passes through.
    pub(crate) layers: Layers,
    /// How tasks are kept.
    pub(crate) tasks: TaskConfig,
}

impl Dispatcher {
    /// A dispatcher for these tools, as `config` say.
    pub(crate) fn new(registry: Registry, config: ServerConfig) -> Dispatcher {
        let ServerConfig {
            name,
            version,
            instructions,
            page_size,
            cache_ttl,
            client_request_timeout,
            call_timeout,
            catalog,
            states,
            server,
            state_key,
            #[cfg(feature = "semantic")]
            embedder,
            #[cfg(feature = "semantic")]
            kept,
            layers,
            tasks,
        } = config;
        let server_info = ServerInfo { name, version };
        let result_meta = json!({ SERVER_INFO_KEY: server_info });
        let ttl_ms = u64::try_from(cache_ttl.as_millis()).unwrap_or(u64::MAX);
        let app_only = registry.tools().iter().any(Tool::is_app_only);
        // The tool list is the same for every client, unless some tools are for views only:
        // then it depends on whether the request declares MCP Apps, and a shared cache could
        // hand one client's list to another.
        let cacheable = json!({
            "ttlMs": ttl_ms,
            "cacheScope": if app_only { "private" } else { "public" },
            "resultType": "complete",
            "_meta": result_meta,
        });
        let capabilities = Capabilities::of(&registry, false);
        let discovered = Discovered {
            meta: &result_meta,
            cache_scope: "public",
            capabilities: &Capabilities::of(&registry, true),
            instructions: instructions.as_deref(),
            result_type: "complete",
            supported_versions: &STATELESS_VERSIONS,
            ttl_ms,
        };
        let discover = serde_json::to_vec(&discovered).expect("a result serialises");
        let registry = Arc::new(registry);
        #[cfg(feature = "semantic")]
        let ranking = match embedder {
            Some(embedder) => Ranking::Semantic {
                embedder,
                kept,
                wait: false,
            },
            None => Ranking::Lexical,
        };
        #[cfg(not(feature = "semantic"))]
        let ranking = Ranking::Lexical;
        let progressive = (catalog == Catalog::Progressive)
            .then(|| Progressive::new(Arc::clone(&registry), ranking));
        let live = Arc::clone(server.live());
        let tools = ToolLists::new(
            Arc::clone(&registry),
            progressive.as_ref(),
            page_size,
            cacheable,
            &live,
        );
        Dispatcher {
            calls: Calls {
                registry: Arc::clone(&registry),
                states: Arc::clone(&states),
                progressive,
                client_request_timeout,
                call_timeout,
                server,
                state_key: state_key.clone(),
                pipeline: layers.around(Run::new(Arc::clone(&registry)), &registry),
                tasks: Arc::new(Tasks::new(tasks)),
            },
            registry,
            server_info,
            instructions,
            tools,
            live,
            capabilities,
            ttl_ms,
            discover,
            result_meta: Arc::new(ServerMeta::new(result_meta)),
            states,
        }
    }

    fn notification(&self, session: &Session, method: &str, params: &Value) {
        match method {
            "notifications/cancelled" => {
                let Some(id) = params.get("requestId") else {
                    return;
                };
                // Unknown or finished calls are ignored, as the protocol asks.
                if session.cancel_call(&id.to_string()) {
                    tracing::debug!(request = %id, "call cancelled by the client");
                }
            }
            "notifications/initialized" => {}
            other => tracing::debug!(method = other, "notification ignored"),
        }
    }

    /// A request on a connection that opened with the `initialize` handshake (or without the
    /// 2026-07-28 envelope).
    fn handshake_request(
        &self,
        session: &Arc<Session>,
        id: Id,
        name: &str,
        params: Value,
        from: Requester<'_>,
        initialized: Option<&'static str>,
    ) -> Step {
        let method = Method::from_name(name);
        if method != Some(Method::Initialize) && has_envelope(&params) {
            return Step::Reply(Reply::error(
                &id,
                INVALID_REQUEST,
                "this connection speaks the `initialize` handshake (protocol 2024-11-05 to \
                 2025-11-25), so a request carrying the 2026-07-28 `_meta` envelope is refused \
                 on it: for protocol 2026-07-28, open a new connection whose first request is \
                 `server/discover`",
            ));
        }
        let Some(method) = method else {
            return Step::Reply(not_supported(&id, name));
        };
        let reply = match (method, initialized) {
            (Method::Ping, _) => Reply::result(&id, &json!({})),
            (Method::Initialize, None) => self.initialize(session, &id, &params, from.sink),
            (Method::Initialize, Some(_)) => {
                Reply::error(&id, INVALID_REQUEST, "the session is already initialized")
            }
            (Method::Discover, _) => Reply::error(
                &id,
                METHOD_NOT_FOUND,
                "method `server/discover` is not available on this connection: it speaks the \
                 `initialize` handshake, having opened without the 2026-07-28 `_meta` \
                 envelope (`io.modelcontextprotocol/protocolVersion`)",
            ),
            // 2026-07-28's stream of changes; the handshake era tells on the session's own.
            (Method::Listen, _) => not_supported(&id, name),
            // Everything else waits for the handshake.
            (_, None) => Reply::error(
                &id,
                INVALID_REQUEST,
                "the session is not initialized: send `initialize` first",
            ),
            (Method::ListTools, Some(_)) => {
                return self.list_tools(&id, &params, &Wire::Handshake, &session.client());
            }
            (
                Method::ListResources
                | Method::ListResourceTemplates
                | Method::ReadResource
                | Method::Subscribe
                | Method::Unsubscribe,
                Some(_),
            ) => {
                let wire = Wire::Handshake;
                return self.resources(session, id, method, &params, wire, from.who);
            }
            (Method::Complete, Some(_)) => {
                return self.complete(session, &id, &params, &Wire::Handshake);
            }
            (Method::ListPrompts | Method::GetPrompt, Some(version)) => {
                let origin = handshake_origin(session, from, version);
                return self.prompts(origin, id, method, &params);
            }
            (Method::CallTool, Some(version)) => {
                let origin = handshake_origin(session, from, version);
                return self.calls.call_tool(origin, id, params);
            }
            (Method::SetLogLevel, Some(_)) => set_level(session, &id, &params),
            (
                Method::TasksGet
                | Method::TasksResult
                | Method::TasksList
                | Method::TasksCancel
                | Method::TasksUpdate,
                Some(version),
            ) => {
                let origin = handshake_origin(session, from, version);
                return self.calls.task_request(&origin, id, method, &params);
            }
        };
        Step::Reply(reply)
    }

    /// A resources request, in either era.
    fn resources(
        &self,
        session: &Arc<Session>,
        id: Id,
        method: Method,
        params: &Value,
        wire: Wire,
        who: Who,
    ) -> Step {
        resources::ResourceMethods {
            registry: &self.registry,
            states: &self.states,
            calls: &self.calls,
            disabled: &self.live.disabled().resources,
            session,
            wire,
            who,
            ttl_ms: self.ttl_ms,
        }
        .answer(id, method, params)
    }

    /// A prompts request, in either era.
    fn prompts(&self, origin: Origin<'_>, id: Id, method: Method, params: &Value) -> Step {
        let served = prompts::PromptMethods {
            registry: &self.registry,
            states: &self.states,
            disabled: &self.live.disabled().prompts,
            calls: &self.calls,
            origin,
            ttl_ms: self.ttl_ms,
        };
        prompts::answer(served, id, method, params)
    }

    /// A request on a connection that opened with the 2026-07-28 envelope.
    fn stateless_request(
        &self,
        session: &Arc<Session>,
        id: Id,
        name: &str,
        params: Value,
        client: Client,
        from: Requester<'_>,
    ) -> Step {
        let method = Method::from_name(name);
        if method == Some(Method::Initialize) {
            let mut data = json!({ "supported": STATELESS_VERSIONS });
            if let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) {
                data["requested"] = json!(requested);
            }
            return Step::Reply(Reply::error_with_data(
                &id,
                UNSUPPORTED_PROTOCOL_VERSION,
                "this connection speaks protocol 2026-07-28, which has no `initialize` \
                 handshake: it opened with a request carrying the 2026-07-28 `_meta` envelope; \
                 for the handshake, open a new connection whose first request is `initialize`",
                &data,
            ));
        }
        let envelope = match Envelope::read(&id, &params, client) {
            Ok(envelope) => envelope,
            Err(reply) => return Step::Reply(reply),
        };
        let Some(method) = method else {
            return Step::Reply(not_supported(&id, name));
        };
        let wire = Wire::Stateless {
            meta: Arc::clone(&self.result_meta),
        };
        let reply = match method {
            Method::Discover => Reply::result_bytes(&id, &self.discover),
            Method::ListTools => return self.list_tools(&id, &params, &wire, &envelope.client),
            Method::ListResources | Method::ListResourceTemplates | Method::ReadResource => {
                return self.resources(session, id, method, &params, wire, from.who);
            }
            Method::ListPrompts | Method::GetPrompt => {
                let origin = stateless_origin(session, from, wire, envelope);
                return self.prompts(origin, id, method, &params);
            }
            Method::Listen => {
                return listen::listen(
                    &self.live,
                    &self.registry,
                    session,
                    id,
                    &params,
                    from.sink,
                    &wire,
                );
            }
            Method::Complete => return self.complete(session, &id, &params, &wire),
            Method::CallTool => {
                let origin = stateless_origin(session, from, wire, envelope);
                return self.calls.call_tool(origin, id, params);
            }
            Method::Ping => Reply::error(
                &id,
                METHOD_NOT_FOUND,
                "method `ping` was removed in protocol 2026-07-28",
            ),
            Method::SetLogLevel => Reply::error(
                &id,
                METHOD_NOT_FOUND,
                "method `logging/setLevel` was removed in protocol 2026-07-28: a request asks \
                 for log messages with `io.modelcontextprotocol/logLevel` in its `_meta`",
            ),
            Method::TasksGet
            | Method::TasksResult
            | Method::TasksList
            | Method::TasksCancel
            | Method::TasksUpdate => {
                let origin = stateless_origin(session, from, wire, envelope);
                return self.calls.task_request(&origin, id, method, &params);
            }
            // The handshake era's subscriptions; this one has `subscriptions/listen`.
            Method::Subscribe | Method::Unsubscribe | Method::Initialize => {
                not_supported(&id, name)
            }
        };
        Step::Reply(reply)
    }

    fn initialize(&self, session: &Session, id: &Id, params: &Value, sink: &Sink) -> Reply {
        let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
            return Reply::error(
                id,
                INVALID_PARAMS,
                "`initialize` needs a `protocolVersion` string",
            );
        };
        // A version we speak is echoed; any other gets our newest, and the client decides.
        let version = HANDSHAKE_VERSIONS
            .into_iter()
            .find(|v| *v == requested)
            .unwrap_or(HANDSHAKE_VERSIONS[0]);
        session.initialized(
            version,
            Client {
                capabilities: params.get("capabilities").cloned().map(Arc::new),
                info: params.get("clientInfo").cloned().map(Arc::new),
            },
        );
        // Told of changes on the connection (stdio); over HTTP, on the stream its GET opens,
        // which replaces this sink.
        session.listener().set_sink(sink.clone());
        self.live.register(session.listener());
        let client = params.pointer("/clientInfo/name").and_then(Value::as_str);
        tracing::info!(client, requested, version, "session initialized");
        let result = Initialized {
            capabilities: &self.capabilities,
            instructions: self.instructions.as_deref(),
            protocol_version: version,
            server_info: &self.server_info,
        };
        Reply::result(id, &result).opening()
    }

    /// The tool list the client sees: with the tools only views call if it declared MCP Apps,
    /// without those disabled.
    fn list_tools(&self, id: &Id, params: &Value, wire: &Wire, client: &Client) -> Step {
        self.tools.answer(
            id,
            params,
            wire,
            client,
            self.calls.progressive.as_ref(),
            &self.live,
        )
    }
}

impl Dispatcher {
    /// The name the server introduces itself with.
    #[cfg(feature = "oauth")]
    pub(super) fn name(&self) -> &str {
        &self.server_info.name
    }

    /// The transport is stopping: the streams that wait for changes end, and so do the tasks
    /// this process runs, failed (their work goes with the process).
    pub(super) fn stop(&self) {
        self.live.stop();
        self.calls.tasks.jobs.stop();
    }

    /// The tool a `tools/call` runs and its scopes, when it has some.
    #[cfg(feature = "http")]
    pub(super) fn scopes(
        &self,
        method: &str,
        params: &Value,
    ) -> Option<(String, &'static [&'static str])> {
        (method == "tools/call")
            .then(|| self.calls.scopes(params))
            .flatten()
    }

    /// Every scope a tool asks for.
    #[cfg(feature = "oauth")]
    pub(super) fn tool_scopes(&self) -> Vec<&'static str> {
        self.registry
            .tools()
            .iter()
            .flat_map(Tool::scopes)
            .copied()
            .collect()
    }

    /// The answer to `completion/complete`: the completer's values, or for a mounted server's
    /// prompt, its server's.
    fn complete(&self, session: &Arc<Session>, id: &Id, params: &Value, wire: &Wire) -> Step {
        #[cfg(feature = "gateway")]
        if let Some(step) =
            completion::forwarded(&self.registry, &self.live, session, id, params, wire)
        {
            return step;
        }
        #[cfg(not(feature = "gateway"))]
        let _ = session;
        Step::Reply(completion::complete(
            &self.registry,
            &self.states,
            &self.live,
            id,
            params,
            wire,
        ))
    }

    /// The arguments of tool `name` mirrored in HTTP headers.
    #[cfg(feature = "http")]
    pub(super) fn mirrored(&self, name: &str) -> &[Mirrored] {
        match self.registry.get(name) {
            Some(tool) if !self.live.disabled().tool_off(name) => tool.mirrored(),
            _ => &[],
        }
    }

    /// Handles one message of `session`, which `principal` sent when an access token names
    /// one; what a call sends while it runs goes to `sink`.
    pub(super) fn handle(
        &self,
        session: &Arc<Session>,
        message: Incoming,
        sink: &Sink,
        who: Who,
    ) -> Step {
        match message {
            Incoming::Response { id, outcome } => {
                let answer = outcome.map_err(|error| ClientRequestError::Client {
                    code: error.code,
                    message: error.message,
                    data: error.data,
                });
                session.requests().resolve(&id, answer);
                Step::Nothing
            }
            Incoming::Notification { method, params } => {
                self.notification(session, &method, &params);
                Step::Nothing
            }
            Incoming::Request {
                id,
                method,
                params,
                client,
            } => {
                #[cfg(feature = "otel")]
                let observed = super::observe::Request::start(session, &id, &method, &params, &who);
                #[cfg(feature = "otel")]
                let attached = observed.attach();
                let step = match session.era(&method, &params, &client) {
                    Era::Handshake { version } => {
                        let from = Requester { sink, who };
                        self.handshake_request(session, id, &method, params, from, version)
                    }
                    Era::Stateless => {
                        let from = Requester { sink, who };
                        self.stateless_request(session, id, &method, params, client, from)
                    }
                };
                #[cfg(feature = "otel")]
                let step = {
                    drop(attached);
                    observed.step(step)
                };
                step
            }
        }
    }
}

/// Who sent a request, besides its session: the way back for what its call sends, and the
/// principal its access token names.
struct Requester<'a> {
    sink: &'a Sink,
    who: Who,
}

/// Where a request of the handshake era comes from, once `initialize` settled on `version`.
fn handshake_origin<'a>(
    session: &'a Arc<Session>,
    from: Requester<'a>,
    version: &'static str,
) -> Origin<'a> {
    Origin {
        session,
        sink: from.sink,
        who: from.who,
        wire: Wire::Handshake,
        caller: Caller {
            log_level: Arc::clone(session.log_level()),
            client: session.client(),
            protocol_version: version,
        },
    }
}

/// Where a request of protocol 2026-07-28 comes from: who it says asks, in its envelope.
fn stateless_origin<'a>(
    session: &'a Arc<Session>,
    from: Requester<'a>,
    wire: Wire,
    envelope: Envelope,
) -> Origin<'a> {
    // Log messages only when the request asks for them, at the level it names.
    let threshold = envelope.log_level.map_or(LogLevel::OFF, |l| l as u8);
    Origin {
        session,
        sink: from.sink,
        who: from.who,
        wire,
        caller: Caller {
            log_level: Arc::new(AtomicU8::new(threshold)),
            client: envelope.client,
            protocol_version: envelope.version,
        },
    }
}

/// The answer to a method this server does not serve in the request's era.
fn not_supported(id: &Id, method: &str) -> Reply {
    Reply::error(
        id,
        METHOD_NOT_FOUND,
        &format!("method `{method}` is not supported"),
    )
}

fn set_level(session: &Session, id: &Id, params: &Value) -> Reply {
    match params
        .get("level")
        .and_then(Value::as_str)
        .and_then(LogLevel::from_name)
    {
        Some(level) => {
            session.set_log_level(level);
            Reply::result(id, &json!({}))
        }
        None => Reply::error(
            id,
            INVALID_PARAMS,
            &format!("`level` must be one of {}", LogLevel::names()),
        ),
    }
}

/// Dispatch on its own: messages in, steps out, without a transport, a pipe or a socket.
#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::auth::Principal;
    use crate::handler::{Handler, Output};
    use crate::protocol::jsonrpc::INVALID_REQUEST;
    use crate::protocol::jsonrpc::{self, ReplyKind};
    use crate::registration::ToolRegistration;

    /// `echo` returns its arguments; `wait` runs until it is cancelled.
    fn dispatcher(catalog: Catalog) -> Dispatcher {
        let echo = Box::leak(Box::new(ToolRegistration {
            handler: Handler::Sync(|arguments, _| Output::Value(arguments)),
            ..crate::fixtures::tool("echo", "Returns its arguments.")
        }));
        let wait = Box::leak(Box::new(ToolRegistration {
            handler: Handler::Async(|_, ctx| {
                Box::pin(async move {
                    ctx.cancelled().await;
                    Output::Empty
                })
            }),
            ..crate::fixtures::tool("wait", "Waits to be cancelled.")
        }));
        let registry = Registry::from_registrations([&*echo, &*wait]).unwrap();
        dispatcher_of(registry, catalog)
    }

    /// A dispatcher of these tools.
    fn dispatcher_of(registry: Registry, catalog: Catalog) -> Dispatcher {
        Dispatcher::new(
            registry,
            ServerConfig {
                name: "test-server".into(),
                version: "1.2.3".into(),
                instructions: Some("Be kind.".into()),
                page_size: None,
                cache_ttl: Duration::from_secs(60),
                client_request_timeout: Duration::from_secs(5),
                call_timeout: None,
                catalog,
                states: Arc::default(),
                server: ServerHandle::default(),
                state_key: RequestStateKey::random(),
                #[cfg(feature = "semantic")]
                embedder: None,
                #[cfg(feature = "semantic")]
                kept: crate::search::Kept::default(),
                layers: Layers::default(),
                tasks: TaskConfig::new(),
            },
        )
    }

    /// A connection to a dispatcher: its session and what calls send while they run.
    struct TestConnection {
        dispatcher: Dispatcher,
        session: Arc<Session>,
        sink: Sink,
        sent: crate::sink::Outbox,
    }

    impl TestConnection {
        fn new(dispatcher: Dispatcher) -> TestConnection {
            let (sink, sent) = crate::sink::channel();
            TestConnection {
                dispatcher,
                session: Arc::new(Session::new()),
                sink,
                sent,
            }
        }

        fn step(&self, message: Value) -> Step {
            let bytes = serde_json::to_vec(&message).unwrap();
            let message = jsonrpc::parse(&bytes).expect("a well-formed message");
            self.dispatcher
                .handle(&self.session, message, &self.sink, Who::default())
        }

        /// The answer to a message answered at once.
        fn answer(&self, message: Value) -> Value {
            match self.step(message) {
                Step::Reply(reply) => serde_json::from_slice(&reply.into_bytes()).unwrap(),
                Step::Nothing => panic!("no answer"),
                Step::Call(_) | Step::Stream(_) => panic!("a call, not an answer"),
            }
        }

        /// What a message answered at once says, as its transport reads it.
        fn kind(&self, message: Value) -> ReplyKind {
            match self.step(message) {
                Step::Reply(reply) => reply.kind(),
                Step::Nothing => panic!("no answer"),
                Step::Call(_) | Step::Stream(_) => panic!("a call, not an answer"),
            }
        }

        /// The answer to a call, once it has run.
        async fn call(&self, message: Value) -> Option<Value> {
            match self.step(message) {
                Step::Call(call) => call
                    .await
                    .and_then(crate::sink::Answer::take)
                    .map(|reply| serde_json::from_slice(&reply.into_bytes()).unwrap()),
                _ => panic!("not a call"),
            }
        }

        fn initialize(&self) -> Value {
            self.answer(request(
                0,
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
            ))
        }
    }

    fn request(id: u64, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    /// The 2026-07-28 envelope, around `params`.
    fn enveloped(mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        params
    }

    fn tool_names(result: &Value) -> Vec<&str> {
        result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn the_handshake_comes_first() {
        let connection = TestConnection::new(dispatcher(Catalog::Full));
        let early = connection.answer(request(1, "tools/list", json!({})));
        assert_eq!(early["error"]["code"], INVALID_REQUEST);
        assert_eq!(
            early["error"]["message"],
            "the session is not initialized: send `initialize` first"
        );
        assert_eq!(
            connection.answer(request(2, "ping", json!({})))["result"],
            json!({})
        );
        let initialized = connection.initialize();
        assert_eq!(initialized["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(
            initialized["result"]["serverInfo"],
            json!({"name": "test-server", "version": "1.2.3"})
        );
        assert_eq!(initialized["result"]["instructions"], "Be kind.");
        assert_eq!(
            initialized["result"]["capabilities"],
            json!({"tools": {"listChanged": true}, "logging": {}})
        );
        let listed = connection.answer(request(3, "tools/list", json!({})));
        assert_eq!(listed["id"], 3);
        assert_eq!(tool_names(&listed["result"]), ["echo", "wait"]);
        let again = connection.initialize();
        assert_eq!(
            again["error"]["message"],
            "the session is already initialized"
        );
    }

    #[tokio::test]
    async fn a_transport_reads_what_an_answer_says_without_parsing_it() {
        let connection = TestConnection::new(dispatcher(Catalog::Full));
        let early = request(1, "tools/list", json!({}));
        assert_eq!(connection.kind(early), ReplyKind::Error(INVALID_REQUEST));
        let initialize = json!({"protocolVersion": "2025-06-18", "capabilities": {}});
        let opened = connection.kind(request(2, "initialize", initialize.clone()));
        assert_eq!(opened, ReplyKind::Opened);
        let again = connection.kind(request(3, "initialize", initialize));
        assert_eq!(again, ReplyKind::Error(INVALID_REQUEST));
        let listed = connection.kind(request(4, "tools/list", json!({})));
        assert_eq!(listed, ReplyKind::Result);
        let unknown = connection.kind(request(5, "tools/nope", json!({})));
        assert_eq!(unknown, ReplyKind::Error(METHOD_NOT_FOUND));
        let no_tool = connection.kind(request(6, "tools/call", json!({"name": "nope"})));
        assert_eq!(no_tool, ReplyKind::Error(INVALID_PARAMS));
        let Step::Call(call) = connection.step(request(7, "tools/call", json!({"name": "echo"})))
        else {
            panic!("not a call");
        };
        let answer = call.await.and_then(crate::sink::Answer::take).unwrap();
        assert_eq!(answer.kind(), ReplyKind::Result);

        let stateless = TestConnection::new(dispatcher(Catalog::Full));
        let mut unsupported = enveloped(json!({}));
        unsupported["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
        let refused = stateless.kind(request(1, "server/discover", unsupported));
        assert_eq!(refused, ReplyKind::Error(UNSUPPORTED_PROTOCOL_VERSION));
        let discovered = stateless.kind(request(2, "server/discover", enveloped(json!({}))));
        assert_eq!(discovered, ReplyKind::Result);
    }

    #[test]
    fn a_version_it_does_not_speak_gets_its_newest() {
        let connection = TestConnection::new(dispatcher(Catalog::Full));
        let answer = connection.answer(request(
            1,
            "initialize",
            json!({"protocolVersion": "1999-01-01", "capabilities": {}}),
        ));
        assert_eq!(answer["result"]["protocolVersion"], HANDSHAKE_VERSIONS[0]);
    }

    #[test]
    fn the_first_request_decides_the_era_for_good() {
        let stateless = TestConnection::new(dispatcher(Catalog::Full));
        let discovered = stateless.answer(request(1, "server/discover", enveloped(json!({}))));
        assert_eq!(
            discovered["result"]["supportedVersions"],
            json!(["2026-07-28"])
        );
        assert_eq!(discovered["result"]["resultType"], "complete");
        let listed = stateless.answer(request(2, "tools/list", enveloped(json!({}))));
        assert_eq!(listed["result"]["ttlMs"], 60_000);
        assert_eq!(listed["result"]["cacheScope"], "public");
        assert_eq!(
            listed["result"]["_meta"][SERVER_INFO_KEY]["name"],
            "test-server"
        );
        let handshake = stateless.answer(request(
            3,
            "initialize",
            json!({"protocolVersion": "2025-06-18"}),
        ));
        assert_eq!(handshake["error"]["code"], UNSUPPORTED_PROTOCOL_VERSION);
        let bare = stateless.answer(request(4, "tools/list", json!({})));
        assert_eq!(bare["error"]["code"], INVALID_PARAMS);

        let handshake = TestConnection::new(dispatcher(Catalog::Full));
        handshake.initialize();
        let mixed = handshake.answer(request(1, "tools/list", enveloped(json!({}))));
        assert_eq!(mixed["error"]["code"], INVALID_REQUEST);
        let discover = handshake.answer(request(2, "server/discover", json!({})));
        assert_eq!(discover["error"]["code"], METHOD_NOT_FOUND);
    }

    #[tokio::test]
    async fn a_call_runs_its_tool_and_answers_under_its_id() {
        let connection = TestConnection::new(dispatcher(Catalog::Full));
        connection.initialize();
        let answer = connection
            .call(request(
                7,
                "tools/call",
                json!({"name": "echo", "arguments": {"said": "hello"}}),
            ))
            .await
            .unwrap();
        assert_eq!(answer["id"], 7);
        assert_eq!(
            answer["result"],
            json!({"content": [{"type": "text", "text": "{\"said\":\"hello\"}"}]})
        );
        let unknown = connection.answer(request(8, "tools/call", json!({"name": "nope"})));
        assert_eq!(unknown["error"]["code"], INVALID_PARAMS);
        assert_eq!(unknown["error"]["message"], "unknown tool `nope`");
    }

    #[tokio::test]
    async fn a_cancelled_call_sends_no_answer_and_frees_its_id() {
        let connection = TestConnection::new(dispatcher(Catalog::Full));
        connection.initialize();
        let Step::Call(call) = connection.step(request(1, "tools/call", json!({"name": "wait"})))
        else {
            panic!("not a call");
        };
        // Its id is taken while it runs.
        let twin = connection.answer(request(1, "tools/call", json!({"name": "echo"})));
        assert_eq!(
            twin["error"]["message"],
            "request id 1 is already in use by a request under way"
        );
        let cancel = json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 1},
        });
        assert!(matches!(connection.step(cancel), Step::Nothing));
        assert!(call.await.is_none());
        let echoed = connection
            .call(request(1, "tools/call", json!({"name": "echo"})))
            .await
            .unwrap();
        assert_eq!(echoed["id"], 1);
    }

    #[tokio::test]
    async fn an_answer_waiting_to_be_written_is_dropped_when_its_call_is_cancelled() {
        let connection = TestConnection::new(dispatcher(Catalog::Full));
        connection.initialize();
        let echo = json!({"name": "echo", "arguments": {"text": "late"}});
        let Step::Call(call) = connection.step(request(7, "tools/call", echo)) else {
            panic!("not a call");
        };
        let answer = call.await.expect("the call ran to its answer");
        // Made but not yet written: the call is still under way, so the cancellation reaches it.
        let cancel = json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 7},
        });
        assert!(matches!(connection.step(cancel), Step::Nothing));
        assert!(answer.take().is_none());
        // Dropped, the answer frees its id.
        let echoed = connection
            .call(request(7, "tools/call", json!({"name": "echo"})))
            .await
            .unwrap();
        assert_eq!(echoed["id"], 7);
    }

    #[test]
    fn the_progressive_catalog_lists_its_meta_tools_and_answers_a_search_at_once() {
        let connection = TestConnection::new(dispatcher(Catalog::Progressive));
        connection.initialize();
        let listed = connection.answer(request(1, "tools/list", json!({})));
        assert_eq!(tool_names(&listed["result"]), ["search_tools", "call_tool"]);
        let found = connection.answer(request(
            2,
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "cancelled"}}),
        ));
        assert_eq!(tool_names(&found["result"]["structuredContent"]), ["wait"]);
    }

    #[test]
    fn a_log_level_is_one_of_the_protocols() {
        let connection = TestConnection::new(dispatcher(Catalog::Full));
        connection.initialize();
        let set = connection.answer(request(1, "logging/setLevel", json!({"level": "error"})));
        assert_eq!(set["result"], json!({}));
        let refused = connection.answer(request(2, "logging/setLevel", json!({"level": "loud"})));
        assert_eq!(
            refused["error"]["message"],
            "`level` must be one of `debug`, `info`, `notice`, `warning`, `error`, `critical`, \
             `alert`, `emergency`"
        );
    }

    #[tokio::test]
    async fn a_response_reaches_the_request_of_ours_it_answers() {
        let connection = TestConnection::new(dispatcher(Catalog::Full));
        connection.initialize();
        let requests = Arc::clone(connection.session.requests());
        let sink = connection.sink.clone();
        let never = tokio_util::sync::CancellationToken::new();
        let asked = tokio::spawn(async move {
            requests
                .send(&sink, "ping", json!({}), Duration::from_secs(5), &never)
                .await
        });
        let mut sent = connection.sent;
        let request: Value = serde_json::from_slice(&sent.recv().await.unwrap()).unwrap();
        let response = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"ok": true}});
        let bytes = serde_json::to_vec(&response).unwrap();
        let message = jsonrpc::parse(&bytes).unwrap();
        let step = connection.dispatcher.handle(
            &connection.session,
            message,
            &connection.sink,
            Who::default(),
        );
        assert!(matches!(step, Step::Nothing));
        assert_eq!(asked.await.unwrap().unwrap(), json!({"ok": true}));
    }

    #[tokio::test]
    async fn a_task_is_its_principals_alone() {
        let wait = Box::leak(Box::new(ToolRegistration {
            handler: Handler::Async(|_, ctx| {
                Box::pin(async move {
                    ctx.cancelled().await;
                    Output::Empty
                })
            }),
            task: crate::tasks::TaskSupport::Optional,
            ..crate::fixtures::tool("wait", "Waits to be cancelled.")
        }));
        let registry = Registry::from_registrations([&*wait]).unwrap();
        let connection = TestConnection::new(dispatcher_of(registry, Catalog::Full));
        let ada = Arc::new(Principal::new("https://issuer").with_subject("ada"));
        let bob = Arc::new(Principal::new("https://issuer").with_subject("bob"));
        let ask = |id: u64, method: &str, mut params: Value, who: &Arc<Principal>| {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {
                    "extensions": {"io.modelcontextprotocol/tasks": {}}
                },
            });
            let bytes = serde_json::to_vec(&request(id, method, params)).unwrap();
            let message = jsonrpc::parse(&bytes).unwrap();
            let step = connection.dispatcher.handle(
                &connection.session,
                message,
                &connection.sink,
                Who {
                    principal: Some(Arc::clone(who)),
                    address: None,
                },
            );
            async move {
                match step {
                    Step::Reply(reply) => {
                        serde_json::from_slice::<Value>(&reply.into_bytes()).unwrap()
                    }
                    Step::Call(call) => {
                        let reply = call.await.and_then(crate::sink::Answer::take).unwrap();
                        serde_json::from_slice(&reply.into_bytes()).unwrap()
                    }
                    _ => panic!("not an answer"),
                }
            }
        };
        let created = ask(1, "tools/call", json!({"name": "wait"}), &ada).await;
        let task = created["result"]["taskId"].as_str().unwrap().to_owned();
        let theirs = ask(2, "tasks/get", json!({"taskId": task}), &bob).await;
        assert_eq!(theirs["error"]["code"], INVALID_PARAMS, "{theirs}");
        let cancel = ask(3, "tasks/cancel", json!({"taskId": task}), &bob).await;
        assert_eq!(cancel["error"]["code"], INVALID_PARAMS, "{cancel}");
        let mine = ask(4, "tasks/get", json!({"taskId": task}), &ada).await;
        assert_eq!(mine["result"]["status"], "working", "{mine}");
        let cancelled = ask(5, "tasks/cancel", json!({"taskId": task}), &ada).await;
        assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
        let after = ask(6, "tasks/get", json!({"taskId": task}), &ada).await;
        assert_eq!(after["result"]["status"], "cancelled");
    }
}
