//! The [`Server`] builder: what a server's author chooses, and serving it on stdio.

use std::any::{Any, TypeId, type_name};
use std::fmt;
use std::future::Future;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Semaphore;

use super::dispatch::{Dispatcher, Settings};
#[cfg(feature = "http")]
use super::http::HttpConfig;
use super::limits::{
    DEFAULT_BUSY_POLL, DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MAX_MESSAGE_SIZE,
    DEFAULT_SHUTDOWN_GRACE, Limits,
};
use super::service::Service;
use super::stdio;
use crate::catalog::{self, Catalog};
use crate::context::StateKey;
use crate::handler::BoxFuture;
use crate::live::{Disabled, ServerHandle};
use crate::protocol::{HANDSHAKE_VERSIONS, STATELESS_VERSIONS};
use crate::registry::{Conflict, NOT_LINKED, Registry, RegistryError};
use crate::state::States;

/// How long, by default, a tool waits for the client to answer a request of its own.
const DEFAULT_CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How long, by default, clients of protocol 2026-07-28 may cache the tool list.
const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(5 * 60);

/// An MCP server for every tool in a [`Registry`], by default every tool linked into the binary.
///
/// ```no_run
/// # async fn run() -> Result<(), toolwright::Error> {
/// toolwright::Server::new("notes", "1.0.0")
///     .instructions("Notes live in memory; search before you add.")
///     .serve_stdio()
///     .await
/// # }
/// ```
#[derive(Debug)]
pub struct Server {
    name: String,
    version: String,
    instructions: Option<String>,
    max_message_size: usize,
    max_concurrent_calls: usize,
    pub(super) shutdown_grace: Duration,
    busy_poll: Duration,
    registry: Option<Registry>,
    namespaced: bool,
    #[cfg(feature = "http")]
    pub(super) http: HttpConfig,
    page_size: Option<usize>,
    cache_ttl: Duration,
    client_request_timeout: Duration,
    catalog: Catalog,
    embedded: Option<&'static [u8]>,
    /// The application state given, and the state to build at start.
    states: States,
    pending: Vec<PendingState>,
    /// The handle its tools reach it by, and its author may hold.
    handle: ServerHandle,
    /// The secret the state of input-required results is sealed with; drawn at start when none
    /// is given.
    state_secret: Option<Vec<u8>>,
    /// The model the progressive catalog ranks by meaning with, too.
    #[cfg(feature = "semantic")]
    pub(super) embedder: Option<Arc<crate::search::Embedder>>,
}

/// A state built at start, by [`Server::state_from`]: its type, and what builds it.
struct PendingState {
    id: TypeId,
    name: &'static str,
    build: BoxFuture<Result<Arc<dyn Any + Send + Sync>, String>>,
}

impl fmt::Debug for PendingState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PendingState").field(&self.name).finish()
    }
}

