//! An MCP client (feature `client`): connects to a server it starts (stdio) or reaches at a URL
//! (Streamable HTTP), in either protocol era, and lists, calls, gets, reads and completes; the
//! server's requests (sampling, elicitation, roots) are answered by handlers, its notifications
//! delivered to a callback, a call's progress (and, over HTTP, its log messages) to the call.
//!
//! ```no_run
//! use serde_json::json;
//! use toolwright::client::{Client, Endpoint};
//!
//! # async fn run() -> Result<(), toolwright::client::Error> {
//! let time = Client::builder()
//!     .name("time")
//!     .connect(Endpoint::command("uvx", ["mcp-server-time"]))
//!     .await?;
//! for tool in time.list_tools().await? {
//!     println!("{}: {}", tool.name(), tool.description().unwrap_or_default());
//! }
//! let now = time
//!     .call_tool("get_current_time", json!({"timezone": "Europe/Paris"}))
//!     .on_progress(|progress| eprintln!("{:?}", progress.message))
//!     .await?;
//! println!("{}", now.text());
//! time.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! The era is settled as the connection opens ([`Versions`]): by default `server/discover`
//! (2026-07-28) is asked first and, on any error or no answer within 10 s, the connection opens
//! with `initialize` (2025-11-25, down to 2024-11-05). In 2026-07-28 every request carries the
//! envelope, and a result that asks for input (`input_required`) is answered with the
//! handlers and the request sent again, until it completes.
//!
//! Every request has a time limit (60 s unless [`Builder::timeout`] or [`Request::timeout`]
//! says otherwise). A request given up, past its limit or because its future was dropped, is
//! cancelled: the server is sent `notifications/cancelled` or, over HTTP in 2026-07-28, its
//! stream is closed.

mod endpoint;
mod era;
mod error;
mod handlers;
mod http;
mod link;
mod peer;
mod results;
mod stdio;

use std::future::{Future, IntoFuture};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

pub use crate::answers::{CallResult, RpcError};
pub use endpoint::Endpoint;
pub use era::Versions;
pub use error::Error;
pub use handlers::{LogMessage, Notification, Progress};
pub use results::Tool;

use self::endpoint::Kind;
use self::era::{Era, Introduction, Opened};
use self::handlers::{Answerer, Handlers, RequestHandler};
use self::link::Link;
use self::peer::{Options, Peer};
use crate::protocol::LogLevel;
use futures_util::future::BoxFuture;

/// How long a request waits for its answer unless told otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long `server/discover` waits before the client opens with `initialize` instead.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);
/// How many times a 2026-07-28 request is sent again with the input it asked for.
const MAX_INPUT_ROUNDS: usize = 16;

/// A connection to an MCP server. Cheap to clone: clones share the connection, which ends
/// when the last is dropped (a command's process is killed) or at [`close`](Client::close).
#[derive(Clone)]
pub struct Client {
    peer: Arc<Peer>,
    opened: Arc<Opened>,
    timeout: Option<Duration>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.peer.name)
            .field("protocol_version", &self.protocol_version())
            .finish_non_exhaustive()
    }
}

/// Builds a [`Client`]: its name for the server, the era, time limits and handlers.
#[must_use]
pub struct Builder {
    name: String,
    info: Value,
    versions: Versions,
    timeout: Option<Duration>,
    discovery_timeout: Duration,
    handlers: Handlers,
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("name", &self.name)
            .field("versions", &self.versions)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A builder, of a client named `toolwright-client` to the server.
    pub fn builder() -> Builder {
        Builder {
            name: "server".to_owned(),
            info: json!({"name": "toolwright-client", "version": env!("CARGO_PKG_VERSION")}),
            versions: Versions::Auto,
            timeout: Some(DEFAULT_TIMEOUT),
            discovery_timeout: DISCOVERY_TIMEOUT,
            handlers: Handlers::default(),
        }
    }

    /// Connects to `endpoint` with the builder's defaults.
    pub async fn connect(endpoint: Endpoint) -> Result<Client, Error> {
        Client::builder().connect(endpoint).await
    }

