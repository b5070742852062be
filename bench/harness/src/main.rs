//! Measures toolwright's stdio server against rmcp's, serving the same tools, in one run.
//!
//! ```text
//! cd bench && cargo run --release -p harness            # everything; rewrites BENCHMARKS.md
//! cd bench && cargo run --release -p harness -- --quick # no rebuild times; prints only
//! cd bench && cargo run --release -p harness -- --footprint # only what a 50-tool server is made of
//! cd bench && cargo run --release -p harness -- --modes     # only fresh servers' list then calls
//! cd bench && cargo run --release -p harness -- --against <commit> # toolwright then and now
//! cd bench && cargo run --release -p harness -- --telemetry # what the `otel` feature costs
//! cd bench && cargo run --release -p harness -- --gateway   # what toolwright-gateway adds
//! ```
//!
//! For each tool count (50 and 500) it builds every server for that count: toolwright deriving
//! its schemas at start, toolwright serving the manifest its build made, and rmcp, which is
//! driven on both of its stdio transports (`stdio()` and `stdio_pipes()`, the one rmcp's
//! documentation advises when both ends are pipes). It then drives them over stdio as an MCP
//! client does, in turn, so that all share the machine's noise, and reports each figure as a
//! ratio to rmcp's better transport. Round trips are measured in five runs per server, each
//! run's median kept, unpinned (as clients and servers run) and with driver and server pinned
//! to one CPU. The machine's load is read before every step. Every loop has a fixed count, and
//! a watchdog ends the run (and the servers) should anything hang.

mod against;
mod footprint;
mod gateway;
mod modes;
mod report;
mod server;
mod stats;
mod telemetry;
mod workspace;

use std::io;
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Duration;

use serde_json::{Value, json};

use report::{Better, Figure, Row, RunsRow, Setting, Target};
use server::{Connection, Server};
use stats::Samples;
use workspace::Workspace;

/// The tool counts measured; every server is built for each.
const COUNTS: [usize; 2] = [50, 500];
/// The tool count whose servers' footprint is measured.
const FOOTPRINT_TOOLS: usize = COUNTS[0];
/// Besides the `tool_NNNN`s, every server has `echo` and `echo_async`.
const ECHO_TOOLS: usize = 2;

/// Spawns per server to time the start (after `STARTUP_WARMUP` untimed ones).
const STARTUP_SPAWNS: usize = 30;
const STARTUP_WARMUP: usize = 2;
/// `tools/list` requests per server and run (after `LIST_WARMUP` untimed ones), `RUNS` runs.
const LIST_REQUESTS: usize = 60;
const LIST_WARMUP: usize = 20;
/// Runs of round trips per server, and one-at-a-time calls per run (after `CALL_WARMUP`
/// untimed ones).
const RUNS: usize = 5;
const CALL_REQUESTS: usize = 2000;
const CALL_WARMUP: usize = 200;
/// Pipelined calls per round, at most `WINDOW` in flight; one round per run.
const PIPELINED_CALLS: usize = 10_000;
const WINDOW: usize = 64;
/// Tools in the crate whose rebuild is timed, and how many rebuilds per server.
const COMPILE_TOOLS: usize = 200;
const COMPILE_RUNS: usize = 3;
/// The whole run, builds included, is stopped past this.
const DEADLINE: Duration = Duration::from_secs(90 * 60);

/// The call timed: `echo`, a plain `fn` returning its text.
const ECHO: &str = r#"{"name":"echo","arguments":{"text":"hello"}}"#;
const ECHO_ASYNC: &str = r#"{"name":"echo_async","arguments":{"text":"hello"}}"#;
const SUM: &str = r#"{"name":"tool_0001","arguments":{"a":40,"b":2,"label":"answer"}}"#;

