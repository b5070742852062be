//! Measures toolwright's stdio server against rmcp's, serving the same tools, in one run.
//!
//! ```text
//! cd bench && cargo run --release -p harness
//! ```
//!
//! It builds both servers (1,000 generated tools each, plus `echo` and `echo_async`), then
//! drives them over stdio as an MCP client does, alternating between them at every step so that
//! both share the machine's noise, prints the results table and rewrites the generated part of
//! `BENCHMARKS.md` at the repository's root. Every loop has a fixed count, and a watchdog ends
//! the run (and the servers) should anything hang.

mod report;
mod server;
mod stats;
mod workspace;

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

use report::{Better, Row, Setting, Target};
use server::{Connection, Framework};
use stats::Samples;
use workspace::Workspace;

/// Tools in the full servers, and in the small ones.
const ALL_TOOLS: usize = 1000;
const FEW_TOOLS: usize = 50;
/// Besides the `tool_NNNN`s, every server has `echo` and `echo_async`.
const ECHO_TOOLS: usize = 2;

/// Spawns per server to time the start (after `STARTUP_WARMUP` untimed ones).
const STARTUP_SPAWNS: usize = 30;
const STARTUP_WARMUP: usize = 2;
/// `tools/list` requests per server and size (after `LIST_WARMUP` untimed ones).
const LIST_REQUESTS: usize = 300;
const LIST_WARMUP: usize = 20;
/// One-at-a-time calls per server and tool (after `CALL_WARMUP` untimed ones).
const CALL_REQUESTS: usize = 2000;
const CALL_WARMUP: usize = 200;
/// Pipelined calls per round, at most `WINDOW` in flight; `THROUGHPUT_ROUNDS` rounds per server
/// and tool, the median reported.
const PIPELINED_CALLS: usize = 10_000;
const WINDOW: usize = 64;
const THROUGHPUT_ROUNDS: usize = 5;
/// Tools in the crate whose rebuild is timed, and how many rebuilds per server.
const COMPILE_TOOLS: usize = 200;
const COMPILE_RUNS: usize = 3;
/// The whole run, builds included, is stopped past this.
const DEADLINE: Duration = Duration::from_secs(60 * 60);

