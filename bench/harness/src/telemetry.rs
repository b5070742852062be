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

use crate::server::{Connection, Server};
use crate::stats::{self, Samples};
use crate::workspace::Workspace;
use crate::{CALL_REQUESTS, CALL_WARMUP, ECHO, RUNS, in_runs, pin_self, secs};

/// The tool count of the servers measured.
const TOOLS: usize = 50;

/// The three servers, measured in turn, `RUNS` runs each, unpinned and then with driver and
/// server pinned to one CPU (where the exporter's thread takes its time from the calls'). Returns
/// the table, in Markdown.
pub(crate) fn measure(workspace: &Workspace) -> io::Result<String> {
    workspace.build(&[Server::Toolwright], TOOLS)?;
    let default = workspace.binary(Server::Toolwright, TOOLS);
    let otel =
        workspace.build_variant(Server::Toolwright, TOOLS, "otel", &["--features", "otel"])?;
    let endpoint = receiver()?;
    let mut table = format!(
        "| {TOOLS} tools, `echo` round trip, median of {RUNS} runs' medians (each run's) | \
         default features | `otel`, not exporting | `otel`, exporting over OTLP | exporting \
         against default | share of the round trip |\n\
         | --- | ---: | ---: | ---: | ---: | ---: |\n"
    );
    for pinned in [false, true] {
        pin_self(pinned)?;
        let servers: [(&PathBuf, &[(&str, &str)]); 3] = [
            (&default, &[]),
            (&otel, &[]),
            (&otel, &[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())]),
        ];
        let mut connections = Vec::new();
        for (binary, env) in servers {
            let mut connection = Connection::spawn_with(Server::Toolwright, binary, pinned, env)?;
            connection.initialize()?;
            connections.push(connection);
        }
        let mut connections: [Connection; 3] = connections
            .try_into()
            .unwrap_or_else(|_| unreachable!("three servers"));
        let runs = in_runs(&mut connections, CALL_WARMUP, CALL_REQUESTS, |connection| {
            connection
                .call("tools/call", ECHO)
                .map(|(elapsed, _)| elapsed)
        })?;
        connections.into_iter().try_for_each(Connection::close)?;
        let medians = runs.each_ref().map(|runs| {
            runs.iter()
                .map(|run: &Samples| secs(run.median()) * 1e6)
                .collect::<Vec<f64>>()
        });
        let [default, quiet, exporting] = medians.each_ref().map(|runs| stats::median(runs));
        let _ = writeln!(
            table,
            "| {} | {} | {} | {} | {:+.1} µs | {:.1}% |",
            if pinned {
                "pinned to one CPU"
            } else {
                "unpinned"
            },
            stats::with_runs(default, &medians[0]),
            stats::with_runs(quiet, &medians[1]),
            stats::with_runs(exporting, &medians[2]),
            exporting - default,
            (exporting - default) / default * 100.0,
        );
    }
    pin_self(false)?;
    Ok(table)
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
