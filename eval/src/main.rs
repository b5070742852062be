//! Measures tool-search rankers on the labelled catalogs in `eval/catalog` and prints recall@1,
//! recall@5 and MRR for each, by query style, as Markdown tables: the project's own set without
//! its tags (the headline: real servers publish no tags), the same set with them, and the set of
//! real servers' published tool lists (`eval/catalog/real`).
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
struct Servers {
    servers: Vec<Server>,
}

#[derive(Deserialize)]
struct Server {
    server: String,
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
#[derive(Clone, Copy, Debug, Default)]
struct Scores {
    recall_at_1: f64,
    recall_at_5: f64,
    mrr: f64,
}

/// The rankers compared, in the tables' order.
const RANKERS: [&str; 3] = ["seed scorer", "plain BM25", "toolwright"];

/// The query sets, in the tables' order.
const STYLES: [&str; 3] = ["keyword", "paraphrase", "all"];

/// A ranker: catalog positions of the tools that match a query, best first.
type Ranker<'a> = &'a dyn Fn(&str) -> Vec<usize>;

/// A labelled catalog: its tools, the name each query's `relevant` calls each tool by, and the
/// queries.
struct Catalog {
    title: &'static str,
    tools: Vec<Value>,
    names: Vec<String>,
    queries: Vec<Query>,
}

/// The scores of each ranker on each style of one catalog: `[ranker][style]`.
struct Evaluation {
    title: &'static str,
    scores: [[Scores; 3]; 3],
}

fn read<T: for<'de> Deserialize<'de>>(path: &Path) -> T {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn data() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("catalog")
}

/// The project's own set, with its tags or without them.
fn own(tags: bool) -> Catalog {
    let mut tools: Tools = read(&data().join("tools.json"));
    if !tags {
        for tool in &mut tools.tools {
            if let Value::Object(tool) = tool {
                tool.remove("tags");
            }
        }
    }
    let names = tools
        .tools
        .iter()
        .map(|tool| tool["name"].as_str().expect("every tool has a name").to_owned())
        .collect();
    Catalog {
        title: if tags {
            "own set, with tags"
        } else {
            "own set, tags off"
        },
        tools: tools.tools,
        names,
        queries: read::<Queries>(&data().join("queries.json")).queries,
    }
}

/// Thirty real servers' tools in one catalog, each named `<server>/<tool>` as its queries
/// name it.
fn real() -> Catalog {
    let servers: Servers = read(&data().join("real/tools.json"));
    let mut tools = Vec::new();
    let mut names = Vec::new();
    for server in servers.servers {
        for tool in server.tools {
            names.push(format!(
                "{}/{}",
                server.server,
                tool["name"].as_str().expect("every tool has a name")
            ));
            tools.push(tool);
        }
    }
    Catalog {
        title: "real servers",
        tools,
        names,
        queries: read::<Queries>(&data().join("real/queries.json")).queries,
    }
}

fn evaluate(catalog: &Catalog) -> Evaluation {
    let seed = seed::SeedScorer::new(&catalog.tools);
    let bm25 = bm25::Bm25::new(&catalog.tools);
    let ours = SearchIndex::new(&catalog.tools);
    let rankers: [Ranker<'_>; 3] = [
        &|query| seed.search(query),
        &|query| bm25.search(query),
        &|query| ours.search(query).iter().map(|hit| hit.index).collect(),
    ];
    let mut scores = [[Scores::default(); 3]; 3];
    for (ranker, search) in rankers.iter().enumerate() {
        let ranks: Vec<(&str, Option<usize>)> = catalog
            .queries
            .iter()
            .map(|query| {
                let found = search(&query.query);
                let rank = found
                    .iter()
                    .position(|&i| query.relevant.contains(&catalog.names[i]))
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
    Evaluation {
        title: catalog.title,
        scores,
    }
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
        let mut out = format!(
            "{}:\n\n| ranker | queries | recall@1 | recall@5 | MRR |\n| --- | --- | ---: | ---: | ---: |\n",
            self.title
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
    for catalog in [own(false), real(), own(true)] {
        println!("{}", evaluate(&catalog).table());
    }
}
