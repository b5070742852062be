//! Measures a server's first search by meaning, as a client meets it: starts a server binary
//! with `--catalog progressive --embedding-model DIR` on stdio, sends `initialize` at once, then
//! `search_tools` until an answer is ranked by meaning (has no `note`; every 10 ms while it is
//! ranked by words), then 200 more searches;
//! and reads the server's peak and resident set sizes (`VmHWM`, `VmRSS`) at the end. Five
//! starts; prints a Markdown table, which `BENCHMARKS.md` records.
//!
//! ```text
//! TOOLWRIGHT_EMBEDDING_MODEL=DIR cargo build --release -p catalog-server --features semantic
//! cargo run -p catalog-eval --release --bin first-search -- target/release/catalog-server DIR
//! ```
//!
//! Any further arguments are passed to the server (`--embedding-cache DIR`, for one).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

/// What the searches ask, in turn.
const QUERIES: [&str; 8] = [
    "take back the money a customer paid",
    "who is on call tonight",
    "make a new git branch",
    "book a meeting room",
    "the invoice is overdue",
    "give the new hire a laptop",
    "why is the site slow",
    "share a file with the team",
];

/// How many times the server is started.
const STARTS: usize = 5;

/// How many searches follow the first by meaning.
const MORE: usize = 200;

/// One start's figures.
struct Start {
    /// From the process's start to `initialize` answered, in ms.
    initialize: f64,
    /// From `initialize` answered to the first search ranked by meaning answered, in ms.
    first: f64,
    /// How many searches that took, the one by meaning included.
    searches: usize,
    /// `VmHWM` and `VmRSS` after the searches, in MiB.
    peak: f64,
    resident: f64,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [binary, model, rest @ ..] = args.as_slice() else {
        eprintln!("usage: first-search SERVER_BINARY MODEL_DIR [SERVER_ARGS...]");
        return ExitCode::from(2);
    };
    println!(
        "| start | `initialize` answered after the start | first search by meaning after `initialize` | searches until then | peak RSS | resident |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for run in 1..=STARTS {
        match start(binary, model, rest) {
            Ok(start) => println!(
                "| {run} | {:.0} ms | {:.1} ms | {} | {:.1} MiB | {:.1} MiB |",
                start.initialize, start.first, start.searches, start.peak, start.resident
            ),
            Err(err) => {
                eprintln!("first-search: {err}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

fn start(binary: &str, model: &str, rest: &[String]) -> Result<Start, String> {
    let started = Instant::now();
    let mut server = Command::new(binary)
        .args(["--catalog", "progressive", "--embedding-model", model])
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| format!("cannot start {binary}: {err}"))?;
    let mut input = server.stdin.take().expect("piped");
    let mut output = BufReader::new(server.stdout.take().expect("piped"));
    let mut id = 0;
    let mut ask = |method: &str, params: Value| -> Result<Value, String> {
        id += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(input, "{request}").map_err(|err| format!("the server stopped reading: {err}"))?;
        loop {
            let mut line = String::new();
            if output.read_line(&mut line).map_err(|err| err.to_string())? == 0 {
                return Err("the server closed its output".to_owned());
            }
            let message: Value = serde_json::from_str(&line).map_err(|err| err.to_string())?;
            if message["id"] == id {
                return Ok(message);
            }
        }
    };
    ask(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "first-search", "version": "0"}}),
    )?;
    let initialized = Instant::now();
    let search = |query: &str| json!({"name": "search_tools", "arguments": {"query": query}});
    let mut searches = 0;
    loop {
        searches += 1;
        let answer = ask("tools/call", search(QUERIES[0]))?;
        let found = &answer["result"]["structuredContent"];
        if found.is_null() {
            return Err(format!("search_tools did not answer: {answer}"));
        }
        if found.get("note").is_none() {
            break;
        }
        // Ranked by words while the tools are embedded: asked again a little later, as a
        // client would, rather than taking the CPU the embedding needs.
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let first = initialized.elapsed();
    for i in 0..MORE {
        ask(
            "tools/call",
            search(&format!("{} {i}", QUERIES[i % QUERIES.len()])),
        )?;
    }
    let (peak, resident) = memory(server.id())?;
    let _ = server.kill();
    let _ = server.wait();
    Ok(Start {
        initialize: (initialized - started).as_secs_f64() * 1000.0,
        first: first.as_secs_f64() * 1000.0,
        searches,
        peak,
        resident,
    })
}

/// The process's peak and resident set sizes, in MiB.
fn memory(pid: u32) -> Result<(f64, f64), String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|err| format!("cannot read the server's memory (Linux only): {err}"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse::<f64>().ok())
            .map(|kib| kib / 1024.0)
            .ok_or(format!("no {name} in the server's status"))
    };
    Ok((field("VmHWM:")?, field("VmRSS:")?))
}
