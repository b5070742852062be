//! Pure dispatch: one message in, what to answer out. Knows nothing of pipes or sockets.
//!
//! A connection speaks one of two protocol eras, and its first request decides which, once:
//!
//! - the **handshake** era (2024-11-05 to 2025-11-25): `initialize` first, then the requests;
//! - the **stateless** era (2026-07-28): no handshake; every request carries the protocol
//!   version and the client's capabilities in `params._meta`, and every result says
//!   `resultType` and names the server. A first request carrying that envelope (any method but
//!   `initialize`, which the era lacks) opens it; anything else opens the handshake era.
//!
//! This is how the official Python SDK's dual-era server decides too, and what a client in
//! "auto" mode expects: it probes with `server/discover` and falls back to `initialize`, on a
//! new connection, only when the probe fails.

use std::any::Any;
use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use futures_util::FutureExt as _;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::jsonrpc::{
    self, INVALID_PARAMS, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND, MISSING_CLIENT_CAPABILITY,
    SharedResult, UNSUPPORTED_PROTOCOL_VERSION,
};
use super::requests::ClientRequests;
use super::resources::{self, Failure, RESOURCE_NOT_FOUND};
use crate::apps;
use crate::context::{ClientRequestError, Context, Peer};
use crate::manifest::Manifest;
use crate::progressive::{CALL_TOOL, Catalog, Progressive, SEARCH_TOOL, unwrap_call};
use crate::registry::{Registry, Tool};
use crate::tool::{BoxFuture, Handler, Output, Produced};
use crate::{LogLevel, ToolResult};

/// Protocol versions of the handshake era, newest first.
pub(crate) const PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Protocol versions of the stateless era, newest first: each request names one in its `_meta`.
pub(crate) const STATELESS_VERSIONS: [&str; 1] = ["2026-07-28"];

/// The `_meta` keys of the stateless era.
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

const LEVELS: &str =
    "`debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency`";

/// What a server knows that does not change while it runs.
pub(crate) struct Dispatcher {
    pub(crate) registry: Registry,
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    /// The `tools/list` results, serialised at start: every tool, as clients that declared MCP
    /// Apps see them.
    listing: Listing,
    /// The `tools/list` results without the tools only views may call, for the other clients;
    /// `None` when there are no such tools.
    model_listing: Option<Listing>,
    /// What the server offers, in both eras.
    capabilities: Value,
    /// How long stateless-era clients may cache a list, in milliseconds.
    ttl_ms: u64,
    /// The `server/discover` result, serialised at start.
    discover: Vec<u8>,
    /// The `_meta` of every stateless-era result: who answers.
    result_meta: Value,
    /// How long a call waits for the client to answer a request of its own.
    client_request_timeout: Duration,
    /// The progressive catalog's search, in that mode.
    progressive: Option<Progressive>,
}

/// What a server's author chose, for [`Dispatcher::new`].
pub(crate) struct Settings {
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
    pub(crate) catalog: Catalog,
}

/// Where the messages a call sends while it runs (progress, log messages) go: the connection's
/// writer on stdio, the request's own stream over HTTP.
pub(crate) type Sink = UnboundedSender<Vec<u8>>;

/// One client connection's state.
pub(crate) struct Session {
    /// `None` until the first request decides it.
    era: Mutex<Option<Era>>,
    /// The handshake era's log level, which `logging/setLevel` sets.
    log_level: Arc<AtomicU8>,
    /// Calls under way, by request id, so that `notifications/cancelled` can reach them.
    in_flight: Mutex<HashMap<String, CancellationToken>>,
    /// What the client said of itself in `initialize`.
    client: Mutex<Client>,
    /// Requests of ours awaiting the client's answer.
    requests: Arc<ClientRequests>,
}

/// What a client says of itself: its `capabilities` and `clientInfo`.
#[derive(Clone, Default)]
struct Client {
    capabilities: Option<Arc<Value>>,
    info: Option<Arc<Value>>,
}

