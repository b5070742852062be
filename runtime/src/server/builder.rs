//! The [`Server`] builder: what a server's author chooses. Starting it is [`start`](super::start);
//! serving it is a transport's business.

use std::any::{Any, TypeId, type_name};
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::limits::{
    DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_SHUTDOWN_GRACE,
};
use super::pipeline::{BoxError, Call, Layer, Layers, Next, Outcome, Select, Service};
use crate::catalog::Catalog;
use crate::handler::BoxFuture;
use crate::live::ServerHandle;
use crate::registry::Registry;
use crate::state::States;
use crate::tasks::TaskConfig;

/// How long, by default, a tool waits for the client to answer a request of its own.
const DEFAULT_CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How long, by default, clients of protocol 2026-07-28 may cache the tool list.
const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(5 * 60);

/// An MCP server for every tool in a [`Registry`], by default every tool linked into the binary:
/// what is served, whichever transport carries it.
///
/// ```no_run
/// # async fn run() -> Result<(), toolwright::Error> {
/// toolwright::Server::new("notes", "1.0.0")
///     .instructions("Notes live in memory; search before you add.")
///     .serve_stdio()
///     .await
/// # }
/// ```
///
/// [`start`](Server::start) builds its state and gathers and checks its tools; a transport then
/// serves what it returns: [`stdio`](crate::stdio), or `http` with the `http` feature.
#[derive(Debug)]
pub struct Server {
    /// Who it says it is (`serverInfo`), and how the tools fit together.
    pub(super) name: String,
    pub(super) version: String,
    pub(super) instructions: Option<String>,
    /// The limits every transport applies.
    pub(super) max_message_size: usize,
    pub(super) max_concurrent_calls: usize,
    pub(super) shutdown_grace: Duration,
    pub(super) client_request_timeout: Duration,
    pub(super) call_timeout: Option<Duration>,
    /// Which tools: a registry given, the manifest made at build time, or every tool linked.
    pub(super) registry: Option<Registry>,
    pub(super) embedded: Option<&'static [u8]>,
    pub(super) namespaced: bool,
    /// How `tools/list` presents them.
    pub(super) catalog: Catalog,
    pub(super) page_size: Option<usize>,
    pub(super) cache_ttl: Duration,
    /// The model the progressive catalog ranks by meaning with, too.
    #[cfg(feature = "semantic")]
    pub(super) embedder: Option<Arc<crate::search::Embedder>>,
    /// The tools' vectors built with the binary, and where they are kept between starts.
    #[cfg(feature = "semantic")]
    pub(super) kept: crate::search::Kept,
    /// The application state given, and the state to build at start.
    pub(super) states: States,
    pub(super) pending: Vec<PendingState>,
    /// The handle its tools reach it by, and its author may hold.
    pub(super) handle: ServerHandle,
    /// The secret the state of input-required results is sealed with; drawn at start when none
    /// is given.
    pub(super) state_secret: Option<Vec<u8>>,
    /// The layers every call passes through, outermost first.
    pub(super) layers: Layers,
    /// How tasks are kept and bounded.
    pub(super) tasks: TaskConfig,
    /// The servers to mount as it starts, by name.
    #[cfg(feature = "gateway")]
    pub(super) mounts: Vec<(String, crate::gateway::Upstream)>,
    /// The mounted tools as a person approved them.
    #[cfg(feature = "gateway")]
    pub(super) lock: Option<crate::gateway::Lock>,
}

/// A state built at start, by [`Server::state_from`]: its type, and what builds it.
pub(super) struct PendingState {
    pub(super) id: TypeId,
    pub(super) name: &'static str,
    pub(super) build: BoxFuture<Result<Arc<dyn Any + Send + Sync>, String>>,
}

impl fmt::Debug for PendingState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PendingState").field(&self.name).finish()
    }
}