/// The tools called: `(label, tools/call params)`.
const ECHO: (&str, &str) = ("echo", r#"{"name":"echo","arguments":{"text":"hello"}}"#);
const ECHO_ASYNC: (&str, &str) = (
    "echo_async",
    r#"{"name":"echo_async","arguments":{"text":"hello"}}"#,
);
const SUM: (&str, &str) = (
    "tool_0500",
    r#"{"name":"tool_0500","arguments":{"a":40,"b":2,"label":"answer"}}"#,
);

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
    // `--quick`: every runtime measure, printed only; no compile times, BENCHMARKS.md untouched.
    let quick = std::env::args().skip(1).any(|arg| arg == "--quick");
    let workspace = Workspace::locate()?;
    // `--embedded`: toolwright against itself, the manifest made at build time against at start.
    if std::env::args().skip(1).any(|arg| arg == "--embedded") {
        return embedded(&workspace);
    }
    progress(&format!("building both servers with {ALL_TOOLS} tools"));
    workspace.build_servers(ALL_TOOLS)?;
    let binaries = Framework::BOTH.map(|framework| workspace.binary(framework));
    let setting = Setting::describe(&workspace)?;

    progress("startup: spawn, initialize, first tools/list");
    let startup_all = startup(&binaries, None, ALL_TOOLS)?;
    let startup_few = startup(&binaries, Some(FEW_TOOLS), FEW_TOOLS)?;

    progress(&format!("tools/list with {FEW_TOOLS} tools"));
    let mut few = connect_both(&binaries, Some(FEW_TOOLS))?;
    let list_few = list_latency(&mut few, FEW_TOOLS)?;
    let peak_few = peak_memory(few)?;

    progress(&format!(
        "tools/list, calls and throughput with {ALL_TOOLS} tools"
    ));
    let mut all = connect_both(&binaries, None)?;
    let list_all = list_latency(&mut all, ALL_TOOLS)?;
    check_answers(&mut all)?;
    let [echo, echo_async, sum] = call_latency(&mut all, [ECHO, ECHO_ASYNC, SUM])?;
    let [echo_rate, echo_async_rate] = throughput(&mut all, [ECHO, ECHO_ASYNC])?;
    let peak_all = peak_memory(all)?;

    let tw_size = workspace.binary_sizes(Framework::Toolwright)?;
    let rmcp_size = workspace.binary_sizes(Framework::Rmcp)?;

    // `None` under `--quick`: neither the row nor the target is printed.
    let compile = if quick {
        None
    } else {
        progress(&format!(
            "compile time: {COMPILE_RUNS} rebuilds of a {COMPILE_TOOLS}-tool server each (the \
             first run also builds the dependencies, untimed)"
        ));
        Some(workspace.compile_times(COMPILE_TOOLS, COMPILE_RUNS)?)
    };

    let ms = |s: &[Samples; 2], f: fn(&Samples) -> Duration| s.each(f).map(|d| secs(d) * 1e3);
    let us = |s: &[Samples; 2], f: fn(&Samples) -> Duration| s.each(f).map(|d| secs(d) * 1e6);
    let faster = Better::Lower("faster");
    let mut rows = vec![
        row(
            &format!("startup to first tools/list, {ALL_TOOLS} tools (median of {STARTUP_SPAWNS})"),
            "ms",
            ms(&startup_all, Samples::median),
            faster,
        ),
        row(
            &format!("startup to first tools/list, {FEW_TOOLS} tools (median of {STARTUP_SPAWNS})"),
            "ms",
            ms(&startup_few, Samples::median),
            faster,
        ),
    ];
    for (tools, list) in [(FEW_TOOLS, &list_few), (ALL_TOOLS, &list_all)] {
        rows.push(row(
            &format!("tools/list, {tools} tools: median of {LIST_REQUESTS}"),
            "µs",
            us(&list.latency, Samples::median),
            faster,
        ));
        rows.push(row(
            &format!("tools/list, {tools} tools: p99"),
            "µs",
            us(&list.latency, Samples::p99),
            faster,
        ));
        rows.push(row(
            &format!("tools/list, {tools} tools: response size"),
            "KiB",
            list.bytes.map(|b| b as f64 / 1024.0),
            Better::Lower("smaller"),
        ));
    }
    for ((name, _), samples) in [ECHO, ECHO_ASYNC, SUM]
        .iter()
        .zip([&echo, &echo_async, &sum])
    {
        rows.push(row(
            &format!("tools/call `{name}`, one in flight: median of {CALL_REQUESTS}"),
            "µs",
            us(samples, Samples::median),
            faster,
        ));
        rows.push(row(
            &format!("tools/call `{name}`, one in flight: p99"),
            "µs",
            us(samples, Samples::p99),
            faster,
        ));
    }
    for ((name, _), rate) in [ECHO, ECHO_ASYNC].iter().zip([echo_rate, echo_async_rate]) {
        rows.push(row(
            &format!(
                "tools/call `{name}`, {PIPELINED_CALLS} pipelined, ≤ {WINDOW} in flight \
                 (median of {THROUGHPUT_ROUNDS})"
            ),
            "calls/s",
            rate,
            Better::Higher("faster"),
        ));
    }
    let mib = |bytes: [u64; 2]| bytes.map(|b| b as f64 / (1024.0 * 1024.0));
    let less = Better::Lower("less");
    rows.push(row(
        &format!("peak memory (VmHWM), {ALL_TOOLS} tools, after every test above"),
        "MiB",
        mib(peak_all.peak),
        less,
    ));
    rows.push(row(
        &format!("· of it at the end: heap and stacks (RssAnon), {ALL_TOOLS} tools"),
        "MiB",
        mib(peak_all.anon),
        less,
    ));
    rows.push(row(
        &format!("· of it at the end: the binary's touched pages (RssFile), {ALL_TOOLS} tools"),
        "MiB",
        mib(peak_all.file),
        less,
    ));
    rows.push(row(
        &format!("peak memory (VmHWM), {FEW_TOOLS} tools, after its tools/list test"),
        "MiB",
        mib(peak_few.peak),
        less,
    ));
    let smaller = Better::Lower("smaller");
    rows.push(row(
        &format!("release binary, {ALL_TOOLS} tools, as built (symbols kept)"),
        "MiB",
        mib([tw_size.0, rmcp_size.0]),
        smaller,
    ));
    rows.push(row(
        &format!("release binary, {ALL_TOOLS} tools, stripped"),
        "MiB",
        mib([tw_size.1, rmcp_size.1]),
        smaller,
    ));
    if let Some(compile) = &compile {
        rows.push(row(
            &format!(
                "touch + `cargo build --release`, {COMPILE_TOOLS} tools (median of {COMPILE_RUNS})"
            ),
            "s",
            compile.each(Samples::median).map(secs),
            faster,
        ));
    }

    let advantage = |prefix: &str| {
        rows.iter()
            .find(|row| row.metric.starts_with(prefix))
            .map_or(f64::NAN, Row::advantage)
    };
    let mut targets = vec![
        Target {
            goal: "tools/list of 1,000 tools ≥ 5× faster (median)",
            advantage: advantage(&format!("tools/list, {ALL_TOOLS} tools: median")),
            needed: 5.0,
        },
        Target {
            goal: "`echo` call latency ≥ 1.5× better (median)",
            advantage: advantage("tools/call `echo`, one in flight: median"),
            needed: 1.5,
        },
        Target {
            goal: "`echo` pipelined throughput ≥ 1.5× higher",
            advantage: advantage("tools/call `echo`, 10000 pipelined"),
            needed: 1.5,
        },
        Target {
            goal: "startup (1,000 tools) no slower",
            advantage: advantage(&format!("startup to first tools/list, {ALL_TOOLS} tools")),
            needed: 1.0,
        },
        Target {
            goal: "peak memory (1,000 tools) no higher",
            advantage: advantage(&format!("peak memory (VmHWM), {ALL_TOOLS} tools")),
            needed: 1.0,
        },
    ];
    if compile.is_some() {
        targets.push(Target {
            goal: "compile time (200 tools) no longer",
            advantage: advantage("touch + `cargo build --release`"),
            needed: 1.0,
        });
    }

    println!("\n{}", report::table(&rows));
    println!("{}", report::targets_table(&targets));
    if quick {
        return Ok(());
    }
    report::write_benchmarks_md(&workspace, &setting, &method(), &rows, &targets)?;
    progress("wrote BENCHMARKS.md");
    Ok(())
}

