//! The command line every server binary understands: print the manifest, render it for a
//! client, diff it, search it, or serve on stdio or over HTTP. Needs the `cli` feature (on by
//! default), which brings `clap`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;

use crate::catalog::{Catalog, Progressive, Ranking, UnknownCatalog};
use crate::logging::init_logging;
use crate::manifest::{Change, Severity, diff};
use crate::profile::{Profile, render};
use crate::registry::{NOT_LINKED, Registry};
use crate::server::Server;

/// The HTTP transport's configuration that the flags add to; nothing without the `http` feature.
#[cfg(feature = "http")]
type HttpBase = crate::http::Http;
#[cfg(not(feature = "http"))]
struct HttpBase;

/// The options every toolwright server understands, for its command line.
///
/// [`Server::run`] reads them from the process's arguments. A binary with options of its own
/// flattens them into its `clap` parser and passes them to [`Server::run_with`]:
///
/// ```no_run
/// use clap::Parser;
///
/// #[derive(Parser)]
/// struct Args {
///     /// Where the data lives.
///     #[arg(long)]
///     data: Option<std::path::PathBuf>,
///     #[command(flatten)]
///     server: toolwright::cli::ServerArgs,
/// }
///
/// fn main() -> std::process::ExitCode {
///     let args = Args::parse();
///     toolwright::server!().run_with(&args.server)
/// }
/// ```
#[derive(Clone, Debug, Default, clap::Args)]
#[non_exhaustive]
pub struct ServerArgs {
    /// Print the manifest (the tools as `tools/list` serves them) as JSON and exit, without
    /// serving.
    #[arg(long)]
    pub print_manifest: bool,

    /// With --print-manifest, render the manifest for one client's rules: mcp (the protocol, the
    /// default), openai, anthropic or gemini.
    #[arg(long, value_name = "PROFILE", requires = "print_manifest")]
    pub profile: Option<Profile>,

    /// Compare the manifest with an earlier one (a file --print-manifest wrote), print the
    /// changes, and exit with 1 when any of them breaks callers, 0 otherwise.
    #[arg(long, value_name = "OLD.json", conflicts_with = "print_manifest")]
    pub diff: Option<PathBuf>,

