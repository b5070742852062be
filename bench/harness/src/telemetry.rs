//! What telemetry costs a stdio round trip: toolwright's server built with its default features,
//! with the `otel` feature but nothing exported (spans go to OpenTelemetry's no-op tracer), and
//! with it exporting every request's span and the duration histograms over OTLP to a receiver
//! in this process that takes them and answers 200, as a collector does.
//!
//! ```text
//! cd bench && cargo run --release -p harness -- --telemetry
//! ```

use std::fmt::Write as _;
use std::io::{self, BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

use crate::server::{Connection, Server};
use crate::stats::{self, Samples};
use crate::workspace::Workspace;
use crate::{CALL_REQUESTS, CALL_WARMUP, ECHO, RUNS, in_runs, pin_self, secs};

/// The tool count of the servers measured.
const TOOLS: usize = 50;

/// The servers, each the 50-tool bench server: built with the default features, built with
/// `otel` and exporting nothing, exporting every request's span, and exporting one trace in ten
/// (`OTEL_TRACES_SAMPLER=traceidratio`, the metrics still of every request).
const SERVERS: [&str; 4] = [
    "default features",
    "`otel`, not exporting",
    "`otel`, exporting every span",
    "`otel`, exporting 1 trace in 10",
];

/// The servers, measured in turn, `RUNS` runs each, unpinned and then with driver and servers
/// pinned to one CPU (where the exporter's threads take their time from the calls'). Returns two
/// tables, in Markdown: the round trips, and the CPU time each call cost the server.
pub(crate) fn measure(workspace: &Workspace) -> io::Result<String> {
    workspace.build(&[Server::Toolwright], TOOLS)?;
    let default = workspace.binary(Server::Toolwright, TOOLS);
    let otel =
        workspace.build_variant(Server::Toolwright, TOOLS, "otel", &["--features", "otel"])?;
    let endpoint = receiver()?;
    let exporting = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())];
    let sampled = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_TRACES_SAMPLER", "traceidratio"),
        ("OTEL_TRACES_SAMPLER_ARG", "0.1"),
    ];
    let servers: [(&PathBuf, &[(&str, &str)]); 4] = [
        (&default, &[]),
        (&otel, &[]),
        (&otel, &exporting),
        (&otel, &sampled),
    ];
    let header = |what: &str| {
        let mut header = format!("| {TOOLS} tools, `echo`: {what} |");
        for server in SERVERS {
            let _ = write!(header, " {server} |");
        }
        header.push_str(" every span against default | 1 in 10 against default |\n|---|");
        header.push_str(&"---:|".repeat(SERVERS.len() + 2));
        header.push('\n');
        header
    };
    let mut latency = header("round trip, median of 5 runs' medians (each run's)");
    let mut cpu_table =
        header("the server's CPU time per call, all its threads (of which the exporters' threads)");
    for pinned in [false, true] {
        pin_self(pinned)?;
        let mut connections = Vec::new();
        for (binary, env) in servers {
            let mut connection = Connection::spawn_with(Server::Toolwright, binary, pinned, env)?;
            connection.initialize()?;
            connections.push(connection);
        }
        let mut connections: [Connection; 4] = connections
            .try_into()
            .unwrap_or_else(|_| unreachable!("four servers"));
        let before = connections.each_ref().map(Connection::cpu_times);
        let runs = in_runs(&mut connections, CALL_WARMUP, CALL_REQUESTS, |connection| {
            connection
                .call("tools/call", ECHO)
                .map(|(elapsed, _)| elapsed)
        })?;
        let after = connections.each_ref().map(Connection::cpu_times);
        connections.into_iter().try_for_each(Connection::close)?;
        let calls = (RUNS * (CALL_WARMUP + CALL_REQUESTS)) as f64;
        let mut cpu = [[0.0; 2]; 4];
        for (i, (before, after)) in before.into_iter().zip(after).enumerate() {
            cpu[i] = per_call(&before?, &after?, calls);
        }
        let medians = runs.each_ref().map(|runs| {
            runs.iter()
                .map(|run: &Samples| secs(run.median()) * 1e6)
                .collect::<Vec<f64>>()
        });
        let median = medians.each_ref().map(|runs| stats::median(runs));
        let row = if pinned {
            "pinned to one CPU"
        } else {
            "unpinned"
        };
        let against = |cost: f64, base: f64| {
            format!(
                "{:+.1} µs, {:.1}%",
                cost - base,
                (cost - base) / base * 100.0
            )
        };
        let _ = write!(latency, "| {row} |");
        for (median, runs) in median.iter().zip(&medians) {
            let _ = write!(latency, " {} |", stats::with_runs(*median, runs));
        }
        let _ = writeln!(
            latency,
            " {} | {} |",
            against(median[2], median[0]),
            against(median[3], median[0])
        );
        let total = cpu.map(|[serving, exporting]| serving + exporting);
        let _ = write!(cpu_table, "| {row} |");
        for (total, [_, exporting]) in total.iter().zip(cpu) {
            let _ = write!(cpu_table, " {total:.1} µs ({exporting:.1}) |");
        }
        let _ = writeln!(
            cpu_table,
            " {} | {} |",
            against(total[2], total[0]),
            against(total[3], total[0])
        );
    }
    pin_self(false)?;
    Ok(format!("{latency}\n{cpu_table}"))
}

/// The CPU time a call cost a server between two readings of its threads', in µs: on the
/// threads that serve requests, and on those of the OpenTelemetry SDK's exporters (its batch
/// span processor, its metrics reader and their HTTP client).
fn per_call(
    before: &[(String, String, Duration)],
    after: &[(String, String, Duration)],
    calls: f64,
) -> [f64; 2] {
    let mut spent = [0.0; 2];
    for (id, name, time) in after {
        let earlier = before
            .iter()
            .find(|(other, ..)| other == id)
            .map_or(Duration::ZERO, |(.., time)| *time);
        let exporting = name.starts_with("OpenTelemetry") || name.starts_with("reqwest");
        spent[usize::from(exporting)] += secs(time.saturating_sub(earlier)) * 1e6 / calls;
    }
    spent
}

/// An OTLP/HTTP receiver that takes every export and answers 200: its URL.
fn receiver() -> io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || take_exports(stream));
        }
    });
    Ok(url)
}

/// Reads the HTTP requests of one connection, answering each with 200, until it closes.
fn take_exports(stream: TcpStream) -> io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let line = line.trim_end().to_ascii_lowercase();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        io::copy(&mut (&mut reader).take(length), &mut io::sink())?;
        writer.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n",
        )?;
    }
}