/// The toolwright server that derives its schemas at start, and the one that serves the manifest
/// its build made: the same tools, from `toolwright-bench-tools`'s generator.
const AT_START: &str = "toolwright-bench-server";
const EMBEDDED: &str = "toolwright-embedded-bench-server";

/// `--embedded`: time from spawn to the first `tools/list` answer, and memory after a list and a
/// call, for the 1,000-tool server deriving its manifest at start, the same tools serving the
/// embedded one, rmcp's server, and the first binary serving only its two echo tools (the start
/// of the process itself, which no manifest can shorten), spawned in turn in one run. Prints a
/// table; `BENCHMARKS.md` records it by hand.
fn embedded(workspace: &Workspace) -> io::Result<()> {
    const RMCP: &str = "rmcp-bench-server";
    progress(&format!(
        "building {AT_START}, {EMBEDDED} and {RMCP} with {ALL_TOOLS} tools"
    ));
    workspace.build_packages(&[AT_START, EMBEDDED, RMCP], ALL_TOOLS)?;
    // (binary, framework, `--tools`, tools listed)
    let servers = [
        (AT_START, Framework::Toolwright, None, ALL_TOOLS),
        (EMBEDDED, Framework::Toolwright, None, ALL_TOOLS),
        (RMCP, Framework::Rmcp, None, ALL_TOOLS),
        (AT_START, Framework::Toolwright, Some(0), 0),
    ]
    .map(|(package, framework, limit, tools)| {
        (workspace.package_binary(package), framework, limit, tools)
    });
    progress("startup: spawn, initialize, first tools/list; memory after one call");
    let mut startup: [Samples; 4] = Default::default();
    let mut memory: [[Vec<f64>; 3]; 4] = Default::default();
    for round in 0..STARTUP_WARMUP + STARTUP_SPAWNS {
        // Each server goes first, second, third and fourth in turn.
        for k in 0..servers.len() {
            let i = (round + k) % servers.len();
            let (binary, framework, limit, tools) = &servers[i];
            let start = std::time::Instant::now();
            let mut connection = Connection::spawn(*framework, binary, *limit)?;
            let (elapsed, list) = connection.first_list(start)?;
            check_tool_count(*framework, &list, *tools)?;
            connection.call("tools/call", ECHO.1)?;
            if round >= STARTUP_WARMUP {
                startup[i].push(elapsed);
                let mib = |kib: u64| kib as f64 / 1024.0;
                let figures = [
                    connection.peak_memory()? as f64 / (1024.0 * 1024.0),
                    mib(connection.status_kib("RssAnon")?),
                    mib(connection.status_kib("RssFile")?),
                ];
                for (series, figure) in memory[i].iter_mut().zip(figures) {
                    series.push(figure);
                }
            }
            connection.close()?;
            settle();
        }
    }
    let ms = |samples: &Samples, figure: fn(&Samples) -> Duration| secs(figure(samples)) * 1e3;
    println!(
        "\n| {ALL_TOOLS} tools | toolwright, schemas derived at start | toolwright, manifest \
         embedded at build | rmcp | toolwright, the first binary serving {ECHO_TOOLS} tools \
         | embedded vs derived | embedded vs rmcp |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (label, figure) in [
        (
            "startup to first tools/list, median",
            Samples::median as fn(&Samples) -> Duration,
        ),
        ("startup to first tools/list, p99", Samples::p99),
    ] {
        let [at_start, embedded, rmcp, floor] = [0, 1, 2, 3].map(|i| ms(&startup[i], figure));
        println!(
            "| {label} (of {STARTUP_SPAWNS}) | {at_start:.2} ms | {embedded:.2} ms | {rmcp:.2} ms \
             | {floor:.2} ms | {:.2}× faster | {:.2}× faster |",
            at_start / embedded,
            rmcp / embedded
        );
    }
    for (i, label) in [
        "peak memory (VmHWM) after a list and a call, median",
        "· heap and stacks (RssAnon), median",
        "· the binary's touched pages (RssFile), median",
    ]
    .into_iter()
    .enumerate()
    {
        let [at_start, embedded, rmcp, floor] = [0, 1, 2, 3].map(|s| stats::median(&memory[s][i]));
        println!(
            "| {label} (of {STARTUP_SPAWNS}) | {at_start:.2} MiB | {embedded:.2} MiB | \
             {rmcp:.2} MiB | {floor:.2} MiB | {:.2}× | {:.2}× |",
            at_start / embedded,
            rmcp / embedded
        );
    }
    Ok(())
}