    /// Serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is HOST:PORT,
    /// used as given (127.0.0.1:8080 is reachable from this machine only, 0.0.0.0:8080 from
    /// others too), or a PORT on 127.0.0.1; without a value, 127.0.0.1:8080.
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:8080",
        value_parser = http_addr,
        conflicts_with_all = ["print_manifest", "diff"],
    )]
    pub http: Option<String>,

    /// How tools/list presents the tools: full (every tool) or progressive (the core tools, and
    /// search_tools and call_tool to find and run the others). Overrides the server's code.
    #[arg(
        long,
        value_name = "MODE",
        value_parser = catalog_mode,
        conflicts_with_all = ["print_manifest", "diff"],
    )]
    pub catalog: Option<Catalog>,

    /// Print the tools that best match QUERY, best first, as the progressive catalog's
    /// search_tools ranks them (tools only MCP Apps views call are left out), and exit.
    #[arg(
        long,
        value_name = "QUERY",
        conflicts_with_all = ["print_manifest", "diff", "http", "catalog"],
    )]
    pub search: Option<String>,

    /// With --http, require `Authorization: Bearer TOKEN` on every request.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "TOOLWRIGHT_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,

    /// With --http, let web pages from this origin (`https://app.example.com`) call the server;
    /// pages of localhost always may. Repeatable.
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,

    /// With --http, answer requests addressed to this host name too (the Host header), besides
    /// localhost, 127.0.0.1, `[::1]` and the address listened on. Repeatable.
    #[arg(long, value_name = "HOST")]
    pub allow_host: Vec<String>,

    /// With --http, keep sessions and tasks in the Redis server at this URL
    /// (`redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`, or `redis+unix:///PATH[?db=DB]`), so that
    /// replicas behind a load balancer serve each other's sessions and tasks. The server does
    /// not start while Redis does not answer.
    #[arg(
        long,
        value_name = "URL",
        env = "TOOLWRIGHT_REDIS_URL",
        hide_env_values = true,
        value_parser = RedisUrl
    )]
    pub redis: Option<String>,

    /// Keep each task this many seconds after its creation when the client does not ask for
    /// less (default 3600); a client may ask for up to a day, or this if it is longer.
    #[arg(
        long,
        value_name = "SECONDS",
        env = "TOOLWRIGHT_TASK_TTL",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub task_ttl: Option<u64>,

    /// The most tasks one caller (an access token's principal, else a session) holds at once,
    /// ended ones included until they are forgotten (default 100).
    #[arg(
        long,
        value_name = "N",
        env = "TOOLWRIGHT_MAX_TASKS",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub max_tasks: Option<u64>,

    /// Stop a call that runs longer than this many seconds, and answer it with an error that
    /// says so (default: no limit). A tool's own `timeout` takes its place for that tool; a
    /// call that runs as a task is bounded by the task's TTL instead.
    #[arg(
        long,
        value_name = "SECONDS",
        env = "TOOLWRIGHT_CALL_TIMEOUT",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub call_timeout: Option<u64>,

    /// Let each caller make at most N calls a minute, all at once if it has not called for a
    /// minute: a caller is whom the access token names under OAuth, else the client's address
    /// over HTTP, else its session. A call past it is refused with when to try again (over
    /// HTTP in 2026-07-28, `429` with `Retry-After`). Each replica counts its own. Default: no
    /// limit.
    #[cfg(feature = "rate-limit")]
    #[arg(
        long,
        value_name = "N",
        env = "TOOLWRIGHT_RATE_LIMIT",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub rate_limit: Option<u32>,

    /// Export traces and metrics over OTLP (HTTP, protobuf) to the OpenTelemetry collector at
    /// URL (`http://localhost:4318`): a span per request, continuing the client's trace, and the
    /// `mcp.server.*` duration histograms. The standard `OTEL_*` variables apply
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT` instead of this flag, `OTEL_SERVICE_NAME`, ...).
    #[cfg(feature = "otel")]
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,

    /// With --http, serve the metrics for Prometheus at /metrics, guarded as /mcp is.
    #[cfg(feature = "otel")]
    #[arg(long)]
    pub metrics: bool,

    /// Rank the progressive catalog's search (search_tools, --search) by meaning too, with the
    /// sentence-embedding model in DIR (config.json, model.safetensors, tokenizer.json).
    #[arg(long, value_name = "DIR", env = "TOOLWRIGHT_EMBEDDING_MODEL")]
    pub embedding_model: Option<PathBuf>,

    /// Keep the tools' vectors in DIR between starts, so that a tool the model embedded before
    /// is not embedded again (with --embedding-model).
    #[arg(long, value_name = "DIR", env = "TOOLWRIGHT_EMBEDDING_CACHE")]
    pub embedding_cache: Option<PathBuf>,

    /// How the server checks OAuth access tokens over HTTP.
    #[command(flatten)]
    pub oauth: OAuthArgs,
}

/// The options that make a server an OAuth 2.1 resource server over HTTP (`http::Http::oauth`, with
/// the `oauth` feature); `--oauth-issuer` turns it on. Each has an environment variable too.
/// They need `--http`: on stdio, whose client is a local process, there is no token to check,
/// and a server given one of them without `--http` refuses to start.
#[derive(Clone, Debug, Default, clap::Args)]
#[non_exhaustive]
pub struct OAuthArgs {
    /// With --http, require an OAuth access token on every request, issued by this
    /// authorization server (its issuer URL) for this server; clients find it from the 401.
    #[arg(long, value_name = "URL", env = "TOOLWRIGHT_OAUTH_ISSUER")]
    pub oauth_issuer: Option<String>,

    /// This server's URL as clients reach it, which tokens must be issued for (their audience);
    /// by default http://ADDR/mcp, which suits a server on 127.0.0.1 only.
    #[arg(long, value_name = "URL", env = "TOOLWRIGHT_OAUTH_RESOURCE")]
    pub oauth_resource: Option<String>,

    /// Take tokens whose audience is this instead of the resource URL. Repeatable.
    #[arg(
        long,
        value_name = "AUDIENCE",
        env = "TOOLWRIGHT_OAUTH_AUDIENCE",
        value_delimiter = ' '
    )]
    pub oauth_audience: Vec<String>,

    /// A scope every request's token must grant. Repeatable (space-separated in the variable).
    #[arg(
        long,
        value_name = "SCOPE",
        env = "TOOLWRIGHT_OAUTH_SCOPE",
        value_delimiter = ' '
    )]
    pub oauth_scope: Vec<String>,

    /// Where the issuer publishes its signing keys, if its metadata does not say.
    #[arg(long, value_name = "URL", env = "TOOLWRIGHT_OAUTH_JWKS_URI")]
    pub oauth_jwks_uri: Option<String>,

    /// Check tokens by introspection (RFC 7662) as this client, instead of as JWTs; the
    /// client's secret comes from TOOLWRIGHT_OAUTH_CLIENT_SECRET, never from a flag.
    #[arg(long, value_name = "CLIENT_ID", env = "TOOLWRIGHT_OAUTH_INTROSPECT")]
    pub oauth_introspect: Option<String>,

    /// Where to introspect tokens, if the issuer's metadata does not say.
    #[arg(
        long,
        value_name = "URL",
        env = "TOOLWRIGHT_OAUTH_INTROSPECTION_ENDPOINT"
    )]
    pub oauth_introspection_endpoint: Option<String>,
}

impl OAuthArgs {
    /// Each option with its flag, the issuer first, and whether it is set: an option of one
    /// value when `given` says so, a list when `listed` does.
    fn flags(
        &self,
        given: impl Fn(&Option<String>) -> bool,
        listed: impl Fn(&[String]) -> bool,
    ) -> [(bool, &'static str); 7] {
        let OAuthArgs {
            oauth_issuer,
            oauth_resource,
            oauth_audience,
            oauth_scope,
            oauth_jwks_uri,
            oauth_introspect,
            oauth_introspection_endpoint,
        } = self;
        [
            (given(oauth_issuer), "--oauth-issuer"),
            (given(oauth_resource), "--oauth-resource"),
            (listed(oauth_audience), "--oauth-audience"),
            (listed(oauth_scope), "--oauth-scope"),
            (given(oauth_jwks_uri), "--oauth-jwks-uri"),
            (given(oauth_introspect), "--oauth-introspect"),
            (
                given(oauth_introspection_endpoint),
                "--oauth-introspection-endpoint",
            ),
        ]
    }

    /// Whether any option is set besides the issuer, which they all need.
    #[cfg(feature = "http")]
    fn any_without_issuer(&self) -> Option<&'static str> {
        self.flags(Option::is_some, |values| !values.is_empty())
            .into_iter()
            .skip(1)
            .find_map(|(set, name)| set.then_some(name))
    }
}

impl ServerArgs {
    /// Whether these options ask to serve, rather than to print something and exit.
    pub fn serves(&self) -> bool {
        !self.print_manifest && self.diff.is_none() && self.search.is_none()
    }

    /// The first option set (by its flag or its environment variable) that only serving over
    /// HTTP reads, when these options serve on stdio: [`Server::run_with`] refuses it there,
    /// where it would be ignored, with exit status 2. `None` when they serve over HTTP, or
    /// print something and exit.
    pub fn http_only(&self) -> Option<&'static str> {
        if !self.serves() || self.http.is_some() {
            return None;
        }
        // An empty variable (`TOOLWRIGHT_TOKEN=`) is taken for none, as when serving.
        let given = |value: &Option<String>| value.as_deref().is_some_and(|v| !v.is_empty());
        let listed = |values: &[String]| values.iter().any(|v| !v.is_empty());
        [
            (given(&self.token), "--token"),
            (listed(&self.allow_origin), "--allow-origin"),
            (listed(&self.allow_host), "--allow-host"),
            (given(&self.redis), "--redis"),
            #[cfg(feature = "otel")]
            (self.metrics, "--metrics"),
        ]
        .into_iter()
        .chain(self.oauth.flags(given, listed))
        .find_map(|(set, flag)| set.then_some(flag))
    }
}

/// The environment variable that sets an option that only serving over HTTP reads.
fn variable_of(flag: &str) -> Option<&'static str> {
    Some(match flag {
        "--token" => "TOOLWRIGHT_TOKEN",
        "--redis" => "TOOLWRIGHT_REDIS_URL",
        "--oauth-issuer" => "TOOLWRIGHT_OAUTH_ISSUER",
        "--oauth-resource" => "TOOLWRIGHT_OAUTH_RESOURCE",
        "--oauth-audience" => "TOOLWRIGHT_OAUTH_AUDIENCE",
        "--oauth-scope" => "TOOLWRIGHT_OAUTH_SCOPE",
        "--oauth-jwks-uri" => "TOOLWRIGHT_OAUTH_JWKS_URI",
        "--oauth-introspect" => "TOOLWRIGHT_OAUTH_INTROSPECT",
        "--oauth-introspection-endpoint" => "TOOLWRIGHT_OAUTH_INTROSPECTION_ENDPOINT",
        _ => return None,
    })
}

/// The refusal of an option that only serving over HTTP reads, on stdio: its flag, and its
/// variable when that is what set it.
fn http_only_refusal(flag: &str) -> String {
    let set_by = variable_of(flag)
        .filter(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
        .map(|name| format!(" (set by {name})"))
        .unwrap_or_default();
    format!(
        "error: {flag}{set_by} needs --http ADDR: it applies only to serving over HTTP, and without \
         --http the server would serve on stdio and ignore it"
    )
}

impl Server {
    /// Reads [`ServerArgs`] from the process's arguments, then prints the manifest, diffs it, or
    /// serves on stdio (see [`run_stdio`](Server::run_stdio)) or, with the `http` feature, over
    /// HTTP (`--http`, see `Server::run_http`). `--help` and `--version` name the server as
    /// [`Server::new`] does.
    pub fn run(self) -> ExitCode {
        let args = self.read_args();
        self.run_with(&args)
    }

    /// [`run`](Server::run), serving over HTTP (`--http`) as `http` configures it: the settings
    /// of code (OAuth, a session store, limits) that the flags add to.
    ///
    /// ```no_run
    /// use toolwright::auth::OAuth;
    /// use toolwright::http::Http;
    ///
    /// fn main() -> std::process::ExitCode {
    ///     let oauth = OAuth::new("https://auth.example.com").require_scope("notes");
    ///     toolwright::server!().run_with_http(Http::new().oauth(oauth))
    /// }
    /// ```
    #[cfg(feature = "http")]
    pub fn run_with_http(self, http: crate::http::Http) -> ExitCode {
        let args = self.read_args();
        self.command(&args, http)
    }

    /// The options of the process's arguments; on a mistake, or for `--help` and `--version`,
    /// the process exits.
    fn read_args(&self) -> ServerArgs {
        let command = clap::Command::new(self.name().to_owned()).version(self.version().to_owned());
        // The options' own documentation is for Rust programmers: `--help` says what the server
        // does instead.
        let matches = <ServerArgs as clap::Args>::augment_args(command)
            .about("An MCP server: serves its tools on stdio, or over HTTP with --http.")
            .long_about(None)
            .get_matches();
        match <ServerArgs as clap::FromArgMatches>::from_arg_matches(&matches) {
            Ok(args) => args,
            Err(err) => err.exit(),
        }
    }

    /// Prints the manifest, diffs it, or serves on stdio or over HTTP, as `args` say.
    pub fn run_with(self, args: &ServerArgs) -> ExitCode {
        #[cfg(feature = "http")]
        let http = crate::http::Http::new();
        #[cfg(not(feature = "http"))]
        let http = HttpBase;
        self.command(args, http)
    }

    /// What `args` ask, serving over HTTP as `http` configures it, and the flags add; with
    /// telemetry exported, as the flags and the `OTEL_*` variables say, until it returns.
    fn command(self, args: &ServerArgs, http: HttpBase) -> ExitCode {
        #[cfg(feature = "otel")]
        {
            let mut telemetry = crate::telemetry::Telemetry::new(self.name()).from_env();
            if let Some(endpoint) = args.otlp_endpoint.as_deref().filter(|e| !e.is_empty()) {
                telemetry = telemetry.otlp_endpoint(endpoint);
            }
            if args.metrics {
                telemetry = telemetry.prometheus();
            }
            if args.serves() && telemetry.exports() {
                let installed = match telemetry.install() {
                    Ok(installed) => installed,
                    Err(error) => {
                        eprintln!("error: {error}");
                        return ExitCode::from(2);
                    }
                };
                #[cfg(feature = "http")]
                let http = match args.metrics {
                    true => http.metrics(installed.clone()),
                    false => http,
                };
                let code = self.serve_command(args, http);
                installed.shutdown();
                return code;
            }
        }
        self.serve_command(args, http)
    }

    /// [`command`](Server::command), once telemetry is set up.
    fn serve_command(mut self, args: &ServerArgs, http: HttpBase) -> ExitCode {
        if let Some(catalog) = args.catalog {
            self = self.catalog(catalog);
        }
        if let Some(seconds) = args.task_ttl {
            let ttl = std::time::Duration::from_secs(seconds);
            self = self.with_tasks(|tasks| {
                let max_ttl = tasks.max_ttl.max(ttl);
                tasks.ttl(ttl).max_ttl(max_ttl)
            });
        }
        if let Some(seconds) = args.call_timeout {
            self = self.call_timeout(std::time::Duration::from_secs(seconds));
        }
        #[cfg(feature = "rate-limit")]
        if let Some(calls) = args.rate_limit {
            let limit =
                crate::pipeline::RateLimit::per_caller(calls, std::time::Duration::from_secs(60));
            self = self.outermost_layer(limit);
        }
        if let Some(max) = args.max_tasks {
            let max = usize::try_from(max).unwrap_or(usize::MAX);
            self = self.with_tasks(|tasks| tasks.max_per_owner(max));
        }
        // An empty variable (`TOOLWRIGHT_EMBEDDING_MODEL=`) is taken for none.
        if let Some(dir) = args
            .embedding_model
            .as_ref()
            .filter(|d| !d.as_os_str().is_empty())
        {
            match embedder(dir) {
                Ok(embedder) => self = embedder(self),
                Err(code) => return code,
            }
            #[cfg(feature = "semantic")]
            if let Some(cache) = args
                .embedding_cache
                .as_ref()
                .filter(|d| !d.as_os_str().is_empty())
            {
                self = self.embedding_cache(crate::search::VectorCache::new(cache));
            }
        }
        if args.serves() {
            let Some(addr) = &args.http else {
                if let Some(flag) = args.http_only() {
                    eprintln!("{}", http_only_refusal(flag));
                    return ExitCode::from(2);
                }
                return self.run_stdio();
            };
            return self.run_http_with(addr, args, http);
        }
        init_logging();
        let registry = match self.registry_to_print() {
            Ok(registry) => registry,
            Err(err) => {
                eprintln!("error: {err}");
                return ExitCode::FAILURE;
            }
        };
        // A manifest of no tools is a contract of nothing: the tools crate was dropped, or
        // every mounted tool is held back.
        if registry.is_empty() {
            match registry.held_count() {
                0 => eprintln!("error: {NOT_LINKED}"),
                held => eprintln!(
                    "error: no tool to serve: the {held} tools of the mounted servers are held \
                     back until they are approved (see above)"
                ),
            }
            return ExitCode::FAILURE;
        }
        // The manifest's notes are said where they matter, once: at each start of the server,
        // and by the build guard; a command that prints the manifest does not repeat them.
        if let Some(query) = &args.search {
            #[cfg(feature = "semantic")]
            let ranking = match self.embedder_given() {
                Some((embedder, kept)) => Ranking::Semantic {
                    embedder,
                    kept,
                    wait: true,
                },
                None => Ranking::Lexical,
            };
            #[cfg(not(feature = "semantic"))]
            let ranking = Ranking::Lexical;
            return print_search(registry, query, ranking);
        }
        let manifest = registry.manifest().as_json();
        match &args.diff {
            Some(old) => print_diff(old, manifest),
            None => print_manifest(manifest, args.profile.unwrap_or(Profile::Mcp)),
        }
    }
}

