//! Measures `SearchIndex` on a generated catalog of 10,000 tools: how long the index takes to
//! build, how long a search takes to give the progressive catalog its first page, and how much
//! heap the index keeps against the size of the manifest it was built from. Prints a Markdown
//! table; `BENCHMARKS.md` records it.
//!
//! `cargo run -p catalog-eval --release --bin catalog-speed`

mod generate;

use std::alloc::System;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::hint::black_box;
use std::time::{Duration, Instant};

use cap::Cap;
use serde_json::json;
use toolwright::search::SearchIndex;

/// Counts the bytes live on the heap, so the index's share can be read before and after it is
/// built.
#[global_allocator]
static HEAP: Cap<System> = Cap::new(System, usize::MAX);

/// How many tools the catalog holds.
const TOOLS: usize = 10_000;

/// How many times the index is built; the median is reported.
const BUILDS: usize = 5;

/// How many queries are timed, after one untimed pass over them all.
const QUERIES: usize = 5_000;

/// How many times each query is timed; its median is its latency, so that a moment when the
/// shared machine runs something else does not pass for a slow query.
const RUNS: usize = 3;

/// How many hits the progressive catalog shows on its first page.
const PAGE: usize = 10;

/// The targets of issue 5.
const P50_TARGET: Duration = Duration::from_millis(1);
const P99_TARGET: Duration = Duration::from_millis(5);
const MEMORY_TARGET: f64 = 2.0;

/// The latency at quantile `q` (0 to 1) of sorted durations.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn micros(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

/// One search as the progressive catalog makes it: the ranked hits, of which the first page and
/// the total count are kept.
fn first_page(index: &SearchIndex, query: &str) -> (Vec<toolwright::search::Hit>, usize) {
    let hits = index.search(query);
    (hits.iter().take(PAGE).copied().collect(), hits.len())
}

/// A digest of every hit (position and exact score) of every query: a change to the index's
/// internals that leaves it alone has changed no ranking.
fn fingerprint(index: &SearchIndex, queries: &[(&str, String)]) -> u64 {
    let mut hasher = DefaultHasher::new();
    for (_, query) in queries {
        for hit in index.search(query) {
            (hit.index, hit.score.to_bits()).hash(&mut hasher);
        }
    }
    hasher.finish()
}

fn main() {
    let tools = generate::catalog(TOOLS);
    let manifest_bytes = serde_json::to_vec(&json!({ "tools": tools }))
        .expect("a JSON value serialises")
        .len();

    let before = HEAP.allocated();
    let index = SearchIndex::new(&tools);
    let index_bytes = HEAP.allocated() - before;

    let mut builds: Vec<Duration> = (0..BUILDS)
        .map(|_| {
            let start = Instant::now();
            let index = black_box(SearchIndex::new(black_box(&tools)));
            let elapsed = start.elapsed();
            drop(index);
            elapsed
        })
        .collect();
    builds.sort();

    let queries = generate::queries(&tools, QUERIES);
    for (_, query) in &queries {
        black_box(first_page(&index, query));
    }
    let mut timed: Vec<(&str, Duration, usize)> = queries
        .iter()
        .map(|(style, query)| {
            let mut total = 0;
            let mut runs: Vec<Duration> = (0..RUNS)
                .map(|_| {
                    let start = Instant::now();
                    let (page, hits) = black_box(first_page(&index, black_box(query)));
                    let elapsed = start.elapsed();
                    drop(page);
                    total = hits;
                    elapsed
                })
                .collect();
            runs.sort();
            (*style, runs[RUNS / 2], total)
        })
        .collect();
    timed.sort_by_key(|&(_, elapsed, _)| elapsed);
    let all: Vec<Duration> = timed.iter().map(|&(_, elapsed, _)| elapsed).collect();
    let (p50, p99) = (quantile(&all, 0.5), quantile(&all, 0.99));
    let ratio = index_bytes as f64 / manifest_bytes as f64;

    println!("| measure | value | target | verdict |");
    println!("| --- | ---: | ---: | --- |");
    println!(
        "| index build, {TOOLS} tools (median of {BUILDS}) | {:.1} ms | | |",
        builds[BUILDS / 2].as_secs_f64() * 1e3
    );
    println!(
        "| search + first page, p50 ({QUERIES} queries, median of {RUNS} runs each) | {} | < 1 ms | {} |",
        micros(p50),
        verdict(p50 < P50_TARGET)
    );
    println!(
        "| search + first page, p99 | {} | < 5 ms | {} |",
        micros(p99),
        verdict(p99 < P99_TARGET)
    );
    println!(
        "| search + first page, max | {} | | |",
        micros(*all.last().expect("queries were timed"))
    );
    println!("| manifest (`tools/list` JSON) | {manifest_bytes} bytes | | |");
    println!(
        "| index heap | {index_bytes} bytes ({ratio:.2}× the manifest) | ≤ 2× | {} |",
        verdict(ratio <= MEMORY_TARGET)
    );

    println!();
    println!("| query style | queries | hits (mean) | p50 | p99 | max |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (style, _) in generate::STYLES {
        let of_style: Vec<(Duration, usize)> = timed
            .iter()
            .filter(|&&(s, _, _)| s == style)
            .map(|&(_, elapsed, total)| (elapsed, total))
            .collect();
        if of_style.is_empty() {
            continue;
        }
        let durations: Vec<Duration> = of_style.iter().map(|&(d, _)| d).collect();
        let hits = of_style.iter().map(|&(_, total)| total).sum::<usize>() / of_style.len();
        println!(
            "| {style} | {} | {hits} | {} | {} | {} |",
            of_style.len(),
            micros(quantile(&durations, 0.5)),
            micros(quantile(&durations, 0.99)),
            micros(*durations.last().expect("not empty")),
        );
    }
    println!();
    println!(
        "Rankings fingerprint: {:016x}",
        fingerprint(&index, &queries)
    );
}