impl Server {
    /// A server that introduces itself with this name and version (`serverInfo`).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Server {
        Server {
            name: name.into(),
            version: version.into(),
            instructions: None,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            max_concurrent_calls: DEFAULT_MAX_CONCURRENT_CALLS,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            client_request_timeout: DEFAULT_CLIENT_REQUEST_TIMEOUT,
            call_timeout: None,
            registry: None,
            embedded: None,
            namespaced: false,
            catalog: Catalog::Full,
            page_size: None,
            cache_ttl: DEFAULT_CACHE_TTL,
            #[cfg(feature = "semantic")]
            embedder: None,
            #[cfg(feature = "semantic")]
            kept: crate::search::Kept::default(),
            states: States::default(),
            pending: Vec::new(),
            handle: ServerHandle::default(),
            state_secret: None,
            layers: Layers::default(),
            tasks: TaskConfig::new(),
            #[cfg(feature = "gateway")]
            mounts: Vec::new(),
            #[cfg(feature = "gateway")]
            lock: None,
        }
    }

    /// Serves the tools of the server `upstream` beside this one's, each as `<name>__<tool>`
    /// (canonical name `mcp::<name>::<tool>`), its calls forwarded there (feature `gateway`;
    /// see [`gateway`](crate::gateway)). `name` is a provider name: 1 to 64 of `A-Z a-z 0-9 _
    /// -`, with no `__`. The server is connected as this one starts.
    #[cfg(feature = "gateway")]
    pub fn mount(mut self, name: impl Into<String>, upstream: crate::gateway::Upstream) -> Server {
        self.mounts.push((name.into(), upstream));
        self
    }

    /// Serves the mounted servers' tools only as `lock` approved them (feature `gateway`): a
    /// tool whose description, schemas or annotations changed since is held back, absent from
    /// the list and refused by name with what changed; a tool the lock does not pin is held
    /// back too, or served, as its [`Upstream::new_tools`](crate::gateway::Upstream::new_tools)
    /// says. Without a lock, every mounted tool is served as its server lists it.
    #[cfg(feature = "gateway")]
    pub fn lock(mut self, lock: crate::gateway::Lock) -> Server {
        self.lock = Some(lock);
        self
    }

    /// How the server keeps its [tasks](crate::tasks): their store, how long each is kept,
    /// how often clients poll, how many one owner holds. By default in memory, an hour (a
    /// client may ask for up to a day), every second, 100.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use toolwright::tasks::TaskConfig;
    ///
    /// let server = toolwright::server!()
    ///     .tasks(TaskConfig::new().ttl(Duration::from_secs(10 * 60)).max_per_owner(10));
    /// ```
    pub fn tasks(mut self, config: TaskConfig) -> Server {
        self.tasks = config;
        self
    }

    /// The tasks' settings as `change` makes them of the present ones: what `--redis`,
    /// `--task-ttl` and `--max-tasks` do.
    #[cfg(feature = "cli")]
    pub(crate) fn with_tasks(mut self, change: impl FnOnce(TaskConfig) -> TaskConfig) -> Server {
        self.tasks = change(std::mem::take(&mut self.tasks));
        self
    }

    /// Seals the `requestState` of protocol 2026-07-28's input-required results (a tool's
    /// questions to the client, see [`Context::keyed`](crate::context::Keyed)) with this secret
    /// instead of one the process draws at start: replicas behind a load balancer given the same
    /// secret open each other's states, and a client's next round survives a restart. Keep it
    /// as secret as a signing key; 32 random bytes or more.
    ///
    /// # Panics
    ///
    /// When the secret is shorter than 32 bytes.
    #[must_use]
    #[track_caller]
    pub fn request_state_secret(mut self, secret: impl AsRef<[u8]>) -> Server {
        let secret = secret.as_ref();
        assert!(
            secret.len() >= 32,
            "a request state secret is 32 bytes or more, not {}",
            secret.len()
        );
        self.state_secret = Some(secret.to_vec());
        self
    }

    /// A handle on the server, to disable and enable its tools, prompts and resources while it
    /// runs and to tell clients that a resource changed; see [`ServerHandle`]. Take it before
    /// serving, and keep it (a task of the application, a watcher of files): every clone is the
    /// same handle, and tools reach it too, through their [`Context`](crate::Context::server).
    ///
    /// ```no_run
    /// let server = toolwright::server!();
    /// let handle = server.handle();
    /// // Served without `beta_search` until it is enabled.
    /// handle.disable_tool("beta_search").unwrap();
    /// # let _ = server;
    /// ```
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }

    /// The name it introduces itself with.
    #[cfg(feature = "cli")]
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The version it introduces itself with.
    #[cfg(feature = "cli")]
    pub(crate) fn version(&self) -> &str {
        &self.version
    }

    /// Instructions the client may give the model: how the tools fit together.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Server {
        self.instructions = Some(instructions.into());
        self
    }

    /// The largest message accepted, in bytes (default 4 MiB). A larger one is answered with an
    /// error and skipped; the server keeps serving.
    #[must_use]
    pub fn max_message_size(mut self, bytes: usize) -> Server {
        self.max_message_size = bytes;
        self
    }

    /// How many calls may run at once (default 64, at least 1): tool calls, and the prompts and
    /// resource reads that are not plain `fn`s on the runtime. Calls past the ceiling wait their
    /// turn; `ping`, cancellations and lists are answered meanwhile, and the streams of
    /// `subscriptions/listen`, which only wait, are not counted (1,024 at most stay open). On
    /// stdio, 1,024 calls at most wait: past them the server reads no further message until one
    /// starts, so a client that sends faster than its calls run waits instead of filling the
    /// server's memory.
    #[must_use]
    pub fn max_concurrent_calls(mut self, calls: usize) -> Server {
        self.max_concurrent_calls = calls.max(1);
        self
    }

    /// How long calls under way may take to finish once the client has closed the connection
    /// (default 5 seconds); calls still running then are stopped and the server returns.
    #[must_use]
    pub fn shutdown_grace(mut self, grace: Duration) -> Server {
        self.shutdown_grace = grace;
        self
    }

    /// Serves these tools instead of every tool linked into the binary.
    #[must_use]
    pub fn registry(mut self, registry: Registry) -> Server {
        self.registry = Some(registry);
        self
    }

    /// Puts every tool on the wire as `<provider>__<tool>`, for a server that gathers the tools
    /// of several crates (see [`Registry::namespaced`]).
    #[must_use]
    pub fn namespaced(mut self) -> Server {
        self.namespaced = true;
        self
    }

    /// Lists at most `tools` tools per `tools/list` page (at least 1), handing out an opaque
    /// `nextCursor` for the next page. By default every tool is on one page: some clients read
    /// only the first page, and a tool list is rarely long enough to need more.
    #[must_use]
    pub fn page_size(mut self, tools: usize) -> Server {
        self.page_size = Some(tools.max(1));
        self
    }

    /// How long clients of protocol 2026-07-28 may cache the tool list and what
    /// `server/discover` says (`ttlMs`; default 5 minutes). Neither changes while the server
    /// runs, and both are the same for every client (`cacheScope: "public"`), but for a tool
    /// list that leaves out the tools only MCP Apps views call from clients without the
    /// extension (`"private"`).
    #[must_use]
    pub fn cache_ttl(mut self, ttl: Duration) -> Server {
        self.cache_ttl = ttl;
        self
    }

    /// How long a tool waits for the client to answer a request it sends
    /// ([`Context::create_message`](crate::context::Context::create_message),
    /// [`Context::elicit`](crate::Context::elicit)); default 60 seconds. Past it the request is
    /// withdrawn (`notifications/cancelled`) and the tool gets
    /// [`ClientRequestError::Timeout`](crate::context::ClientRequestError::Timeout).
    #[must_use]
    pub fn client_request_timeout(mut self, timeout: Duration) -> Server {
        self.client_request_timeout = timeout;
        self
    }

    /// How long a call may run (`tools/call`, `prompts/get`, `resources/read`) before it is
    /// stopped; none by default. A tool's own `#[mcp_tool(timeout = "...")]` takes its place
    /// for that tool; `--call-timeout` on the command line sets it.
    ///
    /// Past it, the call's future is dropped, a blocking tool is told through
    /// [`Context::is_cancelled`](crate::Context::is_cancelled), and the client is answered at
    /// once: for a tool with a tool error (`isError`) that names the tool and the limit, which
    /// the model reads; for a prompt or a resource with an internal error saying the same. The
    /// limit bounds the function's run, not the layers around it.
    ///
    /// A call that runs as a [task](crate::tasks), or may become one, is bounded by the task's
    /// TTL instead: a task is for work longer than a request.
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// fn main() -> std::process::ExitCode {
    ///     toolwright::server!().call_timeout(Duration::from_secs(30)).run()
    /// }
    /// ```
    #[must_use]
    pub fn call_timeout(mut self, timeout: Duration) -> Server {
        self.call_timeout = Some(timeout);
        self
    }

    /// How `tools/list` presents the tools (default [`Catalog::Full`]). A server with more tools
    /// than a model should see at once lists the core ones and lets the model search for the
    /// rest with [`Catalog::Progressive`]; `--catalog` on the command line overrides this.
    ///
    /// ```no_run
    /// use toolwright::catalog::Catalog;
    ///
    /// fn main() -> std::process::ExitCode {
    ///     toolwright::server!().catalog(Catalog::Progressive).run()
    /// }
    /// ```
    #[must_use]
    pub fn catalog(mut self, catalog: Catalog) -> Server {
        self.catalog = catalog;
        self
    }

    /// Serves the tools as the manifest made at build time describes them
    /// ([`embedded_manifest!`](crate::build::embedded_manifest), see [`build`](crate::build)): `tools/list`
    /// is answered from those bytes and start-up derives no schema. Each linked tool must be in
    /// the manifest with the same name, title, description, annotations, `execution` and
    /// `_meta`, and each tool of the manifest must be linked, or the server does not start
    /// ([`Conflict::EmbeddedMismatch`](crate::registry::Conflict::EmbeddedMismatch)); debug builds also derive every schema and compare.
    /// Ignored when [`registry`](Server::registry) gives the tools.
    ///
    /// Start-up reads the index the build wrote after the manifest's JSON, not the JSON itself.
    /// A manifest's compact JSON alone (the bytes of [`Manifest::as_bytes`](crate::manifest::Manifest::as_bytes))
    /// is accepted too, and read with one pass of a JSON parser that skips the schemas.
    #[must_use]
    pub fn embedded_manifest(mut self, manifest: &'static [u8]) -> Server {
        self.embedded = Some(manifest);
        self
    }

    /// Gives the tools this application state: the value every `State<T>` parameter of type
    /// `T` receives (see [`state`](crate::state)). One value per type; a second replaces the
    /// first.
    ///
    /// ```no_run
    /// use toolwright::{State, mcp_tool};
    ///
    /// struct Greeting(String);
    ///
    /// /// Greet someone.
    /// #[mcp_tool]
    /// fn greet(greeting: State<Greeting>, name: String) -> String {
    ///     format!("{}, {name}!", greeting.0)
    /// }
    ///
    /// fn main() -> std::process::ExitCode {
    ///     toolwright::server!().state(Greeting("Hello".into())).run()
    /// }
    /// ```
    #[must_use]
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Server {
        self.states.insert(Arc::new(value));
        self
    }

    /// Gives the tools application state built at start, on the server's runtime, before it
    /// serves: a database pool, a client that connects first. A build that fails stops the
    /// server with [`Error::State`](crate::Error::State), naming the type and the error; nothing is served.
    ///
    /// ```no_run
    /// # struct Pool;
    /// # impl Pool { async fn connect(_: &str) -> Result<Pool, std::io::Error> { Ok(Pool) } }
    /// fn main() -> std::process::ExitCode {
    ///     toolwright::server!()
    ///         .state_from(Pool::connect("notes.db"))
    ///         .run()
    /// }
    /// ```
    #[must_use]
    pub fn state_from<T, E, F>(mut self, build: F) -> Server
    where
        T: Send + Sync + 'static,
        E: fmt::Display,
        F: Future<Output = Result<T, E>> + Send + 'static,
    {
        self.pending.push(PendingState {
            id: TypeId::of::<T>(),
            name: type_name::<T>(),
            build: Box::pin(async move {
                match build.await {
                    Ok(value) => Ok(Arc::new(value) as Arc<dyn Any + Send + Sync>),
                    Err(error) => Err(format!("{error:#}")),
                }
            }),
        });
        self
    }

    /// Wraps every call (`tools/call`, `prompts/get`, `resources/read`) in `layer`, a
    /// [`tower::Layer`] over the [call pipeline](crate::pipeline): it sees each
    /// [`Call`] (what it asks, its target, its arguments, its context) and its [`Outcome`], and
    /// may refuse the call or answer it without running it. The first layer given is the
    /// outermost: it sees a call first and its outcome last.
    ///
    /// Layers apply to calls that reach the pipeline: a request the server refuses first (an
    /// unknown tool, arguments its schema refuses, a request id under way, scopes the token
    /// lacks) is answered without them.
    #[must_use]
    pub fn layer<L>(mut self, layer: L) -> Server
    where
        L: Layer<Next> + Send + Sync + 'static,
        L::Service:
            Service<Call, Response = Outcome, Error = BoxError> + Clone + Send + Sync + 'static,
        <L::Service as Service<Call>>::Future: Send + 'static,
    {
        self.layers.push(layer, None);
        self
    }

    /// Wraps every call in `layer`, outside every layer given so far: what `--rate-limit` does,
    /// so that a call past the limit is refused before any layer of the server's sees it.
    #[cfg(all(feature = "cli", feature = "rate-limit"))]
    pub(crate) fn outermost_layer<L>(mut self, layer: L) -> Server
    where
        L: Layer<Next> + Send + Sync + 'static,
        L::Service:
            Service<Call, Response = Outcome, Error = BoxError> + Clone + Send + Sync + 'static,
        <L::Service as Service<Call>>::Future: Send + 'static,
    {
        self.layers.push_outermost(layer);
        self
    }

    /// Wraps the calls of the tools `select` picks in `layer`, as [`layer`](Server::layer) wraps
    /// every call: by name, tag or annotation ([`Select`]). Layers keep the order they are
    /// given in, whichever calls they are for: a call passes, outermost first, through every
    /// layer given for every call and every layer given for its tool.
    ///
    /// ```no_run
    /// use toolwright::pipeline::Select;
    /// # #[derive(Clone)] struct Audit;
    /// # impl<S> toolwright::pipeline::Layer<S> for Audit {
    /// #     type Service = S;
    /// #     fn layer(&self, next: S) -> S { next }
    /// # }
    ///
    /// fn main() -> std::process::ExitCode {
    ///     toolwright::server!()
    ///         .layer_for(Select::destructive(), Audit)
    ///         .run()
    /// }
    /// ```
    ///
    /// A name given to [`Select::tools`] that the server does not serve stops it at start.
    #[must_use]
    pub fn layer_for<L>(mut self, select: Select, layer: L) -> Server
    where
        L: Layer<Next> + Send + Sync + 'static,
        L::Service:
            Service<Call, Response = Outcome, Error = BoxError> + Clone + Send + Sync + 'static,
        <L::Service as Service<Call>>::Future: Send + 'static,
    {
        self.layers.push(layer, Some(select));
        self
    }
}