/// Whether the rmcp server is built with one arguments type shared by every `tool_NNNN`
/// (`BENCH_RMCP_SHARED_ARGS=1`, read by its build script the same way).
fn rmcp_shared_args() -> bool {
    std::env::var_os("BENCH_RMCP_SHARED_ARGS").is_some_and(|value| value == "1")
}

/// A pause between one server's exit and the next spawn, so that no start is timed while the
/// kernel still tears down the process before it (without it, a spawn right after a large
/// server's exit takes up to 6 ms instead of 0.4).
fn settle() {
    std::thread::sleep(Duration::from_millis(25));
}

/// How the figures were made, for `BENCHMARKS.md`.
fn method() -> String {
    let arguments = if rmcp_shared_args() {
        "Every rmcp tool takes one shared
  `Parameters<SumArgs>` type (`BENCH_RMCP_SHARED_ARGS=1`), so rmcp derives one schema and one
  deserializer for all of them, where each `#[mcp_tool]` function has its own arguments type."
    } else {
        "Each rmcp tool takes its own
  `Parameters<SumArgsNNNN>` type, as each `#[mcp_tool]` function has its own arguments type and
  as the tools of a real server differ."
    };
    format!(
        "\
- Servers: `bench/servers/toolwright-bench-server` (`#[mcp_tool]` functions, `Server::run_stdio`)
  and `bench/servers/rmcp-bench-server` (`#[tool]` methods with `Parameters<T>` in and `Json<T>`
  out, the router `#[tool_router]` would write built once and kept in the server,
  `serve(stdio())`). A build script writes {ALL_TOOLS} tools `tool_0000`.. for each: `a: i64,
  b: i64, label: String` in, `{{ sum, label }}` out with an object `outputSchema`, annotated
  read-only and idempotent. {arguments} The output type is shared by the tools in both. Both
  also have `echo` (a plain `fn`) and `echo_async` (an `async fn`), `text: String` in and out,
  annotated the same way.
- `--tools N` serves `tool_0000`..`tool_<N-1>` plus the two echo tools. toolwright: a
  `Registry::collect_where` of the names that qualify (the other tools' schemas are not
  derived); rmcp: a
  `ToolRouter` of those tools' routes, the others never made (rmcp derives a tool's schemas when
  its route is made). Every tool stays linked in both binaries.
- Client: the harness, one process per server, newline-delimited JSON-RPC on the child's stdin
  and stdout, protocol `{protocol}`. Both servers run with `RUST_LOG=warn` and stderr discarded;
  both use tokio's multi-threaded runtime with its defaults. Each step alternates between the
  two servers (request by request, or spawn by spawn), starting with each in turn.
- Startup: from just before the spawn to the first `tools/list` answer's last byte read, before
  the harness parses it (after `initialize` and `notifications/initialized`), {STARTUP_SPAWNS}
  spawns per server after {STARTUP_WARMUP} untimed ones, 25 ms apart.
- `tools/list`: {LIST_REQUESTS} requests, one at a time, after {LIST_WARMUP} untimed ones; the
  tool count is checked.
- Calls: {CALL_REQUESTS} one-at-a-time round trips per tool after {CALL_WARMUP} untimed ones;
  throughput is {PIPELINED_CALLS} calls sent with at most {WINDOW} unanswered, every answer checked,
  {THROUGHPUT_ROUNDS} rounds per server. Answers are checked for content once, and for success
  always.
- Memory: `VmHWM` from `/proc/<pid>/status` of each long-lived server at the end of its tests,
  and, for {ALL_TOOLS} tools, how the resident memory then splits: `RssAnon` (heap, stacks) and `RssFile`
  (pages of the binary the process has touched; the kernel maps code in 64 KiB blocks around each
  page used).
- Size: the release binary as cargo builds it (debug info stripped, symbols kept), and after
  `strip`.
- Compile time: in a target directory of its own with every dependency built, the server's
  `src/main.rs` is touched and `cargo build --release -p <server>` timed (wall clock, cargo's own
  overhead included), {COMPILE_RUNS} times per server, alternating; the crate has {COMPILE_TOOLS}
  generated tools (`BENCH_TOOL_COUNT={COMPILE_TOOLS}`).
",
        protocol = server::PROTOCOL_VERSION,
    )
}

