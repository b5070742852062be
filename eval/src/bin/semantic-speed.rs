//! Measures search by meaning (`SearchIndex::with_embedder`, the `semantic` feature): how long
//! the model takes to load, to embed a catalog of 1,000 generated tools, and to answer a query
//! (its embedding, the similarities and the fusion with the lexical ranking), against the
//! lexical ranking alone on the same catalog; and the heap the model and the vectors keep.
//! Prints a Markdown table; `BENCHMARKS.md` records it.
//!
//! `TOOLWRIGHT_EMBEDDING_MODEL=DIR cargo run -p catalog-eval --release --features semantic --bin semantic-speed`
//!
//! With `--memory`, instead, the memory of a process that ranks 1,000 tools of real servers
//! (`catalog/real`, their descriptions as long as published, repeated under new names) by
//! meaning: the model loaded once, the tools embedded, the queries of the real set answered;
//! its peak and resident set sizes as Linux counts them (`VmHWM`, `VmRSS`).

#[path = "catalog-speed/generate.rs"]
mod generate;

use std::alloc::System;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cap::Cap;
use toolwright::search::{Embedder, SearchIndex};

#[global_allocator]
static HEAP: Cap<System> = Cap::new(System, usize::MAX);

/// How many tools the catalog holds.
const TOOLS: usize = 1_000;

/// How many queries are timed, and how many times each: its median is its latency.
const QUERIES: usize = 500;
const RUNS: usize = 3;

/// How many times the model is loaded; the median is reported.
const LOADS: usize = 3;