impl Server {
    /// Serves over HTTP at `addr`, with the access options of `args`.
    #[cfg(feature = "http")]
    #[cfg_attr(not(feature = "redis"), allow(unused_mut))]
    fn run_http_with(mut self, addr: &str, args: &ServerArgs, mut http: HttpBase) -> ExitCode {
        // An empty token (`TOOLWRIGHT_TOKEN=`) is taken for none, as an unset variable is.
        if let Some(token) = args.token.as_deref().filter(|t| !t.is_empty()) {
            if !token.bytes().all(|b| b.is_ascii_graphic()) {
                eprintln!("error: the token must be visible ASCII, without spaces");
                return ExitCode::from(2);
            }
            http = http.bearer_token(token);
        }
        for origin in &args.allow_origin {
            http = http.allow_origin(origin);
        }
        for host in &args.allow_host {
            http = http.allow_host(host);
        }
        // An empty variable (`TOOLWRIGHT_REDIS_URL=`) is taken for none.
        if let Some(url) = args.redis.as_deref().filter(|u| !u.is_empty()) {
            #[cfg(feature = "redis")]
            match crate::store::RedisStore::new(url)
                .and_then(|sessions| Ok((sessions, crate::tasks::RedisTaskStore::new(url)?)))
            {
                Ok((sessions, tasks)) => {
                    http = http.session_store(sessions);
                    self = self.with_tasks(|config| config.store(tasks));
                }
                Err(err) => {
                    eprintln!("error: --redis: {err}");
                    return ExitCode::from(2);
                }
            }
            #[cfg(not(feature = "redis"))]
            {
                let _ = url;
                eprintln!(
                    "error: --redis would keep sessions and tasks in Redis, but this server was \
                     built without toolwright's `redis` feature; build it with that feature to \
                     share them between replicas"
                );
                return ExitCode::from(2);
            }
        }
        let oauth = &args.oauth;
        // An empty variable (`TOOLWRIGHT_OAUTH_ISSUER=`) is taken for none, as an unset one is.
        match oauth.oauth_issuer.as_deref().filter(|i| !i.is_empty()) {
            None => {
                if let Some(flag) = oauth.any_without_issuer() {
                    eprintln!("error: {flag} needs --oauth-issuer, the authorization server");
                    return ExitCode::from(2);
                }
            }
            #[cfg(feature = "oauth")]
            Some(issuer) => {
                let secret = std::env::var("TOOLWRIGHT_OAUTH_CLIENT_SECRET").unwrap_or_default();
                if oauth.oauth_introspect.is_some() && secret.is_empty() {
                    eprintln!(
                        "error: --oauth-introspect needs the client's secret in \
                         TOOLWRIGHT_OAUTH_CLIENT_SECRET"
                    );
                    return ExitCode::from(2);
                }
                http = http.oauth(oauth_settings(issuer, oauth, secret));
            }
            #[cfg(not(feature = "oauth"))]
            Some(_) => {
                eprintln!(
                    "error: --oauth-issuer would check OAuth access tokens, but this server was \
                     built without toolwright's `oauth` feature; build it with that feature to \
                     check them"
                );
                return ExitCode::from(2);
            }
        }
        self.run_http(addr, http)
    }

