//! Measures search by meaning (`SearchIndex::with_embedder`, the `semantic` feature): how long
//! the model takes to load, to embed a catalog of 1,000 generated tools, and to answer a query
//! (its embedding, the similarities and the fusion with the lexical ranking), against the
//! lexical ranking alone on the same catalog; and the heap the model and the vectors keep.
//! Prints a Markdown table; `BENCHMARKS.md` records it.
//!
//! `TOOLWRIGHT_EMBEDDING_MODEL=DIR cargo run -p catalog-eval --release --features semantic --bin semantic-speed`

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

fn main() {
    let dir = std::env::var("TOOLWRIGHT_EMBEDDING_MODEL")
        .expect("TOOLWRIGHT_EMBEDDING_MODEL names the model's folder");
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
