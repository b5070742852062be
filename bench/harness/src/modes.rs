//! The round trip's modes: fresh servers that list their tools and then answer calls, the
//! sequence after which toolwright's first call run used to be slow, with each spawn's median
//! and what each server thread did meanwhile (its context switches).
//!
//! ```text
//! cd bench && cargo run --release -p harness -- --modes
//! ```

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::server::{Connection, Server};
use crate::stats::Samples;
use crate::{CALL_REQUESTS, CALL_WARMUP, ECHO, LIST_REQUESTS, LIST_WARMUP, secs};

/// Fresh spawns per server and tool count.
pub(crate) const SPAWNS: usize = 10;

/// The servers compared: toolwright, and rmcp's transport for pipes.
const SERVERS: [Server; 2] = [Server::Toolwright, Server::RmcpPipes];

/// What one spawn gave: the call phase's median round trip, and the context switches of each
/// thread of the server during that phase, the busiest first.
struct Spawn {
    median_us: f64,
    threads: Vec<Switches>,
}

/// One thread's context switches over the call phase.
#[derive(Clone, Debug)]
struct Switches {
    name: String,
    voluntary: u64,
    involuntary: u64,
}

/// `SPAWNS` spawns of each server, in turn: each lists its tools (`LIST_WARMUP` +
/// `LIST_REQUESTS` requests), then answers `CALL_WARMUP` + `CALL_REQUESTS` `echo` calls, one at
/// a time. Returns the table, in Markdown.
pub(crate) fn measure(binaries: &[PathBuf; 2], tools: usize) -> io::Result<String> {
    let mut spawns: [Vec<Spawn>; 2] = Default::default();
    for round in 0..SPAWNS {
        for k in 0..SERVERS.len() {
            let index = (round + k) % SERVERS.len();
            spawns[index].push(spawn(SERVERS[index], &binaries[index])?);
        }
    }
    let mut table = format!(
        "{tools} tools: fresh servers, {} `tools/list` then {} `echo` calls each (median of the \
         last {CALL_REQUESTS}); per spawn: the median in µs, then the call phase's context \
         switches (voluntary / involuntary) of the two busiest threads\n\n\
         | spawn | toolwright | switches | rmcp `stdio_pipes()` | switches |\n\
         | ---: | ---: | --- | ---: | --- |\n",
        LIST_WARMUP + LIST_REQUESTS,
        CALL_WARMUP + CALL_REQUESTS,
    );
    for (i, (tw, rmcp)) in spawns[0].iter().zip(&spawns[1]).enumerate() {
        let _ = writeln!(
            table,
            "| {} | {:.1} | {} | {:.1} | {} |",
            i + 1,
            tw.median_us,
            busiest(&tw.threads),
            rmcp.median_us,
            busiest(&rmcp.threads),
        );
    }
    Ok(table)
}

fn spawn(server: Server, binary: &Path) -> io::Result<Spawn> {
    let mut connection = Connection::spawn(server, binary, false)?;
    connection.initialize()?;
    for _ in 0..LIST_WARMUP + LIST_REQUESTS {
        connection.call("tools/list", "{}")?;
    }
    let before = switches(connection.pid())?;
    let mut samples = Samples::default();
    for i in 0..CALL_WARMUP + CALL_REQUESTS {
        let (elapsed, _) = connection.call("tools/call", ECHO)?;
        if i >= CALL_WARMUP {
            samples.push(elapsed);
        }
    }
    let after = switches(connection.pid())?;
    connection.close()?;
    let mut threads: Vec<Switches> = after
        .into_iter()
        .map(|(tid, end)| {
            let start = before.iter().find(|(id, _)| *id == tid).map(|(_, s)| s);
            Switches {
                voluntary: end.voluntary - start.map_or(0, |s| s.voluntary),
                involuntary: end.involuntary - start.map_or(0, |s| s.involuntary),
                name: end.name,
            }
        })
        .collect();
    threads.sort_by_key(|t| std::cmp::Reverse(t.voluntary + t.involuntary));
    Ok(Spawn {
        median_us: secs(samples.median()) * 1e6,
        threads,
    })
}

/// The two busiest threads' switches, `voluntary / involuntary` each.
fn busiest(threads: &[Switches]) -> String {
    let shown: Vec<String> = threads
        .iter()
        .take(2)
        .map(|t| format!("{} / {}", t.voluntary, t.involuntary))
        .collect();
    shown.join(" · ")
}

/// Every thread of process `pid`, with its context switches so far.
fn switches(pid: u32) -> io::Result<Vec<(u32, Switches)>> {
    let mut threads = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let entry = entry?;
        let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let status = std::fs::read_to_string(entry.path().join("status"))?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                .map(|value| value.trim().to_owned())
        };
        let count = |name: &str| field(name).and_then(|v| v.parse().ok()).unwrap_or(0);
        threads.push((
            tid,
            Switches {
                name: field("Name").unwrap_or_default(),
                voluntary: count("voluntary_ctxt_switches"),
                involuntary: count("nonvoluntary_ctxt_switches"),
            },
        ));
    }
    Ok(threads)
}
