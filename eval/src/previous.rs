//! The ranking `SearchIndex` had before its Snowball stemmer, its prefixes on words as written
//! and its fusion with a model's similarity: the "today" the issue measured against, kept to
//! measure the ranking against it. Unchanged but for what ties it to the library (its
//! constructors from registries and manifests) and its tests, and its items made private.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ops::Range;

use serde_json::Value;

/// The parts of a tool that a query is matched against, each with its own weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Name,
    Title,
    Description,
    Tags,
    ArgumentNames,
    ArgumentDescriptions,
    Initials,
}

const FIELDS: [Field; 7] = [
    Field::Name,
    Field::Title,
    Field::Description,
    Field::Tags,
    Field::ArgumentNames,
    Field::ArgumentDescriptions,
    Field::Initials,
];

impl Field {
    /// How much one occurrence of a word in this field counts, before length normalisation.
    /// The name and the tags are words chosen to be found; a title mostly repeats the name;
    /// arguments say how a tool is called more than what it does.
    fn weight(self) -> f64 {
        match self {
            Field::Name | Field::Tags => 3.0,
            Field::Title => 1.5,
            Field::Description => 2.0,
            Field::ArgumentNames | Field::Initials => 1.0,
            Field::ArgumentDescriptions => 0.5,
        }
    }

    /// How much a field's length lowers its words' weight (BM25's `b`). Names and tags are a
    /// few words each, so their lengths say little about how much a word matters.
    fn length_normalisation(self) -> f64 {
        match self {
            Field::Name | Field::Title => 0.5,
            Field::Tags => 0.3,
            Field::Initials => 0.0,
            Field::Description | Field::ArgumentNames | Field::ArgumentDescriptions => 0.75,
        }
    }
}

/// How quickly repeated matches stop adding to a tool's score (BM25's `k1`).
const SATURATION: f64 = 1.2;

/// How much a word that merely starts with a query term counts, against a whole-word match.
const PREFIX_WEIGHT: f64 = 0.3;

/// How much a tool's score grows when the query holds every word of its name (in proportion
/// for some of them): `create slack channel` means `create_channel` more than `slack_upload_file`.
const NAME_COVERAGE: f64 = 0.2;

/// A query term of this many characters or more also matches the start of longer words.
const PREFIX_MIN_CHARS: usize = 3;

/// English function words, left out of a query that has other words.
const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "did", "do",
    "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its",
    "me", "my", "of", "on", "or", "our", "s", "so", "some", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "to", "us", "was", "we", "were", "what",
    "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
];

/// One tool that matches a query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Hit {
    /// The tool's position in the catalog the index was built from.
    pub(crate) index: usize,
    /// How well the tool matches: higher is better. Scores compare only within one query.
    pub(crate) score: f64,
}

/// A ranked full-text index over a catalog of tools, built once.
///
/// Each tool is read from its `tools/list` descriptor: the words of its `name` (split at `_`,
/// `-`, `.` and camelCase boundaries), its `title` (or `annotations.title`), its `description`,
/// the names and descriptions of its arguments (the properties of `inputSchema`, and of each
/// entry of its `$defs`), and its tags: a `tags` array of strings on the descriptor, a field
/// outside the protocol that [`toolwright::registry::Registry::search_index`] fills from each tool's
/// `#[mcp_tool(tags = [...])]`.
///
/// Ranking is BM25 over those fields, each with its own weight and length normalisation (a name
/// match counts for more than a match in an argument's description). Words are lowercased and
/// lightly stemmed, so `branches` finds `branch` and `deleting` finds `delete`; a query term of
/// three characters or more also finds the words it starts (`repo` finds `repository`), for less.
/// The initials of two or three name words in a row match too (`pr` finds
/// `create_pull_request`), a tool scores higher the more of its name words the query holds, and
/// English function words (`the`, `for`, `my`) are left out of a query that has other words.
/// Equal scores keep the catalog order.
///
/// How well this ranks is measured on a labelled set of 328 tools and 299 queries:
/// `cargo run -p catalog-eval --release` prints the table, and `BENCHMARKS.md` has it.
///
/// ```
/// use serde_json::json;
/// use toolwright::search::SearchIndex;
///
/// let tools = [
///     json!({"name": "list_pull_requests", "description": "List pull requests."}),
///     json!({"name": "delete_branch", "description": "Delete a branch."}),
///     json!({"name": "createBranch", "description": "Create a branch from a commit."}),
/// ];
/// let index = SearchIndex::new(&tools);
/// let hits = index.search("deleting branches");
/// assert_eq!(hits[0].index, 1);
/// assert_eq!(hits.len(), 2);
/// ```
#[derive(Clone, Debug)]
pub(crate) struct SearchIndex {
    /// Every distinct stemmed word, sorted, so that the words a prefix starts lie together.
    words: Vec<String>,
    /// Where each word's postings start in `postings`, and, last, where the final word's end.
    /// One flat list rather than one per word saves an allocation, a header and spare capacity
    /// per word.
    starts: Vec<u32>,
    /// Where each word occurs: the postings of the first word of `words`, then of the second,
    /// and so on; each word's in catalog order, and by field within a tool.
    postings: Vec<Posting>,
    /// For each tool and field, the length normalisation divisor of BM25.
    norms: Vec<[f64; FIELDS.len()]>,
    /// The words of each tool's name, as positions in `words`, one tool after another: a query
    /// term matches a range of `words`, so name coverage compares numbers, not strings.
    names: Vec<u32>,
    /// Where each tool's name starts in `names`, and, last, where the final tool's ends.
    name_starts: Vec<u32>,
}