    /// Without the `http` feature there is no HTTP transport: say so, and what would enable it.
    #[cfg(not(feature = "http"))]
    fn run_http_with(self, addr: &str, _: &ServerArgs, _: HttpBase) -> ExitCode {
        eprintln!(
            "error: --http {addr} would serve MCP over Streamable HTTP, but this server was built \
             without toolwright's `http` feature (off by default); build it with that feature \
             (`features = [\"http\"]`) to serve over HTTP, or leave out --http to serve on stdio"
        );
        ExitCode::from(2)
    }
}

/// The OAuth settings the options say.
#[cfg(all(feature = "http", feature = "oauth"))]
fn oauth_settings(issuer: &str, args: &OAuthArgs, secret: String) -> crate::auth::OAuth {
    let mut oauth = crate::auth::OAuth::new(issuer);
    if let Some(resource) = &args.oauth_resource {
        oauth = oauth.resource(resource);
    }
    for audience in &args.oauth_audience {
        oauth = oauth.audience(audience);
    }
    for scope in &args.oauth_scope {
        oauth = oauth.require_scope(scope);
    }
    if let Some(uri) = &args.oauth_jwks_uri {
        oauth = oauth.jwks_uri(uri);
    }
    if let Some(client_id) = &args.oauth_introspect {
        oauth = oauth.introspect(client_id, secret);
    }
    if let Some(endpoint) = &args.oauth_introspection_endpoint {
        oauth = oauth.introspection_endpoint(endpoint);
    }
    oauth
}