impl Client {
    /// Whether it declared the MCP Apps extension, and so may see and call view-only tools.
    fn has_apps(&self) -> bool {
        self.capabilities
            .as_deref()
            .is_some_and(apps::client_supports)
    }
}

/// Who a call answers to: the log level its messages must pass, and what the client declared.
struct Caller {
    log_level: Arc<AtomicU8>,
    client: Client,
}

/// The protocol era a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Era {
    /// `initialize` first; `version` is `None` until then.
    Handshake { version: Option<&'static str> },
    /// Protocol 2026-07-28: every request carries its own envelope.
    Stateless,
}

/// How results are shaped on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wire {
    Handshake,
    /// With `resultType` and the server's name in `_meta`.
    Stateless,
}

/// What to do with one message.
pub(crate) enum Step {
    /// Send this now.
    Reply(Vec<u8>),
    /// Send this now: a response around bytes shared with other responses (the tool list).
    Shared(SharedResult),
    /// Nothing to send (a notification).
    Nothing,
    /// A tool call: run it alongside other messages; it yields its response, or nothing when
    /// the client cancelled it.
    Call(BoxFuture<Option<Vec<u8>>>),
}

impl Session {
    /// A new session, before its first request.
    pub(crate) fn new() -> Session {
        Session {
            era: Mutex::new(None),
            log_level: Arc::new(AtomicU8::new(LogLevel::Info as u8)),
            in_flight: Mutex::new(HashMap::new()),
            client: Mutex::new(Client::default()),
            requests: Arc::new(ClientRequests::new()),
        }
    }

    /// The client is gone (the input closed, the session ended): calls waiting for its answers
    /// stop waiting.
    pub(crate) fn close(&self) {
        self.requests.close();
    }

    /// A session whose every request is of protocol 2026-07-28: one lacking the envelope is
    /// answered with an error naming what it lacks, not taken for the handshake era.
    pub(crate) fn stateless() -> Session {
        let session = Session::new();
        *session.era_lock() = Some(Era::Stateless);
        session
    }

    /// The protocol version `initialize` settled on, once it has.
    pub(crate) fn negotiated_version(&self) -> Option<&'static str> {
        match *self.era_lock() {
            Some(Era::Handshake { version }) => version,
            _ => None,
        }
    }

    /// Cancels every call under way, as a `notifications/cancelled` for each would.
    pub(crate) fn cancel_calls(&self) {
        for token in self.in_flight().values() {
            token.cancel();
        }
    }

    fn client(&self) -> MutexGuard<'_, Client> {
        self.client.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn era_lock(&self) -> MutexGuard<'_, Option<Era>> {
        self.era.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The connection's era, decided by its first request.
    fn era(&self, method: &str, params: &Value) -> Era {
        *self.era_lock().get_or_insert_with(|| {
            if method != "initialize" && has_envelope(params) {
                let client = params
                    .pointer("/_meta")
                    .and_then(|meta| meta.get(CLIENT_INFO_KEY))
                    .and_then(|info| info.get("name"))
                    .and_then(Value::as_str);
                tracing::info!(client, method, "connection speaks protocol 2026-07-28");
                Era::Stateless
            } else {
                Era::Handshake { version: None }
            }
        })
    }

    fn in_flight(&self) -> MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether a request carries the 2026-07-28 envelope. The version key alone decides, so that a
/// half-built envelope is answered in that era, with an error naming what is missing.
fn has_envelope(params: &Value) -> bool {
    params
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.contains_key(PROTOCOL_VERSION_KEY))
}