/// Both servers, started and initialized.
fn connect_both(binaries: &[PathBuf; 2], tools: Option<usize>) -> io::Result<[Connection; 2]> {
    let connect = |framework: Framework| -> io::Result<Connection> {
        let mut connection = Connection::spawn(framework, &binaries[framework.index()], tools)?;
        connection.initialize()?;
        Ok(connection)
    };
    Ok([connect(Framework::Toolwright)?, connect(Framework::Rmcp)?])
}

/// Time from spawn to the first `tools/list` answer.
fn startup(
    binaries: &[PathBuf; 2],
    tools: Option<usize>,
    expected: usize,
) -> io::Result<[Samples; 2]> {
    let mut samples: [Samples; 2] = Default::default();
    for round in 0..STARTUP_WARMUP + STARTUP_SPAWNS {
        for framework in Framework::in_turn(round) {
            let start = std::time::Instant::now();
            let mut connection = Connection::spawn(framework, &binaries[framework.index()], tools)?;
            let (elapsed, list) = connection.first_list(start)?;
            check_tool_count(framework, &list, expected)?;
            connection.close()?;
            settle();
            if round >= STARTUP_WARMUP {
                samples[framework.index()].push(elapsed);
            }
        }
    }
    Ok(samples)
}

/// `tools/list` latencies, and the size of one answer.
struct ListFigures {
    latency: [Samples; 2],
    bytes: [usize; 2],
}

fn list_latency(connections: &mut [Connection; 2], expected: usize) -> io::Result<ListFigures> {
    let mut bytes = [0; 2];
    for (framework, connection) in Framework::BOTH.into_iter().zip(connections.iter_mut()) {
        let (_, list) = connection.call("tools/list", "{}")?;
        check_tool_count(framework, &list, expected)?;
        bytes[framework.index()] = connection.last_message_len();
    }
    let mut latency: [Samples; 2] = Default::default();
    for round in 0..LIST_WARMUP + LIST_REQUESTS {
        for framework in Framework::in_turn(round) {
            let (elapsed, _) = connections[framework.index()].call("tools/list", "{}")?;
            if round >= LIST_WARMUP {
                latency[framework.index()].push(elapsed);
            }
        }
    }
    Ok(ListFigures { latency, bytes })
}

