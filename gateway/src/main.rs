//! Mounts the MCP servers a TOML file names and serves their tools as one MCP server, on stdio
//! or over Streamable HTTP, each tool under its mount's name (`files__read_file`).
//!
//! ```text
//! toolwright-gateway --config gateway.toml                      # on stdio
//! toolwright-gateway --config gateway.toml --http 127.0.0.1:8080 # at http://127.0.0.1:8080/mcp
//! toolwright-gateway --config gateway.toml --print-manifest     # every mounted tool, as served
//! ```
//!
//! The file's format is `toolwright::gateway::Config`'s:
//!
//! ```toml
//! name = "team-tools"
//!
//! [upstreams.time]
//! command = ["uvx", "mcp-server-time", "--local-timezone", "UTC"]
//!
//! [upstreams.search]
//! url = "https://search.example.com/mcp"
//! bearer = "${SEARCH_TOKEN}"
//! tools = ["search", "fetch"]
//! timeout = "10s"
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use toolwright::Server;
use toolwright::gateway::Config;
use toolwright::registry::Registry;

/// An MCP gateway: the tools of the servers its configuration names, as one server.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// The configuration: the servers to mount, where each is, and which of its tools to serve.
    #[arg(
        long,
        short = 'c',
        value_name = "FILE",
        env = "TOOLWRIGHT_GATEWAY_CONFIG",
        default_value = "gateway.toml"
    )]
    config: PathBuf,

    #[command(flatten)]
    server: toolwright::cli::ServerArgs,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let config = match Config::read(&args.config) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let registry = Registry::from_registrations([]).expect("no tools, nothing to conflict");
    let mut server = Server::new(config.name(), env!("CARGO_PKG_VERSION")).registry(registry);
    for (name, upstream) in config.into_upstreams() {
        server = server.mount(name, upstream);
    }
    server.run_with(&args.server)
}