impl Dispatcher {
    /// A dispatcher for these tools, as `settings` say.
    pub(crate) fn new(registry: Registry, settings: Settings) -> Dispatcher {
        let Settings {
            name,
            version,
            instructions,
            page_size,
            cache_ttl,
            client_request_timeout,
            catalog,
        } = settings;
        let result_meta = json!({ SERVER_INFO_KEY: { "name": name, "version": version } });
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
        let capabilities = capabilities(&registry);
        let mut discover = json!({
            "supportedVersions": STATELESS_VERSIONS,
            "capabilities": capabilities,
        });
        merge(&mut discover, &cacheable);
        discover["cacheScope"] = json!("public");
        if let Some(instructions) = &instructions {
            discover["instructions"] = json!(instructions);
        }
        let progressive = (catalog == Catalog::Progressive).then(|| Progressive::new(&registry));
        let listed = |keep: &dyn Fn(&Tool) -> bool| -> Vec<Vec<u8>> {
            let tools = registry.tools().iter().filter(|tool| keep(tool));
            let meta = match progressive {
                Some(_) => Progressive::meta_descriptors(&registry).to_vec(),
                None => Vec::new(),
            };
            meta.into_iter()
                .chain(tools.map(|tool| tool.json().to_vec()))
                .collect()
        };
        let new_listing = |tools: Option<Vec<Vec<u8>>>| {
            Listing::new(registry.manifest(), tools.as_deref(), page_size, &cacheable)
        };
        // In progressive mode the list holds the meta-tools, then the core tools; clients with
        // views also get the tools only views call, which their host keeps from the model.
        let (listing, model_listing) = match progressive {
            None => (
                new_listing(None),
                app_only.then(|| new_listing(Some(listed(&|tool| !tool.is_app_only())))),
            ),
            Some(_) => (
                new_listing(Some(listed(&|tool| tool.is_core() || tool.is_app_only()))),
                app_only.then(|| {
                    new_listing(Some(listed(&|tool| tool.is_core() && !tool.is_app_only())))
                }),
            ),
        };
        Dispatcher {
            registry,
            name,
            version,
            instructions,
            listing,
            model_listing,
            capabilities,
            ttl_ms,
            discover: serde_json::to_vec(&discover).expect("a JSON value serialises"),
            result_meta,
            client_request_timeout,
            progressive,
        }
    }