/// Both servers answer the same calls with the same content.
fn check_answers(connections: &mut [Connection; 2]) -> io::Result<()> {
    for (framework, connection) in Framework::BOTH.into_iter().zip(connections.iter_mut()) {
        for (name, params) in [ECHO, ECHO_ASYNC] {
            let (_, answer) = connection.call("tools/call", params)?;
            let text = answer.pointer("/result/content/0/text");
            if text != Some(&json!("hello")) {
                return Err(wrong(framework, name, &answer));
            }
        }
        let (name, params) = SUM;
        let (_, answer) = connection.call("tools/call", params)?;
        let structured = answer.pointer("/result/structuredContent");
        if structured != Some(&json!({ "sum": 42, "label": "answer" })) {
            return Err(wrong(framework, name, &answer));
        }
    }
    Ok(())
}

/// One-at-a-time round trips of each call, alternating servers and calls.
fn call_latency<const N: usize>(
    connections: &mut [Connection; 2],
    calls: [(&str, &str); N],
) -> io::Result<[[Samples; 2]; N]> {
    let mut samples: [[Samples; 2]; N] = std::array::from_fn(|_| Default::default());
    for round in 0..CALL_WARMUP + CALL_REQUESTS {
        for framework in Framework::in_turn(round) {
            for ((_, params), samples) in calls.iter().zip(samples.iter_mut()) {
                let (elapsed, _) = connections[framework.index()].call("tools/call", params)?;
                if round >= CALL_WARMUP {
                    samples[framework.index()].push(elapsed);
                }
            }
        }
    }
    Ok(samples)
}

/// Pipelined calls per second, the median of the rounds, for each call.
fn throughput<const N: usize>(
    connections: &mut [Connection; 2],
    calls: [(&str, &str); N],
) -> io::Result<[[f64; 2]; N]> {
    let mut rates: [[Vec<f64>; 2]; N] = std::array::from_fn(|_| Default::default());
    for round in 0..THROUGHPUT_ROUNDS {
        for framework in Framework::in_turn(round) {
            for ((_, params), rates) in calls.iter().zip(rates.iter_mut()) {
                let elapsed = connections[framework.index()].pipelined(
                    "tools/call",
                    params,
                    PIPELINED_CALLS,
                    WINDOW,
                )?;
                rates[framework.index()].push(PIPELINED_CALLS as f64 / secs(elapsed));
            }
        }
    }
    Ok(rates.map(|pair| pair.map(|rates| stats::median(&rates))))
}

/// Each server's peak memory, then both closed.
/// Each server's peak resident memory, and how its resident memory splits at the end: anonymous
/// (heap, stacks) and file-backed (the binary's pages it touched).
fn peak_memory(connections: [Connection; 2]) -> io::Result<Memory> {
    let mut memory = Memory::default();
    for (framework, connection) in Framework::BOTH.into_iter().zip(connections) {
        let i = framework.index();
        memory.peak[i] = connection.peak_memory()?;
        memory.anon[i] = connection.status_kib("RssAnon")? * 1024;
        memory.file[i] = connection.status_kib("RssFile")? * 1024;
        connection.close()?;
    }
    Ok(memory)
}

#[derive(Default)]
struct Memory {
    peak: [u64; 2],
    anon: [u64; 2],
    file: [u64; 2],
}

fn check_tool_count(framework: Framework, list: &Value, expected: usize) -> io::Result<()> {
    let count = list
        .pointer("/result/tools")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if count != expected + ECHO_TOOLS {
        return Err(io::Error::other(format!(
            "{framework} listed {count} tools, not {}",
            expected + ECHO_TOOLS
        )));
    }
    Ok(())
}

fn wrong(framework: Framework, tool: &str, answer: &Value) -> io::Error {
    io::Error::other(format!("{framework}: wrong answer from `{tool}`: {answer}"))
}

fn row(metric: &str, unit: &'static str, values: [f64; 2], better: Better) -> Row {
    Row {
        metric: metric.to_owned(),
        unit,
        values,
        better,
    }
}

fn secs(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

fn progress(message: &str) {
    eprintln!("harness: {message}");
}

/// A figure of each server's samples.
trait Each {
    fn each(&self, figure: fn(&Samples) -> Duration) -> [Duration; 2];
}

impl Each for [Samples; 2] {
    fn each(&self, figure: fn(&Samples) -> Duration) -> [Duration; 2] {
        [figure(&self[0]), figure(&self[1])]
    }
}
