//! The benchmark's tools served by toolwright on stdio.
//!
//! ```text
//! toolwright-bench-server             # every tool: tool_0000..tool_0999, echo, echo_async
//! toolwright-bench-server --tools 50 # tool_0000..tool_0049, echo, echo_async
//! ```

use std::process::ExitCode;
use std::time::Duration;

use toolwright::registry::Registry;

include!("../../bench_tools.rs");

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let limit = match tool_limit(args.iter().cloned()) {
        Ok(limit) => limit,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    // Everything in the binary is registered as `#[mcp_tool]` made it; only the choice of tools
    // is ours, and the others' schemas are not derived.
    let registry = match Registry::collect_where(|name| is_served(name, limit)) {
        Ok(registry) => registry,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    let server = toolwright::server!().registry(registry);
    // `BENCH_BUSY_POLL_US=0` turns polling off, to compare.
    if let Some(micros) = std::env::var("BENCH_BUSY_POLL_US")
        .ok()
        .and_then(|value| value.parse().ok())
    {
        let stdio = toolwright::stdio::Stdio::new().busy_poll(Duration::from_micros(micros));
        return server.run_stdio_with(stdio);
    }
    if args.is_empty() {
        // As a server's `main` is written (and as the harness starts it): `run` reads
        // toolwright's command line, with the `cli` feature (on by default), and serves stdio.
        server.run()
    } else {
        // `--tools N` is this binary's own flag, which toolwright's command line would refuse.
        server.run_stdio()
    }
}

/// Whether `--tools limit` serves the tool with this name: the echo tools always, `tool_NNNN`
/// when `NNNN < limit`.
fn is_served(name: &str, limit: usize) -> bool {
    match name.strip_prefix("tool_") {
        Some(number) => number.parse::<usize>().is_ok_and(|n| n < limit),
        None => true,
    }
}

/// Reads `--tools N` (every tool when absent).
fn tool_limit(mut args: impl Iterator<Item = String>) -> Result<usize, String> {
    match (args.next().as_deref(), args.next(), args.next()) {
        (None, _, _) => Ok(usize::MAX),
        (Some("--tools"), Some(n), None) => n
            .parse()
            .map_err(|_| format!("`--tools` takes a number, not `{n}`")),
        _ => Err("usage: toolwright-bench-server [--tools N]".to_owned()),
    }
}
