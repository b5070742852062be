//! The seed's scorer: the ranking the progressive catalog started from, kept here as a baseline.
//!
//! Each query word adds fixed points for each part of a tool it matches, once per part: 4 for a
//! whole word of the name (2 when it only starts one), 3 for a tag, 2 for an argument name and 1
//! for the title or description. A word of three characters or more also matches the start of a
//! longer word. No stemming, no rarity, no length normalisation.

use serde_json::Value;

/// The words of one tool, part by part.
struct Parts {
    name: Vec<String>,
    tags: Vec<String>,
    arguments: Vec<String>,
    /// The title and the description together.
    text: Vec<String>,
}

/// The seed's scorer over a catalog.
pub(crate) struct SeedScorer {
    tools: Vec<Parts>,
}

impl SeedScorer {
    pub(crate) fn new(tools: &[Value]) -> SeedScorer {
        let tools = tools
            .iter()
            .map(|tool| {
                // The seed read the title from the annotations; MCP descriptors also carry it at
                // the top level, which is where the evaluation set has it.
                let title = str_of(
                    tool.get("title")
                        .or_else(|| tool.get("annotations").and_then(|a| a.get("title"))),
                );
                let tags = tool
                    .get("tags")
                    .and_then(Value::as_array)
                    .map(|tags| {
                        tags.iter()
                            .filter_map(Value::as_str)
                            .flat_map(words)
                            .collect()
                    })
                    .unwrap_or_default();
                Parts {
                    name: words(str_of(tool.get("name"))),
                    tags,
                    arguments: argument_names(tool.get("inputSchema").unwrap_or(&Value::Null))
                        .into_iter()
                        .flat_map(words)
                        .collect(),
                    text: words(&format!("{title} {}", str_of(tool.get("description")))),
                }
            })
            .collect();
        SeedScorer { tools }
    }

    /// Catalog positions of the tools with a positive score, best first, ties in catalog order.
    pub(crate) fn search(&self, query: &str) -> Vec<usize> {
        let mut terms: Vec<String> = Vec::new();
        for word in words(query) {
            if !terms.contains(&word) {
                terms.push(word);
            }
        }
        let mut hits: Vec<(u32, usize)> = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, parts)| (score(parts, &terms), i))
            .filter(|&(score, _)| terms.is_empty() || score > 0)
            .collect();
        hits.sort_by_key(|&(score, _)| std::cmp::Reverse(score));
        hits.into_iter().map(|(_, i)| i).collect()
    }
}

fn str_of(value: Option<&Value>) -> &str {
    value.and_then(Value::as_str).unwrap_or("")
}

fn score(parts: &Parts, terms: &[String]) -> u32 {
    let mut total = 0;
    for term in terms {
        let found_in = |part: &[String]| part.iter().any(|word| matches(word, term));
        if parts.name.contains(term) {
            total += 4;
        } else if found_in(&parts.name) {
            total += 2;
        }
        for (part, points) in [(&parts.tags, 3), (&parts.arguments, 2), (&parts.text, 1)] {
            if found_in(part) {
                total += points;
            }
        }
    }
    total
}

/// A whole-word match, or a term of three characters or more that starts the word.
fn matches(word: &str, term: &str) -> bool {
    word == term || (word.starts_with(term) && term.chars().count() >= 3)
}

/// Lowercase words: split at anything but a letter or digit, and before a capital that follows a
/// lowercase letter or a digit.
fn words(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for run in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|run| !run.is_empty())
    {
        let mut start = 0;
        let mut last: Option<char> = None;
        for (at, c) in run.char_indices() {
            if c.is_uppercase() && last.is_some_and(|l| l.is_lowercase() || l.is_numeric()) {
                found.push(run[start..at].to_lowercase());
                start = at;
            }
            last = Some(c);
        }
        found.push(run[start..].to_lowercase());
    }
    found
}

/// Property names of the schema's root and of each `$defs` entry, without the seed's two wrapper
/// keys `query` and `body` at the root.
fn argument_names(schema: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = property_names(schema)
        .into_iter()
        .filter(|name| *name != "query" && *name != "body")
        .collect();
    if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
        for def in defs.values() {
            names.extend(property_names(def));
        }
    }
    names
}

fn property_names(node: &Value) -> Vec<&str> {
    node.get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default()
}