    /// The protocol version the connection speaks: `2026-07-28`, or the one `initialize`
    /// settled on.
    pub fn protocol_version(&self) -> &'static str {
        self.opened.era.version()
    }

    /// What the server says of itself (`serverInfo`): its name and version.
    pub fn server_info(&self) -> &Value {
        &self.opened.server_info
    }

    /// The server's capabilities.
    pub fn capabilities(&self) -> &Value {
        &self.opened.capabilities
    }

    /// The server's instructions, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.opened.instructions.as_deref()
    }

    /// Every tool the server lists, page after page.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        let tools = self.list("tools/list", "tools").await?;
        Ok(tools.into_iter().map(Tool).collect())
    }

    /// Calls the tool `name` with `arguments` (a JSON object).
    pub fn call_tool(&self, name: &str, arguments: Value) -> Request<'_, CallResult> {
        Request::new(
            self,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
            |result| Ok(CallResult(result)),
        )
        .naming(name)
    }

    /// Every prompt the server lists, page after page, as sent.
    pub async fn list_prompts(&self) -> Result<Vec<Value>, Error> {
        self.list("prompts/list", "prompts").await
    }

    /// Gets the prompt `name` with `arguments` (a JSON object of strings): its messages.
    pub fn get_prompt(&self, name: &str, arguments: Value) -> Request<'_, Value> {
        Request::new(
            self,
            "prompts/get",
            json!({"name": name, "arguments": arguments}),
            Ok,
        )
        .naming(name)
    }

    /// Every resource the server lists, page after page, as sent.
    pub async fn list_resources(&self) -> Result<Vec<Value>, Error> {
        self.list("resources/list", "resources").await
    }

    /// Every resource template the server lists, page after page, as sent.
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, Error> {
        self.list("resources/templates/list", "resourceTemplates")
            .await
    }

    /// Reads the resource at `uri`: its contents.
    pub fn read_resource(&self, uri: &str) -> Request<'_, Value> {
        Request::new(self, "resources/read", json!({"uri": uri}), Ok).naming(uri)
    }

    /// Asks to be told when the resource at `uri` changes (`notifications/resources/updated`).
    pub async fn subscribe(&self, uri: &str) -> Result<(), Error> {
        self.request("resources/subscribe", json!({"uri": uri}))
            .await
            .map(drop)
    }

    /// No longer asks to be told when the resource at `uri` changes.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        self.request("resources/unsubscribe", json!({"uri": uri}))
            .await
            .map(drop)
    }

    /// The server's completions for the argument `argument` of `reference` (a
    /// `{"type": "ref/prompt", "name": ...}` or `{"type": "ref/resource", "uri": ...}`), whose
    /// value so far is `value`: its `completion` object.
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
    ) -> Result<Value, Error> {
        let params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
        let result = self.request("completion/complete", params).await?;
        Ok(result.get("completion").cloned().unwrap_or(Value::Null))
    }

    /// Asks for the server's log messages at `level` and above (handshake era; in 2026-07-28
    /// the level travels with each request).
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), Error> {
        self.request("logging/setLevel", json!({"level": level}))
            .await
            .map(drop)
    }

    /// Sends `ping` and waits for the answer (handshake era).
    pub async fn ping(&self) -> Result<(), Error> {
        self.request("ping", json!({})).await.map(drop)
    }

    /// Sends any request: `method` with `params` (a JSON object), shaped for the connection's
    /// era; its result, as sent.
    pub fn request(&self, method: &str, params: Value) -> Request<'_, Value> {
        Request::new(self, method, params, Ok)
    }

    /// Completes when the connection ends, with why: the command's process exited, the HTTP
    /// server said the session is over (`404 Not Found`), or [`close`](Client::close) ended it.
    /// A connection that ended answers no more requests; a new one is made with
    /// [`connect`](Builder::connect).
    pub async fn closed(&self) -> String {
        self.peer.ended().await
    }

    /// Ends the connection: a command's input is closed and the process given a second to exit
    /// before it is killed; an HTTP session is deleted.
    pub async fn close(&self) {
        self.peer.link().close().await;
    }

    /// Every item of a paginated list, following `nextCursor`.
    async fn list(&self, method: &str, key: &str) -> Result<Vec<Value>, Error> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let mut result = self.request(method, params).await?;
            match result.get_mut(key).map(Value::take) {
                Some(Value::Array(page)) => items.extend(page),
                _ => {
                    return Err(Error::Protocol {
                        server: self.peer.name.clone(),
                        method: method.to_owned(),
                        reason: format!("its result has no `{key}` array"),
                    });
                }
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_owned()),
                _ => return Ok(items),
            }
        }
    }

    /// Sends `method` with `params` until it completes: in 2026-07-28, a result that asks for
    /// input is answered by the handlers and the request sent again with it.
    async fn send(&self, method: &str, params: Value, options: Options) -> Result<Value, Error> {
        let era = &self.opened.era;
        let mut params = params;
        for _ in 0..MAX_INPUT_ROUNDS {
            let result = self
                .peer
                .request(method, &params, era.envelope(), options.clone())
                .await?;
            if !matches!(era, Era::Stateless { .. })
                || result.get("resultType").and_then(Value::as_str) != Some("input_required")
            {
                return Ok(result);
            }
            let responses = self
                .answer_input(method, &result, options.answerer.as_ref())
                .await?;
            if !params.is_object() {
                params = json!({});
            }
            let object = params.as_object_mut().expect("params are an object");
            object.insert("inputResponses".to_owned(), responses);
            match result.get("requestState") {
                Some(state) => object.insert("requestState".to_owned(), state.clone()),
                None => object.remove("requestState"),
            };
        }
        Err(Error::Protocol {
            server: self.peer.name.clone(),
            method: method.to_owned(),
            reason: format!("it asked for input {MAX_INPUT_ROUNDS} times without completing"),
        })
    }

    /// The answers to what an `input_required` result of `method` asks, by its keys: from the
    /// request's own `answerer` if it has one, else from the handlers.
    async fn answer_input(
        &self,
        method: &str,
        result: &Value,
        answerer: Option<&Answerer>,
    ) -> Result<Value, Error> {
        let asked = result
            .get("inputRequests")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut answers = serde_json::Map::new();
        for (key, request) in asked {
            let wanted = request.get("method").and_then(Value::as_str).unwrap_or("");
            let params = request.get("params").cloned().unwrap_or(json!({}));
            let answered = match answerer {
                Some(answerer) => answerer(wanted.to_owned(), params),
                None => match self.peer.handlers().for_request(wanted) {
                    Some(handler) => handler(params),
                    None => {
                        return Err(Error::Protocol {
                            server: self.peer.name.clone(),
                            method: method.to_owned(),
                            reason: format!(
                                "it asked for `{wanted}`, which this client does not answer"
                            ),
                        });
                    }
                },
            };
            let answer = answered.await.map_err(|error| Error::Rpc {
                server: self.peer.name.clone(),
                method: method.to_owned(),
                error,
            })?;
            answers.insert(key, answer);
        }
        Ok(Value::Object(answers))
    }
}