/// The model in `dir`, to give the server; or, failing that, the exit code, having said why.
#[cfg(feature = "semantic")]
fn embedder(dir: &std::path::Path) -> Result<impl FnOnce(Server) -> Server, ExitCode> {
    match crate::search::Embedder::from_dir(dir) {
        Ok(embedder) => Ok(move |server: Server| server.embedder(embedder)),
        Err(err) => {
            eprintln!(
                "error: cannot load the embedding model in {}: {err}",
                dir.display()
            );
            Err(ExitCode::FAILURE)
        }
    }
}

/// Without the `semantic` feature there is no model to rank with: say so.
#[cfg(not(feature = "semantic"))]
fn embedder(dir: &std::path::Path) -> Result<fn(Server) -> Server, ExitCode> {
    eprintln!(
        "error: --embedding-model {} would rank search by meaning, but this server was built \
         without toolwright's `semantic` feature; build it with that feature, or leave out \
         --embedding-model (and TOOLWRIGHT_EMBEDDING_MODEL) to rank by words",
        dir.display()
    );
    Err(ExitCode::from(2))
}

/// `--http`'s address: `HOST:PORT` as given, or a bare `PORT` (or `:PORT`) on 127.0.0.1.
fn http_addr(value: &str) -> Result<String, String> {
    let value = value.trim();
    let port = value.strip_prefix(':').unwrap_or(value);
    if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
        return match port.parse::<u16>() {
            Ok(port) => Ok(format!("127.0.0.1:{port}")),
            Err(_) => Err(format!("port {port} is out of range (0 to 65535)")),
        };
    }
    match value.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {
            Ok(value.to_owned())
        }
        _ => Err(format!(
            "expected HOST:PORT (127.0.0.1:8080, [::1]:8080, 0.0.0.0:8080) or a PORT, not `{value}`"
        )),
    }
}