fn main() -> ExitCode {
    std::thread::spawn(|| {
        std::thread::sleep(DEADLINE);
        eprintln!("error: the run took longer than {DEADLINE:?}; stopping it");
        server::kill_running();
        std::process::exit(3);
    });
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> io::Result<()> {
    let quick = std::env::args().skip(1).any(|arg| arg == "--quick");
    let workspace = Workspace::locate()?;
    if std::env::args().skip(1).any(|arg| arg == "--footprint") {
        workspace.build_servers(FOOTPRINT_TOOLS)?;
        println!("{}", footprints(&workspace)?);
        return Ok(());
    }
    let mut args = std::env::args().skip(1);
    if args.any(|arg| arg == "--against") {
        let commit = args
            .next()
            .ok_or_else(|| io::Error::other("--against takes a commit"))?;
        println!("{}", against::measure(&workspace, &commit)?);
        return Ok(());
    }
    if std::env::args().skip(1).any(|arg| arg == "--gateway") {
        progress("gateway: echo direct and through toolwright-gateway; memory; 1,000 tools");
        println!("{}", gateway::measure(&workspace)?);
        return Ok(());
    }
    if std::env::args().skip(1).any(|arg| arg == "--telemetry") {
        progress("telemetry: default features, `otel` quiet, `otel` exporting over OTLP");
        println!("{}", telemetry::measure(&workspace)?);
        return Ok(());
    }
    if std::env::args().skip(1).any(|arg| arg == "--modes") {
        for tools in COUNTS {
            let servers = [Server::Toolwright, Server::RmcpPipes];
            workspace.build(&servers, tools)?;
            let binaries = servers.map(|s| workspace.binary(s, tools));
            progress(&format!(
                "{tools} tools: fresh servers, a list phase then a call phase"
            ));
            println!("{}", modes::measure(&binaries, tools)?);
        }
        return Ok(());
    }
    let setting = Setting::describe(&workspace)?;
    cpus();
    let mut load = Load::default();
    let mut rows = Vec::new();
    let mut runs = Vec::new();
    let mut targets = Vec::new();
    let mut footprint = String::new();
    for tools in COUNTS {
        progress(&format!("building every server with {tools} tools"));
        workspace.build_servers(tools)?;
        let measured = measure(&workspace, tools, &mut load)?;
        if tools == FOOTPRINT_TOOLS {
            progress(&format!("what a {tools}-tool server is made of"));
            footprint = footprints(&workspace)?;
            println!("\n{footprint}");
        }
        rows.extend(measured.rows);
        runs.extend(measured.runs);
        targets.extend(measured.targets);
    }
    if !quick {
        progress(&format!(
            "rebuilds: {COMPILE_RUNS} of a {COMPILE_TOOLS}-tool crate per server (the first \
             build, of the dependencies, untimed)"
        ));
        load.sample();
        let servers = [Server::Toolwright, Server::Embedded, Server::Rmcp];
        let times = workspace.compile_times(servers, COMPILE_TOOLS, COMPILE_RUNS)?;
        let [derived, embedded, rmcp] = times.map(|t| secs(t.median()));
        rows.push(Row::new(
            format!("touch + `cargo build --release`, {COMPILE_TOOLS} tools, derived at start"),
            "s",
            Figure::Same(derived, rmcp),
            Better::Lower,
        ));
        rows.push(Row::new(
            format!("touch + `cargo build --release`, {COMPILE_TOOLS} tools, embedded manifest"),
            "s",
            Figure::Same(embedded, rmcp),
            Better::Lower,
        ));
        targets.push(Target::new(
            "rebuild with the embedded manifest no slower than deriving at start".to_owned(),
            derived / embedded,
        ));
    }
    println!("\n{}", report::table(&rows));
    println!("{}", report::runs_table(&runs));
    println!("{}", report::targets_table(&targets));
    println!("{}", load.describe());
    if quick {
        return Ok(());
    }
    report::write_benchmarks_md(
        &workspace,
        &report::Report {
            setting: &setting,
            load: &load.describe(),
            method: &method(),
            rows: &rows,
            runs: &runs,
            targets: &targets,
            footprint: &footprint,
        },
    )?;
    progress("wrote BENCHMARKS.md");
    Ok(())
}

/// The code by crate and the resident pages of the `FOOTPRINT_TOOLS`-tool servers: toolwright
/// with its default features and without them (stdio only), and rmcp.
fn footprints(workspace: &Workspace) -> io::Result<String> {
    let tools = FOOTPRINT_TOOLS;
    let lean = workspace.build_without_defaults(Server::Toolwright, tools)?;
    let measured = [
        (
            "toolwright, default features".to_owned(),
            Server::Toolwright,
            workspace.binary(Server::Toolwright, tools),
        ),
        (
            "toolwright, `default-features = false`".to_owned(),
            Server::Toolwright,
            lean,
        ),
        (
            "rmcp".to_owned(),
            Server::RmcpPipes,
            workspace.binary(Server::RmcpPipes, tools),
        ),
    ];
    let mut footprints = Vec::new();
    for (label, server, binary) in measured {
        footprints.push(footprint::measure(label, server, &binary, ECHO)?);
    }
    Ok(footprint::table(&footprints))
}

/// What one tool count gave.
struct Measured {
    rows: Vec<Row>,
    runs: Vec<RunsRow>,
    targets: Vec<Target>,
}

/// Every runtime measure of the servers built for `tools` tools.
fn measure(workspace: &Workspace, tools: usize, load: &mut Load) -> io::Result<Measured> {
    let binary = |server: Server| workspace.binary(server, tools);
    let mut rows = Vec::new();
    let mut targets = Vec::new();

    progress("start-up: spawn to the initialize answer; memory after a list and a call");
    load.sample();
    let started = startup(&Server::STARTED.map(binary), tools)?;
    let [tw, embedded, rmcp, pipes] = started.startup.each(|s| secs(s.median()) * 1e3);
    for (label, value) in [("derived at start", tw), ("embedded manifest", embedded)] {
        rows.push(Row::new(
            format!("{tools} tools: start-up to the initialize answer, {label} (median of {STARTUP_SPAWNS})"),
            "ms",
            Figure::Both(value, rmcp, pipes),
            Better::Lower,
        ));
    }
    let [tw_mem, _, rmcp_mem, pipes_mem] = started.peak.map(|m| stats::median(&m) / MIB);
    rows.push(Row::new(
        format!(
            "{tools} tools: peak RSS (VmHWM) after a list and a call (median of {STARTUP_SPAWNS})"
        ),
        "MiB",
        Figure::Both(tw_mem, rmcp_mem, pipes_mem),
        Better::Lower,
    ));
    let [tw_size, rmcp_size] =
        [Server::Toolwright, Server::Rmcp].map(|s| workspace.stripped_size(s, tools));
    let (tw_size, rmcp_size) = (tw_size? as f64 / MIB, rmcp_size? as f64 / MIB);
    rows.push(Row::new(
        format!("{tools} tools: release binary, stripped"),
        "MiB",
        Figure::Same(tw_size, rmcp_size),
        Better::Lower,
    ));
    if tools == COUNTS[0] {
        targets.push(Target::new(
            format!("{tools} tools: peak memory no higher than rmcp's"),
            rows[rows.len() - 2].advantage(),
        ));
        targets.push(Target::new(
            format!("{tools} tools: stripped binary no larger than rmcp's"),
            rows[rows.len() - 1].advantage(),
        ));
    }

    let binaries = Server::COMPARED.map(binary);
    progress(&format!("{tools} tools: tools/list, unpinned"));
    load.sample();
    let mut connections = connect(&binaries, false)?;
    check_answers(&mut connections, tools)?;
    let list = in_runs(&mut connections, LIST_WARMUP, LIST_REQUESTS, |c| {
        c.call("tools/list", "{}").map(|(elapsed, _)| elapsed)
    })?;
    rows.push(median_row(
        format!(
            "{tools} tools: tools/list, median of {} ({RUNS} runs)",
            LIST_REQUESTS * RUNS
        ),
        &list,
    ));

    progress(&format!(
        "{tools} tools: tools/call `echo`, one in flight, unpinned"
    ));
    load.sample();
    let unpinned = in_runs(&mut connections, CALL_WARMUP, CALL_REQUESTS, |c| {
        c.call("tools/call", ECHO).map(|(elapsed, _)| elapsed)
    })?;
    let unpinned_row = median_row(
        format!("{tools} tools: tools/call `echo` unpinned, median of the {RUNS} runs' medians"),
        &unpinned,
    );
    targets.push(Target::new(
        format!("{tools} tools: unpinned `echo` round trip no slower than rmcp's best"),
        unpinned_row.advantage(),
    ));
    rows.push(unpinned_row);

    progress(&format!("{tools} tools: pipelined calls"));
    load.sample();
    let mut rates: [Vec<f64>; 3] = Default::default();
    for round in 0..RUNS {
        for index in in_turn_indices::<3>(round) {
            let elapsed =
                connections[index].pipelined("tools/call", ECHO, PIPELINED_CALLS, WINDOW)?;
            rates[index].push(PIPELINED_CALLS as f64 / secs(elapsed));
        }
    }
    let [tw_rate, rmcp_rate, pipes_rate] = rates.map(|r| stats::median(&r));
    let pipelined = Row::new(
        format!(
            "{tools} tools: `echo` pipelined, {PIPELINED_CALLS} calls ≤ {WINDOW} in flight (median of {RUNS})"
        ),
        "calls/s",
        Figure::Both(tw_rate, rmcp_rate, pipes_rate),
        Better::Higher,
    );
    targets.push(Target::new(
        format!("{tools} tools: pipelined throughput no lower than rmcp's best"),
        pipelined.advantage(),
    ));
    rows.push(pipelined);
    close(connections)?;

    progress(&format!(
        "{tools} tools: tools/call `echo`, one in flight, pinned to one CPU"
    ));
    load.sample();
    pin_self(true)?;
    let pinned = connect(&binaries, true).and_then(|mut connections| {
        let pinned = in_runs(&mut connections, CALL_WARMUP, CALL_REQUESTS, |c| {
            c.call("tools/call", ECHO).map(|(elapsed, _)| elapsed)
        })?;
        close(connections)?;
        Ok(pinned)
    });
    pin_self(false)?;
    let pinned = pinned?;
    rows.push(median_row(
        format!(
            "{tools} tools: tools/call `echo` pinned to one CPU, median of the {RUNS} runs' medians"
        ),
        &pinned,
    ));

    let runs = vec![
        RunsRow::new(format!("{tools} tools, unpinned"), &unpinned),
        RunsRow::new(format!("{tools} tools, pinned to one CPU"), &pinned),
    ];
    Ok(Measured {
        rows,
        runs,
        targets,
    })
}

const MIB: f64 = 1024.0 * 1024.0;

/// The servers in `Server::COMPARED`, started and initialized.
fn connect(binaries: &[PathBuf; 3], pinned: bool) -> io::Result<[Connection; 3]> {
    let mut connections = Vec::new();
    for (server, binary) in Server::COMPARED.iter().zip(binaries) {
        let mut connection = Connection::spawn(*server, binary, pinned)?;
        connection.initialize()?;
        connections.push(connection);
    }
    Ok(connections
        .try_into()
        .unwrap_or_else(|_| unreachable!("three servers")))
}

fn close<const N: usize>(connections: [Connection; N]) -> io::Result<()> {
    connections.into_iter().try_for_each(Connection::close)
}

/// The indices of `Server::COMPARED`, in an order that turns with `round`.
fn in_turn_indices<const N: usize>(round: usize) -> [usize; N] {
    std::array::from_fn(|i| (i + round) % N)
}

/// `RUNS` runs of `count` timed requests (after `warmup` untimed ones) per server, the servers
/// in turn run by run: each server's samples, one `Samples` per run.
pub(crate) fn in_runs<const N: usize>(
    connections: &mut [Connection; N],
    warmup: usize,
    count: usize,
    mut request: impl FnMut(&mut Connection) -> io::Result<Duration>,
) -> io::Result<[Vec<Samples>; N]> {
    let mut runs: [Vec<Samples>; N] = std::array::from_fn(|_| Vec::new());
    for round in 0..RUNS {
        for index in in_turn_indices::<N>(round) {
            let mut samples = Samples::default();
            for i in 0..warmup + count {
                let elapsed = request(&mut connections[index])?;
                if i >= warmup {
                    samples.push(elapsed);
                }
            }
            runs[index].push(samples);
        }
    }
    Ok(runs)
}

/// A row of the median of per-run medians, in µs.
fn median_row(metric: String, runs: &[Vec<Samples>; 3]) -> Row {
    let [tw, rmcp, pipes] = runs.each_ref().map(|runs| {
        let medians: Vec<f64> = runs.iter().map(|s| secs(s.median()) * 1e6).collect();
        stats::median(&medians)
    });
    Row::new(metric, "µs", Figure::Both(tw, rmcp, pipes), Better::Lower)
}

/// What the spawns gave: start-up times, and peak memory after a list and a call.
struct Started {
    startup: [Samples; 4],
    peak: [Vec<f64>; 4],
}

/// Spawns each server of `Server::STARTED` in turn, times its start to the `initialize` answer,
/// then lists the tools (checking their count), calls `echo`, and reads its peak memory.
fn startup(binaries: &[PathBuf; 4], tools: usize) -> io::Result<Started> {
    let mut started = Started {
        startup: Default::default(),
        peak: Default::default(),
    };
    for round in 0..STARTUP_WARMUP + STARTUP_SPAWNS {
        for k in 0..Server::STARTED.len() {
            let index = (round + k) % Server::STARTED.len();
            let server = Server::STARTED[index];
            let start = std::time::Instant::now();
            let mut connection = Connection::spawn(server, &binaries[index], false)?;
            let elapsed = connection.first_answer(start)?;
            let (_, list) = connection.call("tools/list", "{}")?;
            check_tool_count(server, &list, tools)?;
            connection.call("tools/call", ECHO)?;
            if round >= STARTUP_WARMUP {
                started.startup[index].push(elapsed);
                started.peak[index].push(connection.peak_memory()? as f64);
            }
            connection.close()?;
            settle();
        }
    }
    Ok(started)
}

/// Every server lists the same number of tools and answers the same calls with the same content.
fn check_answers(connections: &mut [Connection; 3], tools: usize) -> io::Result<()> {
    for (server, connection) in Server::COMPARED.into_iter().zip(connections.iter_mut()) {
        let (_, list) = connection.call("tools/list", "{}")?;
        check_tool_count(server, &list, tools)?;
        for params in [ECHO, ECHO_ASYNC] {
            let (_, answer) = connection.call("tools/call", params)?;
            if answer.pointer("/result/content/0/text") != Some(&json!("hello")) {
                return Err(wrong(server, params, &answer));
            }
        }
        let (_, answer) = connection.call("tools/call", SUM)?;
        let structured = answer.pointer("/result/structuredContent");
        if structured != Some(&json!({ "sum": 42, "label": "answer" })) {
            return Err(wrong(server, SUM, &answer));
        }
    }
    Ok(())
}

fn check_tool_count(server: Server, list: &Value, expected: usize) -> io::Result<()> {
    let count = list
        .pointer("/result/tools")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if count != expected + ECHO_TOOLS {
        return Err(io::Error::other(format!(
            "{server} listed {count} tools, not {}",
            expected + ECHO_TOOLS
        )));
    }
    Ok(())
}

fn wrong(server: Server, call: &str, answer: &Value) -> io::Error {
    io::Error::other(format!("{server}: wrong answer to {call}: {answer}"))
}

/// Pins the harness's main thread, which drives the servers and spawns them, to the first CPU,
/// or lets it run on every CPU again.
pub(crate) fn pin_self(pinned: bool) -> io::Result<()> {
    let cpus = if pinned {
        "0".to_owned()
    } else {
        format!("0-{}", cpus() - 1)
    };
    let status = Command::new("taskset")
        .args(["-cp", &cpus, &std::process::id().to_string()])
        .stdout(std::process::Stdio::null())
        .status()?;
    if !status.success() {
        return Err(io::Error::other(format!("taskset failed: {status}")));
    }
    Ok(())
}

/// The machine's CPUs: read once, before the harness pins itself (a pinned thread sees one).
fn cpus() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The machine's load (the one-minute average of `/proc/loadavg`) before each step.
#[derive(Default)]
struct Load(Vec<f64>);

impl Load {
    fn sample(&mut self) {
        if let Some(load) = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|text| text.split_whitespace().next()?.parse().ok())
        {
            self.0.push(load);
        }
    }

    fn describe(&self) -> String {
        let text: Vec<String> = self.0.iter().map(|load| format!("{load:.2}")).collect();
        let max = self.0.iter().copied().fold(0.0, f64::max);
        format!(
            "Load (one-minute average of `/proc/loadavg`) before each step: {}; at most {max:.2} \
             on {} CPUs.",
            text.join(", "),
            cpus(),
        )
    }
}