    /// Handles one message from the client; what a call sends while it runs goes to `sink`.
    pub(crate) fn handle(
        self: &Arc<Self>,
        session: &Arc<Session>,
        line: &[u8],
        sink: &Sink,
    ) -> Step {
        match jsonrpc::parse(line) {
            Err(reply) => Step::Reply(reply),
            Ok(Incoming::Response { id, outcome }) => {
                let answer = outcome.map_err(|error| ClientRequestError::Client {
                    code: error.code,
                    message: error.message,
                    data: error.data,
                });
                session.requests.resolve(&id, answer);
                Step::Nothing
            }
            Ok(Incoming::Notification { method, params }) => {
                self.notification(session, &method, &params);
                Step::Nothing
            }
            Ok(Incoming::Request { id, method, params }) => match session.era(&method, &params) {
                Era::Handshake { version } => {
                    self.handshake_request(session, id, &method, params, sink, version)
                }
                Era::Stateless => self.stateless_request(session, id, &method, params, sink),
            },
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

    /// A request on a connection that opened with the `initialize` handshake (or without the
    /// 2026-07-28 envelope).
    fn handshake_request(
        self: &Arc<Self>,
        session: &Arc<Session>,
        id: Value,
        method: &str,
        params: Value,
        sink: &Sink,
        initialized: Option<&'static str>,
    ) -> Step {
        if method != "initialize" && has_envelope(&params) {
            return Step::Reply(jsonrpc::error(
                &id,
                INVALID_REQUEST,
                "this connection speaks the `initialize` handshake (protocol 2024-11-05 to \
                 2025-11-25), so a request carrying the 2026-07-28 `_meta` envelope is refused \
                 on it: for protocol 2026-07-28, open a new connection whose first request is \
                 `server/discover`",
            ));
        }
        let reply = match (method, initialized) {
            ("ping", _) => jsonrpc::result(&id, &json!({})),
            ("initialize", None) => self.initialize(session, &id, &params),
            ("initialize", Some(_)) => {
                jsonrpc::error(&id, INVALID_REQUEST, "the session is already initialized")
            }
            (
                "tools/list"
                | "tools/call"
                | "logging/setLevel"
                | "resources/list"
                | "resources/read"
                | "resources/templates/list",
                None,
            ) => jsonrpc::error(
                &id,
                INVALID_REQUEST,
                "the session is not initialized: send `initialize` first",
            ),
            ("tools/list", Some(_)) => {
                let apps = session.client().has_apps();
                return self.list_tools(&id, &params, Wire::Handshake, apps);
            }
            (
                method @ ("resources/list" | "resources/read" | "resources/templates/list"),
                Some(_),
            ) => self.resources(&id, method, &params, Wire::Handshake),
            ("tools/call", Some(_)) => {
                let caller = Caller {
                    log_level: Arc::clone(&session.log_level),
                    client: session.client().clone(),
                };
                return self.call_tool(session, id, params, sink, Wire::Handshake, caller);
            }
            ("logging/setLevel", Some(_)) => set_level(session, &id, &params),
            ("server/discover", _) => jsonrpc::error(
                &id,
                METHOD_NOT_FOUND,
                "method `server/discover` is not available on this connection: it speaks the \
                 `initialize` handshake, having opened without the 2026-07-28 `_meta` \
                 envelope (`io.modelcontextprotocol/protocolVersion`)",
            ),
            (other, _) => jsonrpc::error(
                &id,
                METHOD_NOT_FOUND,
                &format!("method `{other}` is not supported"),
            ),
        };
        Step::Reply(reply)
    }

    /// A request on a connection that opened with the 2026-07-28 envelope.
    fn stateless_request(
        self: &Arc<Self>,
        session: &Arc<Session>,
        id: Value,
        method: &str,
        params: Value,
        sink: &Sink,
    ) -> Step {
        if method == "initialize" {
            let mut data = json!({ "supported": STATELESS_VERSIONS });
            if let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) {
                data["requested"] = json!(requested);
            }
            return Step::Reply(jsonrpc::error_with_data(
                &id,
                UNSUPPORTED_PROTOCOL_VERSION,
                "this connection speaks protocol 2026-07-28, which has no `initialize` \
                 handshake: it opened with a request carrying the 2026-07-28 `_meta` envelope; \
                 for the handshake, open a new connection whose first request is `initialize`",
                &data,
            ));
        }
        let envelope = match Envelope::read(&id, &params) {
            Ok(envelope) => envelope,
            Err(reply) => return Step::Reply(reply),
        };
        let reply = match method {
            "server/discover" => jsonrpc::result_bytes(&id, &self.discover),
            "tools/list" => {
                let apps = envelope.client.has_apps();
                return self.list_tools(&id, &params, Wire::Stateless, apps);
            }
            "resources/list" | "resources/read" | "resources/templates/list" => {
                self.resources(&id, method, &params, Wire::Stateless)
            }
            "tools/call" => {
                // Log messages only when the request asks for them, at the level it names.
                let threshold = envelope.log_level.map_or(LogLevel::OFF, |l| l as u8);
                let caller = Caller {
                    log_level: Arc::new(AtomicU8::new(threshold)),
                    client: envelope.client,
                };
                return self.call_tool(session, id, params, sink, Wire::Stateless, caller);
            }
            "ping" => jsonrpc::error(
                &id,
                METHOD_NOT_FOUND,
                "method `ping` was removed in protocol 2026-07-28",
            ),
            "logging/setLevel" => jsonrpc::error(
                &id,
                METHOD_NOT_FOUND,
                "method `logging/setLevel` was removed in protocol 2026-07-28: a request asks \
                 for log messages with `io.modelcontextprotocol/logLevel` in its `_meta`",
            ),
            other => jsonrpc::error(
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
        *session.era_lock() = Some(Era::Handshake {
            version: Some(version),
        });
        *session.client() = Client {
            capabilities: params.get("capabilities").cloned().map(Arc::new),
            info: params.get("clientInfo").cloned().map(Arc::new),
        };
        let client = params.pointer("/clientInfo/name").and_then(Value::as_str);
        tracing::info!(client, requested, version, "session initialized");
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": self.capabilities,
            "serverInfo": { "name": self.name, "version": self.version },
        });
        if let Some(instructions) = &self.instructions {
            result["instructions"] = json!(instructions);
        }
        jsonrpc::result(id, &result)
    }

    fn list_tools(&self, id: &Value, params: &Value, wire: Wire, apps: bool) -> Step {
        let listing = match &self.model_listing {
            Some(listing) if !apps => listing,
            _ => &self.listing,
        };
        let page = match params.get("cursor").filter(|c| !c.is_null()) {
            None => 0,
            Some(cursor) => match listing.page_for(cursor) {
                Some(page) => page,
                None if listing.pages.len() == 1 => {
                    return Step::Reply(jsonrpc::error(
                        id,
                        INVALID_PARAMS,
                        &format!(
                            "invalid cursor {cursor}: this server lists every tool on one page"
                        ),
                    ));
                }
                None => {
                    return Step::Reply(jsonrpc::error(
                        id,
                        INVALID_PARAMS,
                        &format!(
                            "invalid cursor {cursor}: it is not one this server handed out; \
                             list from the first page, without a cursor"
                        ),
                    ));
                }
            },
        };
        let page = listing.pages[page].clone();
        Step::Shared(match wire {
            Wire::Handshake => SharedResult::new(id, page),
            Wire::Stateless => SharedResult::with_members(id, page, &listing.stateless_members),
        })
    }

    /// A resources request: the server's views, or "method not found" when it has none.
    fn resources(&self, id: &Value, method: &str, params: &Value, wire: Wire) -> Vec<u8> {
        if self.registry.ui_resources().len() == 0 {
            return jsonrpc::error(
                id,
                METHOD_NOT_FOUND,
                &format!("method `{method}` is not supported"),
            );
        }
        let not_found = match wire {
            Wire::Handshake => RESOURCE_NOT_FOUND,
            Wire::Stateless => INVALID_PARAMS,
        };
        let outcome = match method {
            "resources/list" => resources::list(&self.registry, params),
            "resources/read" => resources::read(&self.registry, params, not_found),
            _ => resources::templates(params),
        };
        // A list result in 2026-07-28 says how long it may be cached; the views do not change
        // while the server runs.
        let outcome = outcome.map(|mut result| {
            if wire == Wire::Stateless && method != "resources/read" {
                merge(
                    &mut result,
                    &json!({ "ttlMs": self.ttl_ms, "cacheScope": "public" }),
                );
            }
            result
        });
        match outcome {
            Ok(result) => jsonrpc::result(id, &self.shape(result, wire)),
            Err(Failure {
                code,
                message,
                data: Some(data),
            }) => jsonrpc::error_with_data(id, code, &message, &data),
            Err(Failure { code, message, .. }) => jsonrpc::error(id, code, &message),
        }
    }

    /// A result as the connection's era has it: in the stateless era, with `resultType` and the
    /// server's name.
    fn shape(&self, mut result: Value, wire: Wire) -> Value {
        if wire == Wire::Stateless {
            merge(
                &mut result,
                &json!({ "resultType": "complete", "_meta": self.result_meta }),
            );
        }
        result
    }

    /// The tool a `tools/call` runs, and its arguments: the named tool, or in progressive mode
    /// the tool `call_tool` names. `search_tools` answers here, at once.
    fn resolve(&self, params: &mut Value, apps: bool) -> Result<(&Tool, Value), Refusal> {
        let arguments = params.get_mut("arguments").map(Value::take);
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(Refusal::Protocol(
                "`tools/call` needs a `name` string".to_owned(),
            ));
        };
        let arguments = match arguments {
            None | Some(Value::Null) => Value::Object(Default::default()),
            Some(args @ Value::Object(_)) => args,
            Some(_) => {
                return Err(Refusal::Protocol(
                    "`arguments` must be an object".to_owned(),
                ));
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
                Err(Refusal::Capability(format!(
                    "{}and this client has not declared the extension \
                     (`capabilities.extensions[\"{}\"]`)",
                    for_views(tool),
                    apps::EXTENSION_ID
                )))
            } else {
                Ok(())
            }
        };
        let Some(progressive) = &self.progressive else {
            return match self.registry.get(name) {
                Some(tool) => direct(tool).map(|()| (tool, arguments)),
                None => Err(Refusal::Protocol(format!("unknown tool `{name}`"))),
            };
        };
        let unknown = |name: &str| {
            format!("unknown tool `{name}`: `{SEARCH_TOOL}` finds the tools this server has")
        };
        match name {
            SEARCH_TOOL => Err(Refusal::Tool(
                progressive.search(&self.registry, &arguments),
            )),
            CALL_TOOL => {
                let (name, arguments) = unwrap_call(arguments).map_err(Refusal::Tool)?;
                match self.registry.get(&name) {
                    Some(tool) if tool.is_app_only() => Err(Refusal::Tool(ToolResult::error(
                        format!("{}not through `{CALL_TOOL}`", for_views(tool)),
                    ))),
                    Some(tool) => Ok((tool, arguments)),
                    None => Err(Refusal::Tool(ToolResult::error(unknown(&name)))),
                }
            }
            name => match self.registry.get(name) {
                Some(tool) => direct(tool).map(|()| (tool, arguments)),
                None => Err(Refusal::Protocol(unknown(name))),
            },
        }
    }