impl Builder {
    /// The server's name in errors and logs: `time` in "`time` did not answer `tools/call`
    /// within 60s". `server` by default.
    pub fn name(mut self, name: impl Into<String>) -> Builder {
        self.name = name.into();
        self
    }

    /// The client's `clientInfo`: its name and version, as the server sees them.
    pub fn client_info(mut self, name: &str, version: &str) -> Builder {
        self.info = json!({"name": name, "version": version});
        self
    }

    /// Which protocol era to speak, or how to choose ([`Versions::Auto`] by default).
    pub fn versions(mut self, versions: Versions) -> Builder {
        self.versions = versions;
        self
    }

    /// How long a request waits for its answer (60 s by default); `None`: without limit.
    pub fn timeout(mut self, limit: Option<Duration>) -> Builder {
        self.timeout = limit;
        self
    }

    /// How long `server/discover` waits before the connection opens with `initialize`
    /// instead (10 s by default, as the Python SDK's clients wait).
    pub fn discovery_timeout(mut self, limit: Duration) -> Builder {
        self.discovery_timeout = limit;
        self
    }

    /// Answers the server's `sampling/createMessage` requests (and declares the capability):
    /// `handler` gets their `params` and returns the result, or the error to answer with.
    pub fn on_sampling<F, Fut>(mut self, handler: F) -> Builder
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.sampling = Some(boxed(handler));
        self
    }

    /// Answers the server's `elicitation/create` requests (and declares the capability).
    pub fn on_elicitation<F, Fut>(mut self, handler: F) -> Builder
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.elicitation = Some(boxed(handler));
        self
    }

    /// Answers the server's `roots/list` requests (and declares the capability).
    pub fn on_roots<F, Fut>(mut self, handler: F) -> Builder
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.roots = Some(boxed(handler));
        self
    }

    /// Takes every notification the server sends that is not a request's progress: log
    /// messages, list changes, resource updates, ...
    pub fn on_notification(
        mut self,
        callback: impl Fn(Notification) + Send + Sync + 'static,
    ) -> Builder {
        self.handlers.notification = Some(Arc::new(callback));
        self
    }

    /// Connects to `endpoint`: starts the command, or reaches the URL, and opens the
    /// connection in the era [`versions`](Builder::versions) asks.
    pub async fn connect(self, endpoint: Endpoint) -> Result<Client, Error> {
        let (inbox, inbound) = mpsc::unbounded_channel();
        let link: Box<dyn Link> = match &endpoint.kind {
            Kind::Command(command) => Box::new(
                stdio::Pipe::start(&self.name, command, inbox).map_err(|error| Error::Connect {
                    server: self.name.clone(),
                    reason: format!(
                        "`{}` could not be started: {error}",
                        command.program.to_string_lossy()
                    ),
                })?,
            ),
            Kind::Url(url) => Box::new(http::Http::new(&self.name, url, inbox)?),
        };
        let introduction = Introduction {
            versions: self.versions,
            discovery_limit: self.discovery_timeout,
            request_limit: self.timeout,
            capabilities: self.handlers.capabilities(),
            info: self.info,
        };
        let peer = Peer::start(self.name, link, self.handlers, inbound);
        let opened = match era::open(&peer, &introduction).await {
            Ok(opened) => opened,
            Err(error) => {
                peer.link().close().await;
                return Err(error);
            }
        };
        Ok(Client {
            peer,
            opened: Arc::new(opened),
            timeout: self.timeout,
        })
    }
}

