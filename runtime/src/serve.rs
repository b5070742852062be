//! The one-line ways to serve a [`Server`]: each starts it and hands it to a transport. The
//! `run_*` methods also log on stderr and run a runtime of their own, for a `main` that is one
//! line; the others run on the caller's runtime. The transports themselves take a [`Started`]
//! server and a configuration of their own ([`Stdio`], `http::Http`).

use std::process::ExitCode;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

use crate::server::{Error, Server};
use crate::stdio::{self, Stdio};

impl Server {
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
        self.run_stdio_with(Stdio::new())
    }

    /// [`run_stdio`](Server::run_stdio), with the stdio transport configured as `stdio` says.
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// use toolwright::stdio::Stdio;
    ///
    /// fn main() -> std::process::ExitCode {
    ///     toolwright::server!().run_stdio_with(Stdio::new().busy_poll(Duration::ZERO))
    /// }
    /// ```
    pub fn run_stdio_with(self, stdio: Stdio) -> ExitCode {
        let Some(runtime) = runtime() else {
            return ExitCode::FAILURE;
        };
        let mut grace = Duration::ZERO;
        let served = runtime.block_on(async {
            let started = self.start().await?;
            grace = started.limits().shutdown_grace;
            stdio.serve(started).await
        });
        // A blocking tool cannot be stopped; it gets the grace period, and no more, to finish.
        runtime.shutdown_timeout(grace);
        match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("error: {err}");
                ExitCode::FAILURE
            }
        }
    }

    /// Serves MCP on standard input and output until the input closes: [`Stdio::serve`] with
    /// its defaults.
    pub async fn serve_stdio(self) -> Result<(), Error> {
        Stdio::new().serve(self.start().await?).await
    }

    /// Serves MCP over newline-delimited JSON-RPC on any reader and writer until the reader
    /// ends: [`stdio::serve`].
    pub async fn serve<R, W>(self, input: R, output: W) -> Result<(), Error>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        stdio::serve(self.start().await?, input, output).await
    }

    /// Starts the server and listens on `addr` for the Streamable HTTP transport, configured by
    /// `http`, without serving yet: [`Http::bind`](crate::http::Http::bind).
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), toolwright::Error> {
    /// use toolwright::http::Http;
    ///
    /// let server = toolwright::server!()
    ///     .bind_http("127.0.0.1:0", Http::new().bearer_token("s3cret"))
    ///     .await?;
    /// eprintln!("MCP at {}", server.url());
    /// server.run().await
    /// # }
    /// ```
    #[cfg(feature = "http")]
    pub async fn bind_http(
        self,
        addr: impl tokio::net::ToSocketAddrs,
        http: crate::http::Http,
    ) -> Result<crate::http::HttpServer, Error> {
        http.bind(addr, self.start().await?).await
    }

    /// Serves MCP over Streamable HTTP at `http://ADDR/mcp`, configured by `http`, until the
    /// process receives Ctrl-C (SIGINT) or SIGTERM; see
    /// [`HttpServer::run`](crate::http::HttpServer::run).
    #[cfg(feature = "http")]
    pub async fn serve_http(
        self,
        addr: impl tokio::net::ToSocketAddrs,
        http: crate::http::Http,
    ) -> Result<(), Error> {
        self.bind_http(addr, http).await?.run().await
    }

    /// Serves MCP over Streamable HTTP, configured by `http`, from a new runtime, with logs on
    /// stderr (`RUST_LOG` filters them, `info` by default), until Ctrl-C or SIGTERM. Returns the
    /// process's exit code: success when it was asked to stop, failure (with the reason on
    /// stderr) when the address cannot be listened on, the tools conflict or the transport
    /// fails.
    #[cfg(feature = "http")]
    pub fn run_http(self, addr: &str, http: crate::http::Http) -> ExitCode {
        let Some(runtime) = runtime() else {
            return ExitCode::FAILURE;
        };
        let served = runtime.block_on(async {
            let started = self
                .start()
                .await
                .map_err(|err| eprintln!("error: {err}"))?;
            let server = match http.bind(addr, started).await {
                Ok(server) => server,
                Err(Error::Io(err)) => {
                    eprintln!("error: cannot listen on {addr}: {err}");
                    return Err(());
                }
                Err(err) => {
                    eprintln!("error: {err}");
                    return Err(());
                }
            };
            server.run().await.map_err(|err| eprintln!("error: {err}"))
        });
        // A blocking tool cannot be stopped: it has had its grace period, so it is left behind.
        runtime.shutdown_timeout(Duration::from_millis(100));
        match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(()) => ExitCode::FAILURE,
        }
    }
}

/// What the `run_*` methods start with: logging on stderr, and a runtime of their own; `None`,
/// with the reason on stderr, when there is no runtime.
pub(crate) fn runtime() -> Option<tokio::runtime::Runtime> {
    crate::logging::init_logging();
    tokio::runtime::Runtime::new()
        .map_err(|err| eprintln!("error: cannot start the async runtime: {err}"))
        .ok()
}
