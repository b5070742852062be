//! Plain BM25: one field holding all of a tool's text, whole lowercase words, no stemming and no
//! prefixes. The textbook baseline.

use std::collections::HashMap;

use serde_json::Value;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Plain BM25 over a catalog.
pub(crate) struct Bm25 {
    /// Each tool's word counts and length.
    tools: Vec<(HashMap<String, u32>, usize)>,
    /// How many tools hold each word.
    frequency: HashMap<String, usize>,
    average_length: f64,
}

impl Bm25 {
    pub(crate) fn new(tools: &[Value]) -> Bm25 {
        let tools: Vec<(HashMap<String, u32>, usize)> = tools
            .iter()
            .map(|tool| {
                let words = words(&text(tool));
                let mut counts = HashMap::new();
                for word in &words {
                    *counts.entry(word.clone()).or_default() += 1;
                }
                (counts, words.len())
            })
            .collect();
        let mut frequency: HashMap<String, usize> = HashMap::new();
        for (counts, _) in &tools {
            for word in counts.keys() {
                *frequency.entry(word.clone()).or_default() += 1;
            }
        }
        let total: usize = tools.iter().map(|(_, length)| length).sum();
        let average_length = total as f64 / tools.len().max(1) as f64;
        Bm25 {
            tools,
            frequency,
            average_length,
        }
    }

    /// Catalog positions of the tools with a positive score, best first, ties in catalog order.
    pub(crate) fn search(&self, query: &str) -> Vec<usize> {
        let mut terms = words(query);
        terms.sort();
        terms.dedup();
        let n = self.tools.len() as f64;
        let mut hits: Vec<(f64, usize)> = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, (counts, length))| {
                let norm = 1.0 - B + B * *length as f64 / self.average_length;
                let score = terms
                    .iter()
                    .filter_map(|term| {
                        let tf = f64::from(*counts.get(term)?);
                        let df = self.frequency[term] as f64;
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        Some(idf * tf * (K1 + 1.0) / (tf + K1 * norm))
                    })
                    .sum::<f64>();
                (score, i)
            })
            .filter(|&(score, _)| score > 0.0)
            .collect();
        hits.sort_by(|a, b| b.0.total_cmp(&a.0));
        hits.into_iter().map(|(_, i)| i).collect()
    }
}

/// Name, title, description, tags, argument names and argument descriptions, joined by spaces.
fn text(tool: &Value) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for key in ["name", "title", "description"] {
        parts.extend(tool.get(key).and_then(Value::as_str));
    }
    if let Some(tags) = tool.get("tags").and_then(Value::as_array) {
        parts.extend(tags.iter().filter_map(Value::as_str));
    }
    let properties = tool
        .get("inputSchema")
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        parts.push(name);
        parts.extend(property.get("description").and_then(Value::as_str));
    }
    parts.join(" ")
}

/// Runs of letters and digits, lowercased.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}