fn boxed<F, Fut>(handler: F) -> RequestHandler
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
{
    Arc::new(move |params| Box::pin(handler(params)))
}

/// A request about to be sent: `.await` it for its result, after setting what it does
/// meanwhile.
#[must_use = "a request is sent when it is awaited"]
pub struct Request<'a, T> {
    client: &'a Client,
    method: String,
    params: Value,
    options: Options,
    read: fn(Value) -> Result<T, Value>,
}

impl<T> std::fmt::Debug for Request<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl<'a, T> Request<'a, T> {
    fn new(
        client: &'a Client,
        method: &str,
        params: Value,
        read: fn(Value) -> Result<T, Value>,
    ) -> Request<'a, T> {
        Request {
            client,
            method: method.to_owned(),
            params,
            options: Options::limited(client.timeout),
            read,
        }
    }

    fn naming(mut self, name: &str) -> Request<'a, T> {
        self.options.name = Some(name.to_owned());
        self
    }

    /// Takes the server's progress reports on this request (and asks for them, with a
    /// `progressToken`).
    pub fn on_progress(mut self, callback: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.options.progress = Some(Arc::new(callback));
        self
    }

    /// Takes the server's log messages (`notifications/message`) that it sends for this
    /// request, in place of [`on_notification`](Builder::on_notification): those on its HTTP
    /// response. A server on stdio cannot say which request a message is for: its messages go
    /// to `on_notification`.
    pub fn on_log(mut self, callback: impl Fn(LogMessage) + Send + Sync + 'static) -> Self {
        self.options.log = Some(Arc::new(callback));
        self
    }

    /// Answers the server's requests made for this request, in place of the client's handlers
    /// ([`on_sampling`](Builder::on_sampling), [`on_elicitation`](Builder::on_elicitation),
    /// [`on_roots`](Builder::on_roots)): their method and `params` in, the result out. Those
    /// are, in 2026-07-28, what an `input_required` result asks; in the handshake era, the
    /// requests that come on this request's HTTP response, or, on a connection that cannot say
    /// (stdio), those that come while it is the only request waiting with an answerer. A
    /// request the client cannot tie to one goes to the handlers. A gateway passes each on to
    /// the client whose call it forwards this way.
    pub fn answering<F, Fut>(mut self, answerer: F) -> Self
    where
        F: Fn(String, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.options.answerer = Some(Arc::new(move |method, params| {
            Box::pin(answerer(method, params))
        }));
        self
    }

    /// How long this request waits for its answer; `None`: without limit.
    pub fn timeout(mut self, limit: Option<Duration>) -> Self {
        self.options.limit = limit;
        self
    }

    /// Adds `value` under `key` to the request's `params._meta`.
    pub fn meta(mut self, key: &str, value: Value) -> Self {
        meta(&mut self.params).insert(key.to_owned(), value);
        self
    }
}

/// The `_meta` object of `params`, made if missing.
fn meta(params: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !params.is_object() {
        *params = json!({});
    }
    let object = params.as_object_mut().expect("an object");
    let meta = object.entry("_meta").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    meta.as_object_mut().expect("an object")
}

impl<'a, T: Send + 'a> IntoFuture for Request<'a, T> {
    type Output = Result<T, Error>;
    type IntoFuture = BoxFuture<'a, Result<T, Error>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let client = self.client;
            let result = client.send(&self.method, self.params, self.options).await?;
            (self.read)(result).map_err(|result| Error::Protocol {
                server: client.peer.name.clone(),
                method: self.method.clone(),
                reason: format!("an answer this client cannot read: {result}"),
            })
        })
    }
}