    fn call_tool(
        self: &Arc<Self>,
        session: &Arc<Session>,
        id: Value,
        mut params: Value,
        sink: &Sink,
        wire: Wire,
        caller: Caller,
    ) -> Step {
        let (tool, arguments) = match self.resolve(&mut params, caller.client.has_apps()) {
            Ok(found) => found,
            Err(Refusal::Protocol(message)) => {
                return Step::Reply(jsonrpc::error(&id, INVALID_PARAMS, &message));
            }
            Err(Refusal::Capability(message)) => {
                let code = match wire {
                    Wire::Handshake => INVALID_PARAMS,
                    Wire::Stateless => MISSING_CLIENT_CAPABILITY,
                };
                return Step::Reply(jsonrpc::error(&id, code, &message));
            }
            Err(Refusal::Tool(result)) => {
                let result = serde_json::to_value(result).expect("a tool result serialises");
                return Step::Reply(jsonrpc::result(&id, &self.shape(result, wire)));
            }
        };
        let name = tool.wire_name();
        if let Err(problems) = tool.check_arguments(&arguments) {
            let text = problem_text(&format!("invalid arguments for tool `{name}`"), &problems);
            let result = serde_json::to_value(ToolResult::error(text)).expect("serialises");
            return Step::Reply(jsonrpc::result(&id, &self.shape(result, wire)));
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
            log_level: caller.log_level,
            client_capabilities: caller.client.capabilities,
            client_info: caller.client.info,
            requests: Arc::clone(&session.requests),
            request_timeout: self.client_request_timeout,
            stateless: wire == Wire::Stateless,
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
            // Cancellation first: a tool that notices it and returns sends no response either.
            let outcome = tokio::select! {
                biased;
                () = cancellation.cancelled() => None,
                result = run(tool, arguments, ctx) => Some(result),
            };
            session.in_flight().remove(&key);
            outcome.map(|result| jsonrpc::result(&id, &dispatcher.shape(result, wire)))
        }))
    }
}

