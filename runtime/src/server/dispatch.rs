//! Pure dispatch: one parsed message in, what to answer out. Knows nothing of pipes or sockets:
//! the transports frame bytes and hand each message over through [`Service`].

use std::sync::Arc;
use std::sync::atomic::AtomicU8;
use std::time::Duration;

use serde_json::{Value, json};

use super::call::{Caller, Calls};
use super::listing::Listing;
use super::resources;
use super::service::{Service, Sink, Step};
use super::session::{Era, Session};
use crate::apps;
use crate::catalog::{self, Audience, Catalog, Progressive};
use crate::context::ClientRequestError;
use crate::protocol::jsonrpc::{
    self, INVALID_PARAMS, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::protocol::{
    Client, Envelope, HANDSHAKE_VERSIONS, LogLevel, SERVER_INFO_KEY, STATELESS_VERSIONS, Wire,
    has_envelope, merge,
};
use crate::registry::{Registry, Tool};

/// What a server knows that does not change while it runs.
pub(crate) struct Dispatcher {
    registry: Arc<Registry>,
    name: String,
    version: String,
    instructions: Option<String>,
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
    result_meta: Arc<Value>,
    calls: Calls,
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
        let listing_for = |audience| {
            let listed = catalog::listed(progressive.as_ref(), &registry, audience);
            Listing::new(
                registry.manifest(),
                listed.as_deref(),
                page_size,
                &cacheable,
            )
        };
        let listing = listing_for(Audience::Apps);
        let model_listing = app_only.then(|| listing_for(Audience::Model));
        let registry = Arc::new(registry);
        Dispatcher {
            calls: Calls::new(Arc::clone(&registry), progressive, client_request_timeout),
            registry,
            name,
            version,
            instructions,
            listing,
            model_listing,
            capabilities,
            ttl_ms,
            discover: serde_json::to_vec(&discover).expect("a JSON value serialises"),
            result_meta: Arc::new(result_meta),
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
                return self.list_tools(&id, &params, &Wire::Handshake, &session.client());
            }
            (
                method @ ("resources/list" | "resources/read" | "resources/templates/list"),
                Some(_),
            ) => resources::answer(
                &self.registry,
                &id,
                method,
                &params,
                &Wire::Handshake,
                self.ttl_ms,
            ),
            ("tools/call", Some(_)) => {
                let caller = Caller {
                    log_level: Arc::clone(&session.log_level),
                    client: session.client(),
                };
                return self
                    .calls
                    .call(session, id, params, sink, Wire::Handshake, caller);
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
        &self,
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
        let wire = Wire::Stateless {
            meta: Arc::clone(&self.result_meta),
        };
        let reply = match method {
            "server/discover" => jsonrpc::result_bytes(&id, &self.discover),
            "tools/list" => return self.list_tools(&id, &params, &wire, &envelope.client),
            "resources/list" | "resources/read" | "resources/templates/list" => {
                resources::answer(&self.registry, &id, method, &params, &wire, self.ttl_ms)
            }
            "tools/call" => {
                // Log messages only when the request asks for them, at the level it names.
                let threshold = envelope.log_level.map_or(LogLevel::OFF, |l| l as u8);
                let caller = Caller {
                    log_level: Arc::new(AtomicU8::new(threshold)),
                    client: envelope.client,
                };
                return self.calls.call(session, id, params, sink, wire, caller);
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

    /// The tool list the client sees: with the tools only views call if it declared MCP Apps.
    fn list_tools(&self, id: &Value, params: &Value, wire: &Wire, client: &Client) -> Step {
        let listing = match &self.model_listing {
            Some(listing) if !client.has_apps() => listing,
            _ => &self.listing,
        };
        listing.answer(id, params, wire)
    }
}

impl Service for Dispatcher {
    fn handle(&self, session: &Arc<Session>, message: Incoming, sink: &Sink) -> Step {
        match message {
            Incoming::Response { id, outcome } => {
                let answer = outcome.map_err(|error| ClientRequestError::Client {
                    code: error.code,
                    message: error.message,
                    data: error.data,
                });
                session.requests.resolve(&id, answer);
                Step::Nothing
            }
            Incoming::Notification { method, params } => {
                self.notification(session, &method, &params);
                Step::Nothing
            }
            Incoming::Request { id, method, params } => match session.era(&method, &params) {
                Era::Handshake { version } => {
                    self.handshake_request(session, id, &method, params, sink, version)
                }
                Era::Stateless => self.stateless_request(session, id, &method, params, sink),
            },
        }
    }
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

fn set_level(session: &Session, id: &Value, params: &Value) -> Vec<u8> {
    match params
        .get("level")
        .and_then(Value::as_str)
        .and_then(LogLevel::from_name)
    {
        Some(level) => {
            session.set_log_level(level);
            jsonrpc::result(id, &json!({}))
        }
        None => jsonrpc::error(
            id,
            INVALID_PARAMS,
            &format!("`level` must be one of {}", LogLevel::names()),
        ),
    }
}
