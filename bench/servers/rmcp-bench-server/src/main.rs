//! The benchmark's tools served by rmcp, the official Rust MCP SDK, on stdio, written as its
//! documentation shows: `#[tool]` methods, `Parameters<T>` in, `Json<T>` out, and the router
//! `#[tool_router]` writes, made of the served tools' routes only (see `build.rs`).
//!
//! ```text
//! rmcp-bench-server                 # every tool: tool_0000..tool_0999, echo, echo_async
//! rmcp-bench-server --tools 50      # tool_0000..tool_0049, echo, echo_async
//! rmcp-bench-server --pipes         # on `stdio_pipes()`, rmcp's transport for pipes
//! ```
//!
//! rmcp has two stdio transports: `stdio()`, tokio's `stdin()` and `stdout()` (blocking reads and
//! writes on tokio's blocking threads), and `stdio_pipes()`, which rmcp's documentation advises
//! when both ends are pipes (they are reopened non-blocking and driven by tokio's reactor). The
//! harness measures both and compares toolwright with the faster.

use std::process::ExitCode;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{Json, ServerHandler, ServiceExt, tool, tool_handler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What every `tool_NNNN` returns: an object, so the tools have an `outputSchema`.
#[derive(Serialize, JsonSchema)]
struct Sum {
    /// `a + b`, wrapping on overflow.
    sum: i64,
    /// The label the call gave.
    label: String,
}

/// The arguments of `echo` and `echo_async`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to return.
    text: String,
}

/// The server: its router is built once, holding the tools `--tools` asks for.
#[derive(Clone)]
struct BenchServer {
    tool_router: ToolRouter<BenchServer>,
}

include!(concat!(env!("OUT_DIR"), "/tools.rs"));

#[tool_handler(router = self.tool_router)]
impl ServerHandler for BenchServer {}

impl BenchServer {
    fn new(limit: usize) -> BenchServer {
        BenchServer {
            tool_router: BenchServer::served_router(limit),
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let pipes = args.first().is_some_and(|arg| arg == "--pipes");
    if pipes {
        args.remove(0);
    }
    let limit = match tool_limit(args.into_iter()) {
        Ok(limit) => limit,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    init_logging();
    let server = BenchServer::new(limit);
    let service = if pipes {
        server.serve(rmcp::transport::stdio_pipes()).await
    } else {
        server.serve(rmcp::transport::stdio()).await
    };
    let served = match service {
        Ok(service) => service.waiting().await.map(drop),
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Logs to stderr as toolwright's `run_stdio` does: `RUST_LOG` read as `Targets`, `info` by
/// default, so that neither server carries a regular-expression engine for its log filter.
fn init_logging() {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|value| value.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(LevelFilter::INFO));
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(false),
        )
        .with(filter)
        .init();
}

/// Reads `--tools N` (every tool when absent).
fn tool_limit(mut args: impl Iterator<Item = String>) -> Result<usize, String> {
    match (args.next().as_deref(), args.next(), args.next()) {
        (None, _, _) => Ok(usize::MAX),
        (Some("--tools"), Some(n), None) => n
            .parse()
            .map_err(|_| format!("`--tools` takes a number, not `{n}`")),
        _ => Err("usage: rmcp-bench-server [--pipes] [--tools N]".to_owned()),
    }
}