/// `--redis`'s URL, read as the store reads it (with the `redis` feature), so that a URL it
/// cannot read is a usage error that says the forms it takes. Clap's own message for a value
/// function would repeat the value, password and all: this one masks it. Empty is none.
#[derive(Clone)]
struct RedisUrl;

impl clap::builder::TypedValueParser for RedisUrl {
    type Value = String;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let refuse = |why: String| {
            let flag = arg.map_or_else(|| "--redis <URL>".to_owned(), ToString::to_string);
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value for '{flag}': {why}\n"),
            )
            .with_cmd(command)
        };
        let Some(url) = value.to_str() else {
            return Err(refuse("a Redis URL is text (UTF-8)".to_owned()));
        };
        #[cfg(feature = "redis")]
        if !url.is_empty() {
            crate::store::RedisStore::new(url).map_err(|err| refuse(err.to_string()))?;
        }
        Ok(url.to_owned())
    }
}

/// `--catalog`'s value, with the modes listed in `--help` and in the error for another.
fn catalog_mode(value: &str) -> Result<Catalog, String> {
    value.parse().map_err(|err: UnknownCatalog| err.to_string())
}

/// One line per matching tool, best first: rank, score, name and the first line of its
/// description. Exit status 1 when nothing matches, as `grep` has it.
fn print_search(registry: Registry, query: &str, ranking: Ranking) -> ExitCode {
    let catalog = Progressive::new(Arc::new(registry), ranking);
    let (hits, words_only) = catalog.ranked(query);
    if let Some(why) = words_only {
        eprintln!("ranked by words only: {why}");
    }
    if hits.is_empty() {
        eprintln!("no tool matches `{query}`");
        return ExitCode::FAILURE;
    }
    let width = hits
        .iter()
        .map(|(tool, _)| tool.wire_name().len())
        .max()
        .unwrap_or(0);
    let rank_width = hits.len().to_string().len();
    let mut out = String::new();
    for (rank, (tool, hit)) in hits.iter().enumerate() {
        let summary = tool.description().lines().next().unwrap_or("");
        out.push_str(&format!(
            "{:>rank_width$}  {:>6.2}  {:<7}  {:<width$}  {summary}\n",
            rank + 1,
            hit.score,
            hit.matched.as_str(),
            tool.wire_name(),
        ));
    }
    print(&out, ExitCode::SUCCESS)
}