/// The targets: a query by meaning in under 10 ms at the median and 25 ms at the 99th
/// percentile, the query's embedding included.
const P50_TARGET: Duration = Duration::from_millis(10);
const P99_TARGET: Duration = Duration::from_millis(25);

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn millis(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

/// Each query's latency (the median of its runs), sorted.
fn latencies(index: &SearchIndex, queries: &[(&str, String)]) -> Vec<Duration> {
    for (_, query) in queries {
        black_box(index.search(query));
    }
    let mut all: Vec<Duration> = queries
        .iter()
        .map(|(_, query)| {
            let mut runs: Vec<Duration> = (0..RUNS)
                .map(|_| {
                    let start = Instant::now();
                    black_box(index.search(black_box(query)));
                    start.elapsed()
                })
                .collect();
            runs.sort();
            runs[RUNS / 2]
        })
        .collect();
    all.sort();
    all
}

/// The peak and resident set sizes of this process, in MiB: `VmHWM` and `VmRSS` of
/// `/proc/self/status`.
fn set_sizes() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux's /proc");
    let field = |name: &str| {
        let line = status
            .lines()
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in /proc/self/status"));
        let kib: f64 = line
            .split_whitespace()
            .nth(1)
            .and_then(|kib| kib.parse().ok())
            .expect("a size in kB");
        kib / 1024.0
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// `--memory`: see the crate's documentation.
fn memory(dir: &str) {
    #[derive(serde::Deserialize)]
    struct Real {
        servers: Vec<Server>,
    }
    #[derive(serde::Deserialize)]
    struct Server {
        tools: Vec<serde_json::Value>,
    }
    #[derive(serde::Deserialize)]
    struct Queries {
        queries: Vec<Query>,
    }
    #[derive(serde::Deserialize)]
    struct Query {
        query: String,
    }
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("catalog/real");
    let read = |file: &str| std::fs::read(data.join(file)).expect("the real servers' set");
    let real: Real = serde_json::from_slice(&read("tools.json")).expect("its tools");
    let queries: Queries = serde_json::from_slice(&read("queries.json")).expect("its queries");
    let published: Vec<serde_json::Value> = real
        .servers
        .into_iter()
        .flat_map(|server| server.tools)
        .collect();
    let tools: Vec<serde_json::Value> = (0..TOOLS)
        .map(|i| {
            let mut tool = published[i % published.len()].clone();
            let name = format!("{}_{}", tool["name"].as_str().unwrap_or("tool"), i);
            tool["name"] = serde_json::json!(name);
            tool
        })
        .collect();
    let embedder = Arc::new(Embedder::from_dir(dir).expect("the model loads"));
    let (loaded_peak, loaded) = set_sizes();
    let index = SearchIndex::with_embedder(&tools, embedder).expect("embedded");
    let (embedded_peak, _) = set_sizes();
    for query in &queries.queries {
        black_box(index.search(&query.query));
    }
    let (peak, resident) = set_sizes();
    println!("| measure | value | target | verdict |");
    println!("| --- | ---: | ---: | --- |");
    println!(
        "| peak and resident set sizes, the model loaded | {loaded_peak:.0} MiB, {loaded:.0} MiB | | |"
    );
    println!(
        "| peak set size, embedding {TOOLS} real servers' tools | {embedded_peak:.0} MiB | | |"
    );
    println!(
        "| peak set size, then {} queries | {peak:.0} MiB | ≤ 150 MiB | {} |",
        queries.queries.len(),
        verdict(peak <= 150.0)
    );
    println!(
        "| resident set size after | {resident:.0} MiB | ≤ 80 MiB | {} |",
        verdict(resident <= 80.0)
    );
}

fn main() {
    let dir = std::env::var("TOOLWRIGHT_EMBEDDING_MODEL")
        .expect("TOOLWRIGHT_EMBEDDING_MODEL names the model's folder");
    if std::env::args().nth(1).as_deref() == Some("--memory") {
        memory(&dir);
        return;
    }
    let before = HEAP.allocated();
    let embedder = Arc::new(Embedder::from_dir(&dir).expect("the model loads"));
    let model_bytes = HEAP.allocated() - before;
    let mut loads: Vec<Duration> = (0..LOADS)
        .map(|_| {
            let start = Instant::now();
            let model = black_box(Embedder::from_dir(&dir).expect("the model loads"));
            let elapsed = start.elapsed();
            drop(model);
            elapsed
        })
        .collect();
    loads.sort();

    let tools = generate::catalog(TOOLS);
    let lexical = SearchIndex::new(&tools);
    let before = HEAP.allocated();
    let start = Instant::now();
    let semantic = SearchIndex::with_embedder(&tools, Arc::clone(&embedder)).expect("embedded");
    let embedding = start.elapsed();
    let vectors_bytes = HEAP.allocated().saturating_sub(before);

    let queries = generate::queries(&tools, QUERIES);
    let mut embeddings: Vec<Duration> = queries
        .iter()
        .map(|(_, query)| {
            let start = Instant::now();
            black_box(embedder.embed(black_box(query)).expect("embedded"));
            start.elapsed()
        })
        .collect();
    embeddings.sort();
    let by_words = latencies(&lexical, &queries);
    let by_meaning = latencies(&semantic, &queries);
    let (p50, p99) = (quantile(&by_meaning, 0.5), quantile(&by_meaning, 0.99));

    println!("| measure | value | target | verdict |");
    println!("| --- | ---: | ---: | --- |");
    println!(
        "| model load (median of {LOADS}) | {} | | |",
        millis(loads[LOADS / 2])
    );
    println!(
        "| model heap | {:.1} MiB | | |",
        model_bytes as f64 / (1 << 20) as f64
    );
    println!(
        "| embedding {TOOLS} tools, once | {:.2} s ({:.1} ms a tool) | | |",
        embedding.as_secs_f64(),
        embedding.as_secs_f64() * 1e3 / TOOLS as f64
    );
    println!(
        "| index heap with the vectors, {TOOLS} tools | {:.2} MiB | | |",
        vectors_bytes as f64 / (1 << 20) as f64
    );
    println!(
        "| query by meaning, p50 ({QUERIES} queries, median of {RUNS} runs each) | {} | < 10 ms | {} |",
        millis(p50),
        verdict(p50 < P50_TARGET)
    );
    println!(
        "| query by meaning, p99 | {} | < 25 ms | {} |",
        millis(p99),
        verdict(p99 < P99_TARGET)
    );
    println!(
        "| the query's embedding alone, p50 / p99 | {} / {} | | |",
        millis(quantile(&embeddings, 0.5)),
        millis(quantile(&embeddings, 0.99))
    );
    println!(
        "| query by words alone, p50 / p99, same catalog | {} / {} | | |",
        millis(quantile(&by_words, 0.5)),
        millis(quantile(&by_words, 0.99))
    );
}