/// The occurrences of one word in one field of one tool. Postings are most of an index, so they
/// are kept small: 8 bytes, where `(usize, usize, u32)` took 24.
#[derive(Clone, Copy, Debug)]
struct Posting {
    /// The tool's position in the catalog.
    tool: u32,
    /// How many times the word occurs in the field; a word repeated more than 65,535 times in
    /// one field counts 65,535 times.
    count: u16,
    /// The field, as a position in [`FIELDS`].
    field: u8,
}

/// A position or a count as the index stores it. A catalog of four billion tools or words would
/// not fit in memory to begin with.
fn compact(n: usize) -> u32 {
    u32::try_from(n).expect("fewer than 2^32 tools, words and postings")
}

impl SearchIndex {
    /// Indexes `tools`, descriptors as `tools/list` publishes them (see [`SearchIndex`] for the
    /// fields read). A descriptor that is not an object, or lacks a field, simply has no words
    /// there.
    pub(crate) fn new(tools: &[Value]) -> SearchIndex {
        SearchIndex::build(tools.iter().map(|tool| {
            let tags = match tool.get("tags") {
                Some(Value::Array(tags)) => tags.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            document(tool, &tags)
        }))
    }

    fn build(documents: impl Iterator<Item = [Vec<String>; FIELDS.len()]>) -> SearchIndex {
        let mut postings: BTreeMap<String, Vec<Posting>> = BTreeMap::new();
        let mut lengths: Vec<[usize; FIELDS.len()]> = Vec::new();
        let mut names: Vec<Vec<String>> = Vec::new();
        for (tool, fields) in documents.enumerate() {
            names.push(
                fields[Field::Name as usize]
                    .iter()
                    .map(|word| stem(word))
                    .collect(),
            );
            let mut length = [0; FIELDS.len()];
            for (field, words) in fields.into_iter().enumerate() {
                length[field] = words.len();
                let mut counts: BTreeMap<String, usize> = BTreeMap::new();
                for word in words {
                    *counts.entry(stem(&word)).or_default() += 1;
                }
                for (word, count) in counts {
                    postings.entry(word).or_default().push(Posting {
                        tool: compact(tool),
                        count: u16::try_from(count).unwrap_or(u16::MAX),
                        field: field as u8,
                    });
                }
            }
            lengths.push(length);
        }
        let mut average = [0.0; FIELDS.len()];
        for (field, average) in average.iter_mut().enumerate() {
            let total: usize = lengths.iter().map(|length| length[field]).sum();
            *average = total as f64 / lengths.len().max(1) as f64;
        }
        let norms = lengths
            .iter()
            .map(|length| {
                let mut norm = [1.0; FIELDS.len()];
                for (i, field) in FIELDS.iter().enumerate() {
                    if average[i] > 0.0 {
                        let b = field.length_normalisation();
                        norm[i] = 1.0 - b + b * length[i] as f64 / average[i];
                    }
                }
                norm
            })
            .collect();
        let mut words = Vec::with_capacity(postings.len());
        let mut starts = Vec::with_capacity(postings.len() + 1);
        let mut flat = Vec::with_capacity(postings.values().map(Vec::len).sum());
        for (word, postings) in postings {
            words.push(word);
            starts.push(compact(flat.len()));
            flat.extend(postings);
        }
        starts.push(compact(flat.len()));
        // Every word of a name is in `words`: the name is a field, indexed like the others.
        let mut name_words = Vec::with_capacity(names.iter().map(Vec::len).sum());
        let mut name_starts = Vec::with_capacity(names.len() + 1);
        for name in &names {
            name_starts.push(compact(name_words.len()));
            name_words.extend(name.iter().map(|word| {
                let position = words.binary_search(word).expect("a name word is indexed");
                compact(position)
            }));
        }
        name_starts.push(compact(name_words.len()));
        SearchIndex {
            words,
            starts,
            postings: flat,
            norms,
            names: name_words,
            name_starts,
        }
    }

    /// How many tools the index holds.
    pub(crate) fn len(&self) -> usize {
        self.norms.len()
    }

    /// Whether the index holds no tools.
    pub(crate) fn is_empty(&self) -> bool {
        self.norms.is_empty()
    }

    /// The tools that match `query`, best first; tools with equal scores keep their catalog
    /// order, so the same query always gives the same list. A tool that matches no word of the
    /// query is left out. A query without words (empty, or only punctuation) lists every tool in
    /// catalog order, each with a score of zero.
    pub(crate) fn search(&self, query: &str) -> Vec<Hit> {
        let mut query = words(query);
        // Function words say nothing about which tool is meant, and as prefixes (`the`, `for`)
        // they would match `theme` or `format`. A query of nothing else keeps them.
        if query
            .iter()
            .any(|word| !STOP_WORDS.contains(&word.as_str()))
        {
            query.retain(|word| !STOP_WORDS.contains(&word.as_str()));
        }
        let mut terms: Vec<String> = Vec::new();
        for word in query {
            let term = stem(&word);
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
        if terms.is_empty() {
            return (0..self.len())
                .map(|index| Hit { index, score: 0.0 })
                .collect();
        }
        let matches = self.matches(&terms);
        let tools = self.len() as f64;
        let mut scores = vec![0.0; self.len()];
        let mut frequency = vec![0.0; self.len()];
        // BM25F: a term's occurrences are weighted and length-normalised per field, then summed
        // and saturated once, so a word found in the name, the tags and the description adds up
        // to one strong match, not three independent ones.
        for (term, words) in terms.iter().zip(&matches) {
            frequency.iter_mut().for_each(|f| *f = 0.0);
            let mut matched = 0usize;
            for word in words.clone() {
                let weight = if self.words[word] == *term {
                    1.0
                } else {
                    PREFIX_WEIGHT
                };
                let postings = self.starts[word] as usize..self.starts[word + 1] as usize;
                for posting in &self.postings[postings] {
                    let (tool, field) = (posting.tool as usize, posting.field as usize);
                    if frequency[tool] == 0.0 {
                        matched += 1;
                    }
                    frequency[tool] += weight * FIELDS[field].weight() * f64::from(posting.count)
                        / self.norms[tool][field];
                }
            }
            let matched = matched as f64;
            let rarity = (1.0 + (tools - matched + 0.5) / (matched + 0.5)).ln();
            for (score, &f) in scores.iter_mut().zip(&frequency) {
                if f > 0.0 {
                    *score += rarity * f * (SATURATION + 1.0) / (f + SATURATION);
                }
            }
        }
        let mut hits: Vec<Hit> = scores
            .into_iter()
            .enumerate()
            .filter(|&(_, score)| score > 0.0)
            .map(|(index, score)| Hit {
                index,
                score: score * (1.0 + NAME_COVERAGE * self.name_coverage(index, &matches)),
            })
            .collect();
        // A stable sort: equal scores keep the catalog order.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        hits
    }

    /// The share of the tool's name words that some query term matches, given the words each
    /// term matches (see [`SearchIndex::matches`]).
    fn name_coverage(&self, tool: usize, matches: &[Range<usize>]) -> f64 {
        let name =
            &self.names[self.name_starts[tool] as usize..self.name_starts[tool + 1] as usize];
        let covered = name
            .iter()
            .filter(|&&word| matches.iter().any(|words| words.contains(&(word as usize))))
            .count();
        covered as f64 / name.len().max(1) as f64
    }

    /// For each stemmed query term, the indexed words it matches, as positions in `words`: the
    /// term itself, and, for a term long enough, every word it starts. The words a term starts
    /// follow it in sorted order, so they make one range.
    fn matches(&self, terms: &[String]) -> Vec<Range<usize>> {
        terms
            .iter()
            .map(|term| {
                let start = self.words.partition_point(|word| word < term);
                let prefix = term.chars().count() >= PREFIX_MIN_CHARS;
                let len = self.words[start..]
                    .iter()
                    .take_while(|word| *word == term || (prefix && word.starts_with(term.as_str())))
                    .count();
                start..start + len
            })
            .collect()
    }
}

/// The words of each field of one descriptor, in the order of [`FIELDS`].
fn document(tool: &Value, tags: &[&str]) -> [Vec<String>; FIELDS.len()] {
    let text = |value: Option<&Value>| words(value.and_then(Value::as_str).unwrap_or(""));
    let title = tool
        .get("title")
        .or_else(|| tool.get("annotations").and_then(|a| a.get("title")));
    let mut argument_names = Vec::new();
    let mut argument_descriptions = Vec::new();
    if let Some(schema) = tool.get("inputSchema") {
        let defs = schema.get("$defs").and_then(Value::as_object);
        for node in std::iter::once(schema).chain(defs.into_iter().flat_map(|d| d.values())) {
            let Some(properties) = node.get("properties").and_then(Value::as_object) else {
                continue;
            };
            for (name, property) in properties {
                argument_names.extend(words(name));
                argument_descriptions.extend(text(property.get("description")));
            }
        }
    }
    let name = text(tool.get("name"));
    let initials = initials(&name);
    [
        name,
        text(title),
        text(tool.get("description")),
        tags.iter().flat_map(|tag| words(tag)).collect(),
        argument_names,
        argument_descriptions,
        initials,
    ]
}

/// The abbreviations a name's words make: the initials of each run of two or three words in a
/// row, so that `pr` finds `create_pull_request` and `dm` finds `send_direct_message`.
fn initials(name: &[String]) -> Vec<String> {
    (2..=3)
        .flat_map(|run| name.windows(run))
        .map(|words| {
            words
                .iter()
                .filter_map(|word| word.chars().next())
                .collect()
        })
        .collect()
}

/// The lowercase words of `text`. Anything but a letter or a digit separates words, and so does
/// a camelCase boundary: a capital after a lowercase letter or a digit (`listV2Invoices` gives
/// `list`, `v2`, `invoices`), or the last capital of a run that a lowercase letter follows
/// (`HTTPServer` gives `http`, `server`). Digits stay with their letters: `k8s`, `s3`, `v2`.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        let previous = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        let boundary = c.is_uppercase()
            && previous.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_numeric()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if boundary && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// A light stem of a lowercase word: plural and verb endings removed, so that the forms of a
/// word meet (`branches`, `branch`; `deleting`, `deleted`, `deletes`, `delete`; `entries`,
/// `entry`). Not a full stemmer: it errs towards leaving a word as it is, and prefix matching
/// covers much of what it leaves.
fn stem(word: &str) -> String {
    if word.chars().count() <= 3 || !word.chars().all(|c| c.is_ascii_lowercase()) {
        return word.to_owned();
    }
    let mut stem = word.to_owned();
    if let Some(base) = stem.strip_suffix("ies") {
        stem = format!("{base}y");
    } else if let Some(base) = stem.strip_suffix("ied") {
        stem = format!("{base}y");
    } else if stem.ends_with('s') && !stem.ends_with("ss") && !stem.ends_with("us") {
        stem.pop();
    } else if let Some(base) = stem
        .strip_suffix("ing")
        .or_else(|| stem.strip_suffix("ed"))
        .filter(|base| base.len() >= 3 && base.contains(['a', 'e', 'i', 'o', 'u', 'y']))
    {
        stem = base.to_owned();
        // `stopped`, `running`: the doubled consonant belongs to the ending.
        let bytes = stem.as_bytes();
        let n = bytes.len();
        if bytes[n - 1] == bytes[n - 2] && !b"aeioulsz".contains(&bytes[n - 1]) {
            stem.pop();
        }
    }
    // `delete` and `delet(ing)`, `file` and `file(s)`: a final silent `e` is dropped everywhere.
    if stem.len() > 3 && stem.ends_with('e') && !stem.ends_with("ee") {
        stem.pop();
    }
    stem
}