/// Why a server stopped or could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The tools conflict: duplicate names, invalid schemas.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The transport failed.
    #[error("the transport failed: {0}")]
    Io(#[from] std::io::Error),
    /// A state given to [`Server::state_from`] could not be built.
    #[error("cannot build the server's state `{state}`: {error}")]
    State {
        /// The state's type.
        state: &'static str,
        /// Why, as its builder said.
        error: String,
    },
    /// The [OAuth settings](Server::oauth) cannot be served: an issuer or resource that is not
    /// an `https` URL, a resource missing where it cannot be derived, a malformed scope.
    #[cfg(feature = "oauth")]
    #[error("the OAuth settings cannot be served: {0}")]
    OAuth(String),
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
            busy_poll: DEFAULT_BUSY_POLL,
            registry: None,
            namespaced: false,
            #[cfg(feature = "http")]
            http: HttpConfig::default(),
            page_size: None,
            cache_ttl: DEFAULT_CACHE_TTL,
            client_request_timeout: DEFAULT_CLIENT_REQUEST_TIMEOUT,
            catalog: Catalog::Full,
            embedded: None,
            states: States::default(),
            pending: Vec::new(),
            handle: ServerHandle::default(),
            state_secret: None,
            #[cfg(feature = "semantic")]
            embedder: None,
        }
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
    #[cfg(any(feature = "cli", feature = "oauth"))]
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

    /// How long stdio polls for the client's next message before its thread sleeps (default
    /// 50 µs; zero: never), so that a quick client's request finds it awake instead of waking an
    /// idle CPU; only while messages come within twenty times this of each other and its CPU is
    /// not shared, so a client that sends now and then costs no CPU (see `BENCHMARKS.md`). It
    /// applies to standard input and output when they are pipes or sockets, read directly
    /// meanwhile; [`serve`](Server::serve) on other readers does not poll.
    #[must_use]
    pub fn busy_poll(mut self, poll: Duration) -> Server {
        self.busy_poll = poll;
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

    /// How `tools/list` presents the tools (default [`Catalog::Full`]). A server with more tools
    /// than a model should see at once lists the core ones and lets the model search for the
    /// rest with [`Catalog::Progressive`]; `--catalog` on the command line overrides this.
    ///
    /// ```no_run
    /// use toolwright::Catalog;
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
    /// ([`embedded_manifest!`](crate::embedded_manifest), see [`build`](crate::build)): `tools/list`
    /// is answered from those bytes and start-up derives no schema. Each linked tool must be in
    /// the manifest with the same name, title, description, annotations and `_meta`, and each
    /// tool of the manifest must be linked, or the server does not start
    /// ([`Conflict::EmbeddedMismatch`]); debug builds also derive every schema and compare.
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
    /// server with [`Error::State`], naming the type and the error; nothing is served.
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

    /// Serves MCP on standard input and output until the input closes.
    pub async fn serve_stdio(self) -> Result<(), Error> {
        let limits = self.limits();
        let service = self.into_service().await?;
        stdio::serve_standard(service, limits).await?;
        Ok(())
    }

    /// Serves MCP over newline-delimited JSON-RPC on any reader and writer until the reader
    /// ends; calls under way then finish and send their answers.
    ///
    /// While more than 1 MiB of what the server sends waits because the client does not read
    /// it, the server reads nothing more, and it takes no more than its
    /// [calls](Server::max_concurrent_calls) and 1,024 waiting ones: its memory stays bounded
    /// whatever the client does. An answer whose call the client cancels before it is written
    /// is not written. Between messages it waits for the reader without polling it
    /// ([`busy_poll`](Server::busy_poll) is for standard input).
    pub async fn serve<R, W>(self, input: R, output: W) -> Result<(), Error>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let limits = self.limits();
        let service = self.into_service().await?;
        stdio::serve(service, input, output, limits).await?;
        Ok(())
    }

    /// Serves MCP on stdio, as [`run_stdio`](Server::run_stdio) does. Built without the `cli`
    /// feature, a server reads no command line: given arguments, it says which feature would
    /// have read them, and exits with status 2 without serving.
    #[cfg(not(feature = "cli"))]
    pub fn run(self) -> ExitCode {
        let given: Vec<String> = std::env::args_os()
            .skip(1)
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        if !given.is_empty() {
            eprintln!(
                "error: this server was built without toolwright's `cli` feature, which reads the \
                 command line (--print-manifest, --diff, --http, --catalog, ...), so it takes no \
                 arguments and was given `{}`; build it with that feature (on by default), or run \
                 it without arguments to serve on stdio",
                given.join(" ")
            );
            return ExitCode::from(2);
        }
        self.run_stdio()
    }

    /// Serves MCP on stdio from a new runtime, with logs on stderr (`RUST_LOG` filters them,
    /// `info` by default). Returns the process's exit code: success when the input closes,
    /// failure (with the reason on stderr) when the tools conflict or the transport fails.
    pub fn run_stdio(self) -> ExitCode {
        let Some(runtime) = start() else {
            return ExitCode::FAILURE;
        };
        let grace = self.shutdown_grace;
        let code = match runtime.block_on(self.serve_stdio()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("error: {err}");
                ExitCode::FAILURE
            }
        };
        // A blocking tool cannot be stopped; it gets the grace period, and no more, to finish.
        runtime.shutdown_timeout(grace);
        code
    }

    /// What every transport of this server shares.
    pub(super) fn limits(&self) -> Limits {
        Limits {
            max_message_size: self.max_message_size,
            calls: Arc::new(Semaphore::new(self.max_concurrent_calls)),
            shutdown_grace: self.shutdown_grace,
            busy_poll: self.busy_poll,
        }
    }

    /// The tools this server serves: the given registry, the embedded manifest's or every linked
    /// tool, namespaced if asked.
    pub(crate) fn take_registry(&mut self) -> Result<Registry, RegistryError> {
        match (self.registry.take(), self.embedded) {
            (Some(registry), _) => registry.namespaced_if(self.namespaced),
            (None, Some(manifest)) => Registry::embedded(manifest, self.namespaced),
            (None, None) => Registry::collect()?.namespaced_if(self.namespaced),
        }
    }

    /// The server, ready for a transport: its state built, its tools gathered and checked, its
    /// answers that do not change serialised.
    pub(super) async fn into_service(mut self) -> Result<Arc<dyn Service>, Error> {
        for pending in std::mem::take(&mut self.pending) {
            let value = pending.build.await.map_err(|error| Error::State {
                state: pending.name,
                error,
            })?;
            self.states.insert_any(pending.id, pending.name, value);
        }
        let registry = self.take_registry()?;
        let mut conflicts: Vec<Conflict> = self.catalog.conflicts(&registry);
        for tool in registry.tools() {
            for state in tool.states() {
                if !self.states.contains(state) {
                    conflicts.push(Conflict::MissingState {
                        tool: tool.wire_name().to_owned(),
                        state: (state.name)(),
                        location: tool.location(),
                    });
                }
            }
        }
        for prompt in registry.prompts() {
            for state in prompt.states {
                if !self.states.contains(state) {
                    conflicts.push(Conflict::MissingPromptState {
                        prompt: prompt.name.to_owned(),
                        state: (state.name)(),
                        location: prompt.location,
                    });
                }
            }
        }
        for (kind, name) in self.handle.live().attach(served(&registry)) {
            conflicts.push(Conflict::UnknownDisabled { kind, name });
        }
        for resource in registry.resources().functions() {
            for state in resource.states {
                if !self.states.contains(state) {
                    conflicts.push(Conflict::MissingResourceState {
                        resource: resource.uri.to_owned(),
                        state: (state.name)(),
                        location: resource.location,
                    });
                }
            }
        }
        if !conflicts.is_empty() {
            return Err(RegistryError::new(conflicts).into());
        }
        if registry.is_empty() {
            tracing::warn!("{NOT_LINKED}");
        }
        for note in registry.manifest().notes() {
            tracing::info!("{note}");
        }
        tracing::info!(
            server = %self.name,
            version = %self.version,
            tools = registry.len(),
            prompts = registry.prompts().len(),
            resources = registry.resources().fixed().len(),
            templates = registry.resources().templates().len(),
            catalog = %self.catalog,
            "serving MCP (protocol {}, and {} down to {} with `initialize`)",
            STATELESS_VERSIONS[0],
            HANDSHAKE_VERSIONS[0],
            HANDSHAKE_VERSIONS[HANDSHAKE_VERSIONS.len() - 1],
        );
        let settings = Settings {
            name: self.name,
            version: self.version,
            instructions: catalog::instructions(self.instructions, self.catalog),
            page_size: self.page_size,
            cache_ttl: self.cache_ttl,
            client_request_timeout: self.client_request_timeout,
            catalog: self.catalog,
            states: Arc::new(self.states),
            server: self.handle,
            state_key: self
                .state_secret
                .as_deref()
                .map_or_else(StateKey::random, StateKey::from_secret),
            #[cfg(feature = "semantic")]
            embedder: self.embedder,
        };
        Ok(Arc::new(Dispatcher::new(registry, settings)))
    }
}

/// The names of what `registry` serves, which its handle may disable.
fn served(registry: &Registry) -> Disabled {
    let resources = registry.resources();
    Disabled {
        tools: registry
            .tools()
            .iter()
            .map(|t| t.wire_name().to_owned())
            .collect(),
        prompts: registry.prompt_names().map(str::to_owned).collect(),
        resources: resources
            .fixed()
            .iter()
            .map(|r| r.uri().to_owned())
            .chain(
                resources
                    .templates()
                    .iter()
                    .map(|t| t.registration.uri.to_owned()),
            )
            .collect(),
    }
}

/// What the `run_*` methods start with: logging on stderr, and a runtime of their own; `None`,
/// with the reason on stderr, when there is no runtime.
pub(super) fn start() -> Option<tokio::runtime::Runtime> {
    super::logging::init_logging();
    tokio::runtime::Runtime::new()
        .map_err(|err| eprintln!("error: cannot start the async runtime: {err}"))
        .ok()
}
