//! toolwright at another commit against this one, and rmcp, in one run: what a change to the
//! runtime costs a server, with the same tools, on the same machine, in turn.
//!
//! ```text
//! cd bench && cargo run --release -p harness -- --against <commit>
//! ```
//!
//! For each tool count it builds the benchmark's toolwright server (`Server::run`, toolwright's
//! default features) from `<commit>`'s tree (`git archive`, in the target directory) and from
//! the working tree, and rmcp's, then measures the stripped binaries, the start to the
//! `initialize` answer, and round trips of `echo` (one `text` argument) and of `tool_0001`
//! (three arguments, a structured result), unpinned and pinned to one CPU. Prints a Markdown
//! table.

use std::fmt::Write as _;
use std::io;
use std::path::PathBuf;
use std::time::Instant;

use crate::server::{Connection, Server};
use crate::stats::{self, Samples};
use crate::workspace::Workspace;
use crate::{
    CALL_REQUESTS, CALL_WARMUP, COUNTS, ECHO, MIB, RUNS, STARTUP_SPAWNS, STARTUP_WARMUP, SUM,
    in_runs, pin_self, progress, secs,
};

/// The servers, in the table's order: toolwright before and after, rmcp on `stdio_pipes()`.
const SERVERS: [Server; 3] = [Server::Toolwright, Server::Toolwright, Server::RmcpPipes];

/// Measures toolwright at `commit` against the working tree and rmcp; returns the table.
pub(crate) fn measure(workspace: &Workspace, commit: &str) -> io::Result<String> {
    let mut table = format!(
        "| measure | toolwright at `{commit}` | toolwright now | rmcp `stdio_pipes()` | now ÷ before | now ÷ rmcp |\n\
         | --- | ---: | ---: | ---: | ---: | ---: |\n"
    );
    for tools in COUNTS {
        progress(&format!(
            "{tools} tools: building toolwright at {commit}, now, and rmcp"
        ));
        let before = workspace.build_at(commit, Server::Toolwright, tools)?;
        workspace.build(&[Server::Toolwright, Server::RmcpPipes], tools)?;
        let binaries = [
            before,
            workspace.binary(Server::Toolwright, tools),
            workspace.binary(Server::RmcpPipes, tools),
        ];
        let sizes = binaries
            .iter()
            .map(|binary| workspace.stripped(binary).map(|size| size as f64 / MIB))
            .collect::<io::Result<Vec<f64>>>()?;
        row(
            &mut table,
            &format!("{tools} tools: release binary, stripped"),
            "MiB",
            &sizes,
        );

        progress(&format!("{tools} tools: start-up"));
        let mut started: [Samples; 3] = Default::default();
        for round in 0..STARTUP_WARMUP + STARTUP_SPAWNS {
            for k in 0..SERVERS.len() {
                let index = (round + k) % SERVERS.len();
                let start = Instant::now();
                let mut connection = Connection::spawn(SERVERS[index], &binaries[index], false)?;
                let elapsed = connection.first_answer(start)?;
                connection.close()?;
                if round >= STARTUP_WARMUP {
                    started[index].push(elapsed);
                }
            }
        }
        let startup: Vec<f64> = started.iter().map(|s| secs(s.median()) * 1e3).collect();
        row(
            &mut table,
            &format!(
                "{tools} tools: start-up to the initialize answer (median of {STARTUP_SPAWNS})"
            ),
            "ms",
            &startup,
        );

        for pinned in [false, true] {
            let how = if pinned {
                "pinned to one CPU"
            } else {
                "unpinned"
            };
            for (name, params) in [("`echo`", ECHO), ("`tool_0001`", SUM)] {
                progress(&format!("{tools} tools: {name}, {how}"));
                pin_self(pinned)?;
                let runs = round_trips(&binaries, pinned, params);
                pin_self(false)?;
                let medians: Vec<f64> = runs?
                    .iter()
                    .map(|runs| {
                        let medians: Vec<f64> =
                            runs.iter().map(|s| secs(s.median()) * 1e6).collect();
                        stats::median(&medians)
                    })
                    .collect();
                row(
                    &mut table,
                    &format!(
                        "{tools} tools: tools/call {name} {how}, median of the {RUNS} runs' medians"
                    ),
                    "µs",
                    &medians,
                );
            }
        }
    }
    Ok(table)
}

/// `RUNS` runs of `CALL_REQUESTS` calls per server, the servers in turn.
fn round_trips(
    binaries: &[PathBuf; 3],
    pinned: bool,
    params: &str,
) -> io::Result<[Vec<Samples>; 3]> {
    let mut connections = Vec::new();
    for (server, binary) in SERVERS.iter().zip(binaries) {
        let mut connection = Connection::spawn(*server, binary, pinned)?;
        connection.initialize()?;
        connections.push(connection);
    }
    let mut connections: [Connection; 3] = connections
        .try_into()
        .unwrap_or_else(|_| unreachable!("three servers"));
    let runs = in_runs(&mut connections, CALL_WARMUP, CALL_REQUESTS, |c| {
        c.call("tools/call", params).map(|(elapsed, _)| elapsed)
    })?;
    connections.into_iter().try_for_each(Connection::close)?;
    Ok(runs)
}

/// One line of the table: the three figures, and the ratios of the second to the others.
fn row(table: &mut String, measure: &str, unit: &str, figures: &[f64]) {
    let [before, now, rmcp] = [figures[0], figures[1], figures[2]];
    let shown = |value: f64| {
        if value >= 100.0 {
            format!("{value:.0} {unit}")
        } else {
            format!("{value:.3} {unit}")
        }
    };
    let _ = writeln!(
        table,
        "| {measure} | {} | {} | {} | {:.3} | {:.3} |",
        shown(before),
        shown(now),
        shown(rmcp),
        now / before,
        now / rmcp
    );
}
