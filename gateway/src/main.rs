//! Mounts the MCP servers a TOML file names and serves their tools as one MCP server, on stdio
//! or over Streamable HTTP, each tool under its mount's name (`files__read_file`).
//!
//! ```text
//! toolwright-gateway --config gateway.toml                      # on stdio
//! toolwright-gateway --config gateway.toml --http 127.0.0.1:8080 # at http://127.0.0.1:8080/mcp
//! toolwright-gateway --config gateway.toml --print-manifest     # every mounted tool, as served
//! toolwright-gateway --config gateway.toml --approve            # print what changed; pin it
//! ```
//!
//! The tools are served as the lock file beside the configuration (`gateway.lock`) approved
//! them: a tool whose description, schemas or annotations changed since, or that is new, is held
//! back, absent from the list and refused by name with what changed, until `--approve` prints
//! the change for a person to read and pins it.
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

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use toolwright::Server;
use toolwright::gateway::{Config, Lock, list_all};
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

    /// The lock file: the tools as a person approved them. Beside the configuration, with the
    /// extension `lock`, unless given.
    #[arg(long, value_name = "FILE", env = "TOOLWRIGHT_GATEWAY_LOCK")]
    lock: Option<PathBuf>,

    /// Connect the servers, print how their tools differ from the lock, and pin them as they
    /// are now: the only way a changed or new tool comes to be served.
    #[arg(long)]
    approve: bool,

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
    let lock_path = args
        .lock
        .clone()
        .unwrap_or_else(|| args.config.with_extension("lock"));
    let lock = match Lock::read(&lock_path) {
        Ok(lock) => lock,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    if args.approve {
        return approve(config, lock.unwrap_or_default(), &lock_path);
    }
    let lock = lock.unwrap_or_else(|| {
        eprintln!(
            "warning: no lock file at {}: every tool is held back until `toolwright-gateway \
             --approve` pins them",
            lock_path.display()
        );
        Lock::default()
    });
    let registry = Registry::from_registrations([]).expect("no tools, nothing to conflict");
    let mut server = Server::new(config.name(), env!("CARGO_PKG_VERSION"))
        .registry(registry)
        .lock(lock);
    for (name, upstream) in config.into_upstreams() {
        server = server.mount(name, upstream);
    }
    server.run_with(&args.server)
}

/// Lists every server's tools, prints how they differ from `lock`, and writes them to
/// `lock_path` as approved.
fn approve(config: Config, mut lock: Lock, lock_path: &Path) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let upstreams = config.into_upstreams();
    let listed = match runtime.block_on(list_all(&upstreams)) {
        Ok(listed) => listed,
        Err((mount, error)) => {
            eprintln!("error: cannot list the tools of `{mount}`: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = String::new();
    let mut tools = 0;
    for server in &listed {
        tools += server.tools.len();
        let changes = lock.approve(&server.mount, &server.tools);
        out.push_str(&format!("{}:\n", server.mount));
        if changes.is_empty() {
            out.push_str("  no changes\n");
        }
        for change in &changes {
            out.push_str(&format!("  {change}\n"));
        }
    }
    if let Err(error) = lock.write(lock_path) {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    out.push_str(&format!(
        "approved {tools} tools of {} servers in {}\n",
        listed.len(),
        lock_path.display()
    ));
    print!("{out}");
    ExitCode::SUCCESS
}