/// Why a `tools/call` does not run a tool.
enum Refusal {
    /// A malformed request or an unknown tool: a JSON-RPC error.
    Protocol(String),
    /// A tool for MCP Apps views, called by a client that did not declare the extension: -32602,
    /// or in 2026-07-28 the error that names a missing client capability.
    Capability(String),
    /// An answer for the model: the progressive catalog's search, or a `call_tool` that cannot
    /// run what it names.
    Tool(ToolResult),
}

/// What the server offers, in both eras: with views, resources and the MCP Apps extension too.
fn capabilities(registry: &Registry) -> Value {
    let mut capabilities = json!({ "tools": { "listChanged": false }, "logging": {} });
    if registry.ui_resources().len() > 0 {
        capabilities["resources"] = json!({ "listChanged": false });
        capabilities["extensions"] = apps::server_capability();
    }
    capabilities
}

/// Adds `extra`'s members to the object `into`.
fn merge(into: &mut Value, extra: &Value) {
    if let (Value::Object(into), Value::Object(extra)) = (into, extra) {
        into.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
}

/// One line for one problem, a list for several.
fn problem_text(head: &str, problems: &str) -> String {
    if problems.contains('\n') {
        format!("{head}:\n- {}", problems.replace('\n', "\n- "))
    } else {
        format!("{head}: {problems}")
    }
}

/// What a stateless-era request says about itself in `params._meta`.
struct Envelope {
    /// The least severe log message the request wants; `None`: none at all.
    log_level: Option<LogLevel>,
    /// The client's capabilities and who it is, as the request declares them.
    client: Client,
}

impl Envelope {
    /// Reads the envelope, or the error to answer: a missing or malformed member is -32602, a
    /// version this server does not speak -32022 with the versions it does.
    fn read(id: &Value, params: &Value) -> Result<Envelope, Vec<u8>> {
        let invalid = |message: &str| jsonrpc::error(id, INVALID_PARAMS, message);
        let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
            return Err(invalid(
                "`params._meta` must be an object with `io.modelcontextprotocol/protocolVersion` \
                 and `io.modelcontextprotocol/clientCapabilities`: protocol 2026-07-28 requires \
                 them on every request",
            ));
        };
        let missing: Vec<String> = [PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY]
            .into_iter()
            .filter(|key| !meta.contains_key(*key))
            .map(|key| format!("`{key}`"))
            .collect();
        if !missing.is_empty() {
            return Err(invalid(&format!(
                "`params._meta` lacks {}: protocol 2026-07-28 requires {} on every request",
                missing.join(" and "),
                if missing.len() == 1 { "it" } else { "them" },
            )));
        }
        let Some(requested) = meta[PROTOCOL_VERSION_KEY].as_str() else {
            return Err(invalid(
                "`io.modelcontextprotocol/protocolVersion` in `params._meta` must be a string",
            ));
        };
        if !STATELESS_VERSIONS.contains(&requested) {
            return Err(jsonrpc::error_with_data(
                id,
                UNSUPPORTED_PROTOCOL_VERSION,
                &format!(
                    "unsupported protocol version `{requested}`: this connection speaks {}",
                    STATELESS_VERSIONS.join(", ")
                ),
                &json!({ "supported": STATELESS_VERSIONS, "requested": requested }),
            ));
        }
        if !meta[CLIENT_CAPABILITIES_KEY].is_object() {
            return Err(invalid(
                "`io.modelcontextprotocol/clientCapabilities` in `params._meta` must be an object",
            ));
        }
        let log_level = match meta.get(LOG_LEVEL_KEY) {
            None | Some(Value::Null) => None,
            Some(level) => match level.as_str().and_then(LogLevel::from_name) {
                Some(level) => Some(level),
                None => {
                    return Err(invalid(&format!(
                        "`io.modelcontextprotocol/logLevel` in `params._meta` must be one of \
                         {LEVELS}"
                    )));
                }
            },
        };
        let client = Client {
            capabilities: Some(Arc::new(meta[CLIENT_CAPABILITIES_KEY].clone())),
            info: meta.get(CLIENT_INFO_KEY).cloned().map(Arc::new),
        };
        Ok(Envelope { log_level, client })
    }
}

