//! Measures three tool-search rankers on the labelled catalog in `eval/catalog` and prints
//! recall@1, recall@5 and MRR for each, by query style, as a Markdown table.
//!
//! `cargo run -p catalog-eval --release`
//!
//! The package's other binary, `catalog-speed`, measures how fast `SearchIndex` is instead.

mod bm25;
mod seed;

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use toolwright::search::SearchIndex;

#[derive(Deserialize)]
struct Tools {
    tools: Vec<Value>,
}

#[derive(Deserialize)]
struct Queries {
    queries: Vec<Query>,
}

#[derive(Deserialize)]
struct Query {
    query: String,
    style: String,
    relevant: Vec<String>,
}

/// The three measures over a set of queries.
#[derive(Clone, Copy, Debug)]
struct Scores {
    recall_at_1: f64,
    recall_at_5: f64,
    mrr: f64,
}

/// The rankers compared, in the table's order.
const RANKERS: [&str; 3] = ["seed scorer", "plain BM25", "toolwright"];

/// The query sets, in the table's order.
const STYLES: [&str; 3] = ["keyword", "paraphrase", "all"];

/// A ranker: catalog positions of the tools that match a query, best first.
type Ranker<'a> = &'a dyn Fn(&str) -> Vec<usize>;

/// The scores of each ranker on each style: `[ranker][style]`.
struct Evaluation {
    scores: [[Scores; 3]; 3],
}

fn read<T: for<'de> Deserialize<'de>>(path: &Path) -> T {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn evaluate() -> Evaluation {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("catalog");
    let tools: Tools = read(&data.join("tools.json"));
    let queries: Queries = read(&data.join("queries.json"));
    let tools = tools.tools;
    let names: Vec<&str> = tools
        .iter()
        .map(|tool| tool["name"].as_str().expect("every tool has a name"))
        .collect();

    let seed = seed::SeedScorer::new(&tools);
    let bm25 = bm25::Bm25::new(&tools);
    let ours = SearchIndex::new(&tools);
    let rankers: [Ranker<'_>; 3] = [
        &|query| seed.search(query),
        &|query| bm25.search(query),
        &|query| ours.search(query).iter().map(|hit| hit.index).collect(),
    ];

    let mut scores = [[Scores {
        recall_at_1: 0.0,
        recall_at_5: 0.0,
        mrr: 0.0,
    }; 3]; 3];
    for (ranker, search) in rankers.iter().enumerate() {
        let ranks: Vec<(&str, Option<usize>)> = queries
            .queries
            .iter()
            .map(|query| {
                let found = search(&query.query);
                let rank = found
                    .iter()
                    .position(|&i| query.relevant.iter().any(|name| name == names[i]))
                    .map(|position| position + 1);
                (query.style.as_str(), rank)
            })
            .collect();
        for (style, name) in STYLES.iter().enumerate() {
            let ranks: Vec<Option<usize>> = ranks
                .iter()
                .filter(|(style, _)| *name == "all" || style == name)
                .map(|&(_, rank)| rank)
                .collect();
            scores[ranker][style] = measure(&ranks);
        }
    }
    Evaluation { scores }
}

/// Recall@1, recall@5 and MRR from the rank of each query's first relevant tool.
fn measure(ranks: &[Option<usize>]) -> Scores {
    let n = ranks.len().max(1) as f64;
    let within = |k: usize| {
        ranks
            .iter()
            .filter(|rank| rank.is_some_and(|r| r <= k))
            .count()
    };
    Scores {
        recall_at_1: within(1) as f64 / n,
        recall_at_5: within(5) as f64 / n,
        mrr: ranks.iter().flatten().map(|&r| 1.0 / r as f64).sum::<f64>() / n,
    }
}

impl Evaluation {
    fn table(&self) -> String {
        let mut out = String::from(
            "| ranker | queries | recall@1 | recall@5 | MRR |\n| --- | --- | ---: | ---: | ---: |\n",
        );
        for (ranker, name) in RANKERS.iter().enumerate() {
            for (style, queries) in STYLES.iter().enumerate() {
                let s = self.scores[ranker][style];
                out.push_str(&format!(
                    "| {name} | {queries} | {:.3} | {:.3} | {:.3} |\n",
                    s.recall_at_1, s.recall_at_5, s.mrr
                ));
            }
        }
        out
    }
}

fn main() {
    print!("{}", evaluate().table());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolwright_beats_both_baselines_on_every_measure() {
        let evaluation = evaluate();
        let [seed, bm25, ours] = &evaluation.scores;
        for style in 0..STYLES.len() {
            for (baseline, name) in [(seed, RANKERS[0]), (bm25, RANKERS[1])] {
                let (b, o) = (baseline[style], ours[style]);
                let table = evaluation.table();
                assert!(
                    o.recall_at_1 > b.recall_at_1,
                    "recall@1, {}, vs {name}:\n{table}",
                    STYLES[style]
                );
                assert!(
                    o.recall_at_5 > b.recall_at_5,
                    "recall@5, {}, vs {name}:\n{table}",
                    STYLES[style]
                );
                assert!(o.mrr > b.mrr, "MRR, {}, vs {name}:\n{table}", STYLES[style]);
            }
        }
        assert!(
            ours[0].recall_at_5 >= 0.90,
            "keyword recall@5 below 0.90:\n{}",
            evaluation.table()
        );
    }
}