/// Writes a command's output and returns `code`. A reader that stops early (`| head`) closes
/// the pipe: that is no failure, and the rest is not written.
fn print(text: &str, code: ExitCode) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => code,
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => code,
        Err(err) => {
            eprintln!("error: cannot write the output: {err}");
            ExitCode::FAILURE
        }
    }
}

fn print_manifest(manifest: &Value, profile: Profile) -> ExitCode {
    let rendering = match render(manifest, profile) {
        Ok(rendering) => rendering,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    for report in rendering.reports() {
        eprintln!("note: {report}");
    }
    let mut text = serde_json::to_string_pretty(rendering.document()).expect("JSON serialises");
    text.push('\n');
    print(&text, ExitCode::SUCCESS)
}

/// Exit status 2 is for a file that cannot be read as a manifest; 1 for a breaking change.
fn print_diff(old_path: &PathBuf, new: &Value) -> ExitCode {
    let old = match std::fs::read(old_path)
        .map_err(|e| e.to_string())
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).map_err(|e| e.to_string()))
    {
        Ok(old) if old.get("tools").is_some_and(Value::is_array) => old,
        Ok(_) => {
            eprintln!(
                "error: {} is not a manifest: expected {{\"tools\": [...]}}",
                old_path.display()
            );
            return ExitCode::from(2);
        }
        Err(err) => {
            eprintln!("error: cannot read {}: {err}", old_path.display());
            return ExitCode::from(2);
        }
    };
    let changes = diff(&old, new);
    let mut out = String::new();
    for change in &changes {
        out.push_str(&format!("{change}\n"));
    }
    if changes.is_empty() {
        out.push_str("no changes\n");
    } else {
        out.push_str(&format!("{}\n", Change::summary(&changes)));
    }
    let breaking = changes.iter().any(|c| c.severity == Severity::Breaking);
    print(
        &out,
        if breaking {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_addresses_are_host_and_port_or_a_port_on_loopback() {
        assert_eq!(http_addr("8080").unwrap(), "127.0.0.1:8080");
        assert_eq!(http_addr(":0").unwrap(), "127.0.0.1:0");
        assert_eq!(http_addr("0.0.0.0:80").unwrap(), "0.0.0.0:80");
        assert_eq!(http_addr("[::1]:8080").unwrap(), "[::1]:8080");
        assert_eq!(http_addr("localhost:8080").unwrap(), "localhost:8080");
        for bad in ["", "localhost", "70000", ":x", "host:", ":", "host:99999"] {
            assert!(http_addr(bad).is_err(), "{bad}");
        }
    }
}