/// The `tools/list` results, serialised once: a page at a time, in both eras.
struct Listing {
    /// Each page's result in the handshake era; a single page is the manifest's own bytes.
    pages: Vec<Bytes>,
    /// `cursors[i]` asks for page `i + 1`.
    cursors: Vec<String>,
    /// What the stateless era adds to every page (`ttlMs`, `cacheScope`, `resultType`,
    /// `_meta`): object members, without braces.
    stateless_members: Vec<u8>,
}

impl Listing {
    /// The pages of the manifest's tools, or, when `listed` says, of these tools instead (the
    /// progressive catalog's).
    fn new(
        manifest: &Manifest,
        listed: Option<&[Vec<u8>]>,
        page_size: Option<usize>,
        cacheable: &Value,
    ) -> Listing {
        let members = serde_json::to_vec(cacheable).expect("a JSON value serialises");
        let stateless_members = members[1..members.len() - 1].to_vec();
        let tools: Vec<&[u8]> = match listed {
            Some(listed) => listed.iter().map(Vec::as_slice).collect(),
            None => manifest.tool_bytes().collect(),
        };
        let size = match page_size {
            Some(size) if tools.len() > size => size,
            _ if listed.is_none() => {
                return Listing {
                    pages: vec![manifest.shared_bytes()],
                    cursors: Vec::new(),
                    stateless_members,
                };
            }
            // A list of its own on one page; `chunks` needs at least one tool per page, and a
            // list of none (every tool for views only) is one empty page.
            _ => tools.len().max(1),
        };
        let mut chunks: Vec<&[&[u8]]> = tools.chunks(size).collect();
        if chunks.is_empty() {
            chunks.push(&[]);
        }
        // Cursors are tied to what is listed: the manifest, or the progressive list's own bytes
        // (which tools are core is not in the manifest).
        let list_hash = match listed {
            Some(listed) => crate::manifest::sha256_hex(&listed.concat()),
            None => manifest.sha256().to_owned(),
        };
        let cursors: Vec<String> = (1..chunks.len())
            .map(|page| cursor(&list_hash, page))
            .collect();
        let pages = chunks
            .iter()
            .enumerate()
            .map(|(i, chunk)| {
                // Keys in order, as in the manifest: `nextCursor` before `tools`.
                let mut page = b"{".to_vec();
                if let Some(next) = cursors.get(i) {
                    page.extend_from_slice(br#""nextCursor":"#);
                    serde_json::to_writer(&mut page, next).expect("a string serialises");
                    page.push(b',');
                }
                page.extend_from_slice(br#""tools":["#);
                page.extend_from_slice(&chunk.join(&b","[..]));
                page.extend_from_slice(b"]}");
                page.into()
            })
            .collect();
        Listing {
            pages,
            cursors,
            stateless_members,
        }
    }

    /// The page a cursor asks for, if this server handed it out.
    fn page_for(&self, cursor: &Value) -> Option<usize> {
        let cursor = cursor.as_str()?;
        self.cursors.iter().position(|c| c == cursor).map(|i| i + 1)
    }
}

/// The cursor for a page: opaque to clients, and tied to this tool list by its hash, so a cursor
/// from another build of the server, or from the other catalog mode, is refused rather than
/// misread.
fn cursor(list_hash: &str, page: usize) -> String {
    let hash = &list_hash[..16];
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{hash}:{page}"))
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
            &format!("`level` must be one of {LEVELS}"),
        ),
    }
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
                Err(_) => {
                    return call_result(
                        tool,
                        Output(Produced::Error(format!(
                            "tool `{}` was stopped before it finished",
                            tool.name()
                        ))),
                    );
                }
            }
        }
    };
    let output = caught.unwrap_or_else(|payload| {
        let message = panic_message(&*payload);
        tracing::error!(tool = tool.name(), message, "tool panicked");
        Output(Produced::Error(format!(
            "tool `{}` panicked: {message}",
            tool.name()
        )))
    });
    call_result(tool, output)
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
    #[cfg(debug_assertions)]
    let result = match tool.check_output(&result) {
        Ok(()) => result,
        Err(problems) => {
            // Sending it would break the contract the tool lists; a tool error says why instead.
            tracing::error!(
                tool = tool.name(),
                problems,
                "a result does not match the tool's output schema; sent as a tool error (debug \
                 builds check this)"
            );
            ToolResult::error(problem_text(
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