/// A pause between one server's exit and the next spawn, so that no start is timed while the
/// kernel still tears down the process before it.
fn settle() {
    std::thread::sleep(Duration::from_millis(25));
}

/// How the figures were made, for `BENCHMARKS.md`.
fn method() -> String {
    format!(
        "\
- Servers: `bench/servers/toolwright-bench-server` (`#[mcp_tool]` functions,
  `Server::run`, toolwright's default features: the `cli` one), `toolwright-embedded-bench-server` (the
  same tools from a crate of their own, `toolwright-bench-tools`, whose manifest its build
  script makes), and `bench/servers/rmcp-bench-server` (`#[tool]` methods with
  `Parameters<T>` in and `Json<T>` out, the router `#[tool_router]` would write), served on
  rmcp's `stdio()` and, with `--pipes`, on its `stdio_pipes()`. For each count, a build script
  writes the tools `tool_0000`.. of every server: `a: i64, b: i64, label: String` in, `{{ sum,
  label }}` out with an object `outputSchema`, annotated read-only and idempotent, each rmcp
  tool with its own arguments type as each `#[mcp_tool]` function has; both also have `echo`
  (a plain `fn`) and `echo_async` (an `async fn`), `text: String` in and out. Every server is
  built for the count it serves (`BENCH_TOOL_COUNT`), in a target directory per count.
- Client: the harness, newline-delimited JSON-RPC on the child's stdin and stdout, protocol
  `{protocol}`, one request at a time unless pipelined. Every server runs with `RUST_LOG=warn`
  and stderr discarded, on tokio's multi-threaded runtime with its defaults. The servers take
  turns run by run, each going first in turn. Before the timed steps, every server lists the
  same number of tools and gives the same answers to `echo`, `echo_async` and `tool_0001`.
- Start-up: from just before the spawn to the `initialize` answer's last byte read,
  {STARTUP_SPAWNS} spawns per server after {STARTUP_WARMUP} untimed ones, 25 ms apart; each
  spawn then lists the tools (their count checked) and calls `echo`, and its `VmHWM` is read
  from `/proc/<pid>/status`: the peak memory row.
- `tools/list`: {RUNS} runs of {LIST_REQUESTS} requests per server, after {LIST_WARMUP} untimed
  ones each.
- Calls: {RUNS} runs of {CALL_REQUESTS} `echo` round trips per server, after {CALL_WARMUP}
  untimed ones each; a row gives the median of the runs' medians, and the table of runs gives
  each run's median. Unpinned, as clients and servers run; then again with the harness and
  fresh servers pinned to CPU 0 (`taskset`).
- Pipelined: {PIPELINED_CALLS} `echo` calls with at most {WINDOW} unanswered, every answer
  checked, one round per run, the median of {RUNS} rounds.
- Size: the release binary after `strip`. rmcp's binary is the same for both transports.
- Rebuild: in a target directory of its own with everything built, the file holding the
  {COMPILE_TOOLS} tools is touched (the server's `src/main.rs`; for the embedded manifest, the
  tools crate's `src/lib.rs`, which the server's build script links too) and `cargo build
  --release -p <server>` timed (wall clock), {COMPILE_RUNS} times per server, in turn.
- `toolwright ÷ rmcp's best` divides toolwright's figure by the better of rmcp's two
  transports' (below 1 is better for times, sizes and memory; above 1 for calls per second).
",
        protocol = server::PROTOCOL_VERSION,
    )
}

fn secs(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

fn progress(message: &str) {
    eprintln!("harness: {message}");
}

/// A figure of each server's samples.
trait Each<const N: usize> {
    fn each(&self, figure: impl Fn(&Samples) -> f64) -> [f64; N];
}

impl<const N: usize> Each<N> for [Samples; N] {
    fn each(&self, figure: impl Fn(&Samples) -> f64) -> [f64; N] {
        std::array::from_fn(|i| figure(&self[i]))
    }
}
