//! The progressive catalog's ranking: which tools answer a query, best first.
//!
//! A [`SearchIndex`] is built once over a catalog of tool descriptors and then answers any number
//! of queries. It works over any list of descriptors as `tools/list` publishes them, so a gateway
//! that aggregates other servers' tools can rank them too.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::manifest::Manifest;

#[cfg(feature = "semantic")]
mod bert;
#[cfg(feature = "semantic")]
mod cache;
#[cfg(feature = "semantic")]
mod semantic;
#[cfg(feature = "semantic")]
mod tensors;
mod text;
mod weights;

#[cfg(feature = "semantic")]
pub use cache::VectorCache;
#[cfg(feature = "semantic")]
pub use semantic::{Embedder, EmbedderError};
#[cfg(feature = "semantic")]
pub(crate) use semantic::{Kept, no_vectors};

pub(crate) use text::words;
use text::{STOP_WORDS, document, stem};
use weights::{
    FIELDS, Field, NAME_COVERAGE, PREFIX_MIN_CHARS, PREFIX_WEIGHT, SATURATION, name_bonus, rarity,
};

/// How a query's words and a model's similarity make one score, and which tools a model finds
/// by meaning alone (feature `semantic`): [`SearchIndex::with_fusion`]. Each score is
/// `(1 - meaning) · lexical / max(full_match · whole, best) + meaning · similarity`, where
/// `whole` is what a tool would score whose name held every query word and `best` is the query's
/// best lexical score.
///
/// The defaults were chosen on the project's evaluation sets (`cargo run -p catalog-eval
/// --features semantic -- --margins 0.05,0.1,0.15,0.2,1`, figures in BENCHMARKS.md), with
/// all-MiniLM-L6-v2: `meaning` and `full_match` where paraphrases gain most and keyword queries,
/// which words answer well, lose nothing; `floor` below which a tool is as near as unrelated
/// texts are; and `margin` where the tools a query finds by meaning alone fall from about 34 to
/// 2.4 a query on the project's own set (from 43 to 2.7 on the real servers' set) with recall@5
/// unchanged on every set and MRR within 0.003. A margin of 0.05 cost recall on the real
/// servers' set; a wider one returns more with nothing gained.
#[cfg(feature = "semantic")]
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Fusion {
    /// How much the similarity counts against the lexical score, from 0 (words only) to 1
    /// (meaning only): 0.5.
    pub meaning: f64,
    /// What share of `whole` counts as a full lexical match: 0.5, or the query's best lexical
    /// score when that is higher. The best score alone is no measure: the best of weak
    /// matches, a paraphrase's chance words, would count as fully as a keyword query's exact
    /// hit. A cap at a full match would be none either: every tool that matches fully would
    /// count the same, and the model alone would order a name's siblings ("create access
    /// policy" found `list_access_policies` before `create_access_policy`).
    pub full_match: f64,
    /// The least similarity for a tool that shares no word with the query: 0.15; below it a
    /// tool is as near as unrelated texts are.
    pub floor: f32,
    /// How far below the similarity of the query's nearest tool such a tool may be: 0.1. A
    /// floor alone returns most of a catalog for a vague query.
    pub margin: f32,
}

#[cfg(feature = "semantic")]
impl Default for Fusion {
    fn default() -> Fusion {
        Fusion {
            meaning: 0.5,
            full_match: 0.5,
            floor: 0.15,
            margin: 0.1,
        }
    }
}

#[cfg(feature = "semantic")]
impl Fusion {
    /// The lexical hits and each tool's similarity, fused: best first, equal scores in catalog
    /// order. A lexical hit near enough in meaning matched both ways.
    fn fuse(&self, lexical: Vec<Hit>, whole: f64, similarities: &[f32]) -> Vec<Hit> {
        let nearest = similarities.iter().copied().fold(f32::MIN, f32::max);
        let cut = self.floor.max(nearest - self.margin);
        // Lexical hits come best first. A full match is a share of `whole`, or the best hit's
        // score when that is higher, so that of the tools that match fully the better still
        // ranks first, and no lexical part passes 1.
        let best = lexical.first().map_or(0.0, |hit| hit.score);
        let full = (self.full_match * whole).max(best);
        let mut hits: Vec<Option<Hit>> = similarities
            .iter()
            .enumerate()
            .map(|(index, &s)| {
                (s >= cut).then(|| Hit {
                    index,
                    score: self.meaning * f64::from(s),
                    matched: Matched::Meaning,
                })
            })
            .collect();
        for hit in lexical {
            let lexical = if full > 0.0 { hit.score / full } else { 0.0 };
            let s = similarities[hit.index];
            hits[hit.index] = Some(Hit {
                index: hit.index,
                score: (1.0 - self.meaning) * lexical + self.meaning * f64::from(s),
                matched: if s >= cut {
                    Matched::Both
                } else {
                    Matched::Words
                },
            });
        }
        let mut hits: Vec<Hit> = hits.into_iter().flatten().collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        hits
    }
}

/// A query word, and the indexed words it matches.
struct Term {
    word: String,
    /// Its own stem, when some tool has it.
    exact: Option<usize>,
    /// The stems of the words it starts as written, other than its own.
    expansions: Vec<usize>,
}

impl Term {
    fn matches(&self, word: usize) -> bool {
        self.exact == Some(word) || self.expansions.contains(&word)
    }
}

/// A tool to index: its `tools/list` descriptor, serialised, and the tags it was registered with
/// (outside the protocol, so not in the descriptor).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Described<'a> {
    pub(crate) json: &'a [u8],
    pub(crate) tags: &'a [&'a str],
}

impl Described<'_> {
    fn descriptor(&self) -> Value {
        serde_json::from_slice(self.json).expect("a tool's own JSON reads back")
    }
}

/// One tool that matches a query.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Hit {
    /// The tool's position in the catalog the index was built from.
    pub index: usize,
    /// How well the tool matches: higher is better. Scores compare only within one query.
    pub score: f64,
    /// How it matched.
    pub matched: Matched,
}

/// How a tool matched a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Matched {
    /// It shares words with the query; a model, when one ranks too, finds it no nearer than
    /// the others it returns.
    Words,
    /// A model finds it as near in meaning as the nearest tools, and it shares no word with
    /// the query.
    Meaning,
    /// It shares words with the query, and a model finds it as near as the nearest tools.
    Both,
}

impl Matched {
    /// Its name in `search_tools` results: `words`, `meaning` or `both`.
    pub fn as_str(self) -> &'static str {
        match self {
            Matched::Words => "words",
            Matched::Meaning => "meaning",
            Matched::Both => "both",
        }
    }
}

/// What [`SearchIndex::rank`] found for a query.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Ranked {
    /// The tools that match, best first.
    pub hits: Vec<Hit>,
    /// Why the tools were ranked by their words only when a model ranks by meaning too: the
    /// tools are still being embedded, or could not be, or the query could not be. `None` when
    /// the ranking is what the index does.
    pub words_only: Option<WordsOnly>,
}

/// Why a ranking by meaning fell back to words ([`Ranked::words_only`]). Its `Display` is the
/// sentence `search_tools` puts in its `note`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WordsOnly {
    /// The tools are still being embedded (at start, on a thread of their own).
    Embedding,
    /// The tools could not be embedded: why.
    ToolsNotEmbedded(String),
    /// The query could not be embedded: why.
    QueryNotEmbedded(String),
}

impl WordsOnly {
    /// Its kind, one of a few values, as metrics count it: `embedding`, `tools_not_embedded`,
    /// `query_not_embedded`.
    pub fn kind(&self) -> &'static str {
        match self {
            WordsOnly::Embedding => "embedding",
            WordsOnly::ToolsNotEmbedded(_) => "tools_not_embedded",
            WordsOnly::QueryNotEmbedded(_) => "query_not_embedded",
        }
    }
}

impl fmt::Display for WordsOnly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WordsOnly::Embedding => f.write_str("the tools are still being embedded"),
            WordsOnly::ToolsNotEmbedded(why) => write!(f, "the tools could not be embedded: {why}"),
            WordsOnly::QueryNotEmbedded(why) => write!(f, "the query could not be embedded: {why}"),
        }
    }
}

/// A ranked full-text index over a catalog of tools, built once.
///
/// Each tool is read from its `tools/list` descriptor: the words of its `name` (split at `_`,
/// `-`, `.` and camelCase boundaries), its `title` (or `annotations.title`), its `description`,
/// the names and descriptions of its arguments (the properties of `inputSchema`, and of each
/// entry of its `$defs`), and its tags: a `tags` array of strings on the descriptor, a field
/// outside the protocol that [`Registry::search_index`](crate::registry::Registry::search_index)
/// fills from each tool's `#[mcp_tool(tags = [...])]`.
///
/// Ranking is BM25 over those fields, each with its own weight and length normalisation (a name
/// match counts for more than a match in an argument's description). Words are lowercased and
/// stemmed by the Snowball English stemmer, so `branches` finds `branch` and `deleting` finds
/// `delete`, while `note` and `not` stay apart; a query word of three characters or more also
/// finds the words it starts as written (`repo` finds `repository`), each such word a weaker
/// match with a rarity of its own, so that `not` reaches the one tool about notes before the many
/// about Notion. The initials of two or three name words in a row match too (`pr` finds
/// `create_pull_request`), a tool scores higher the more of its name words the query holds, and
/// English function words (`the`, `for`, `my`) are left out of a query that has other words.
/// Equal scores keep the catalog order.
///
/// How well this ranks is measured on two labelled sets, the project's own (328 tools, 299
/// queries) and 30 real servers' published tools (551 tools, 428 queries):
/// `cargo run -p catalog-eval --release` prints the tables, and `BENCHMARKS.md` has them.
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
pub struct SearchIndex {
    /// Every distinct stem, sorted.
    words: Vec<String>,
    /// Where each word's postings start in `postings`, and, last, where the final word's end.
    /// One flat list rather than one per word saves an allocation, a header and spare capacity
    /// per word.
    starts: Vec<u32>,
    /// Where each word occurs: the postings of the first word of `words`, then of the second,
    /// and so on; each word's in catalog order, and by field within a tool.
    postings: Vec<Posting>,
    /// Every distinct word as written (lowercase, not stemmed), sorted, so that the words a
    /// prefix starts lie together; and the stem of each, as a position in `words`.
    surfaces: Vec<String>,
    surface_stems: Vec<u32>,
    /// For each tool and field, the length normalisation divisor of BM25.
    norms: Vec<[f64; FIELDS.len()]>,
    /// The stems of each tool's name, as positions in `words`, one tool after another: a query
    /// term matches positions, so name coverage compares numbers, not strings.
    names: Vec<u32>,
    /// Where each tool's name starts in `names`, and, last, where the final tool's ends.
    name_starts: Vec<u32>,
    /// The tools' vectors and the model that made them, when the ranking is by meaning too.
    #[cfg(feature = "semantic")]
    semantic: Option<semantic::Semantic>,
    /// How the lexical score and the similarity make one.
    #[cfg(feature = "semantic")]
    fusion: Fusion,
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

/// For a build script: the vectors of `tools` (descriptors as `tools/list` publishes them) by
/// `embedder`, as [`Server::embedded_vectors`](crate::Server::embedded_vectors) reads them,
/// embedding only what `cache` lacks; and how many were embedded.
#[cfg(feature = "semantic")]
pub(crate) fn built_vectors(
    tools: &[Value],
    embedder: &Embedder,
    cache: Option<VectorCache>,
) -> Result<(Vec<u8>, usize), EmbedderError> {
    let texts: Vec<String> = tools.iter().map(text::prose).collect();
    semantic::built(embedder, &texts, cache)
}

impl SearchIndex {
    /// Indexes `tools`, descriptors as `tools/list` publishes them (see [`SearchIndex`] for the
    /// fields read). A descriptor that is not an object, or lacks a field, simply has no words
    /// there.
    pub fn new(tools: &[Value]) -> SearchIndex {
        SearchIndex::build(tools.iter().map(|tool| {
            let tags = match tool.get("tags") {
                Some(Value::Array(tags)) => tags.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            document(tool, &tags)
        }))
    }

    /// Indexes `tools` as [`SearchIndex::new`] does, and embeds each with `embedder` now (about
    /// 10 ms a tool on one core of a shared server's CPU, for all-MiniLM-L6-v2): [`search`] then
    /// ranks by meaning too, fusing the lexical score with the cosine similarity of the query's
    /// vector and each tool's. What a tool's vector is made of: the words of its name, its title and
    /// its description.
    ///
    /// [`search`]: SearchIndex::search
    #[cfg(feature = "semantic")]
    pub fn with_embedder(
        tools: &[Value],
        embedder: std::sync::Arc<Embedder>,
    ) -> Result<SearchIndex, EmbedderError> {
        SearchIndex::with_embedder_cached(tools, embedder, None)
    }

    /// [`SearchIndex::with_embedder`], embedding only the tools whose vectors `cache` does not
    /// have (by their text and the model), and keeping the new ones there.
    #[cfg(feature = "semantic")]
    pub fn with_embedder_cached(
        tools: &[Value],
        embedder: std::sync::Arc<Embedder>,
        cache: Option<&VectorCache>,
    ) -> Result<SearchIndex, EmbedderError> {
        let mut index = SearchIndex::new(tools);
        let texts: Vec<String> = tools.iter().map(text::prose).collect();
        let kept = semantic::Kept::in_cache(cache.cloned());
        index.semantic = Some(semantic::Semantic::now(embedder, &texts, &kept)?);
        Ok(index)
    }

    /// Indexes these tools as [`SearchIndex::from_described`] does, and embeds what is not
    /// `kept` of them: now when `wait`, else on a thread of its own, the ranking lexical until
    /// they are. A model that fails leaves the ranking lexical, and says so in the log.
    #[cfg(feature = "semantic")]
    pub(crate) fn from_described_embedded<'a>(
        tools: impl Iterator<Item = Described<'a>> + Clone,
        embedder: std::sync::Arc<Embedder>,
        kept: semantic::Kept,
        wait: bool,
    ) -> SearchIndex {
        let mut index = SearchIndex::from_described(tools.clone());
        let texts: Vec<String> = tools.map(|tool| text::prose(&tool.descriptor())).collect();
        index.semantic = if wait {
            semantic::Semantic::now(embedder, &texts, &kept)
                .inspect_err(|err| {
                    tracing::warn!("tools not embedded, search stays lexical: {err}")
                })
                .ok()
        } else {
            Some(semantic::Semantic::in_background(embedder, texts, kept))
        };
        index
    }

    /// Indexes the tools of a manifest, in its order (by name). A manifest holds the protocol's
    /// fields only, so tags are not searched:
    /// [`Registry::search_index`](crate::registry::Registry::search_index) has them.
    pub fn from_manifest(manifest: &Manifest) -> SearchIndex {
        match &manifest.as_json()["tools"] {
            Value::Array(tools) => SearchIndex::new(tools),
            _ => SearchIndex::new(&[]),
        }
    }

    /// Indexes these tools, in this order, with their tags.
    pub(crate) fn from_described<'a>(tools: impl Iterator<Item = Described<'a>>) -> SearchIndex {
        // Each descriptor is read for the index and dropped, rather than kept: a server in
        // progressive mode has many tools.
        SearchIndex::build(tools.map(|tool| document(&tool.descriptor(), tool.tags)))
    }

    fn build(documents: impl Iterator<Item = [Vec<String>; FIELDS.len()]>) -> SearchIndex {
        let mut postings: BTreeMap<String, Vec<Posting>> = BTreeMap::new();
        let mut surfaces: BTreeMap<String, String> = BTreeMap::new();
        let mut lengths: Vec<[usize; FIELDS.len()]> = Vec::new();
        let mut names: Vec<Vec<String>> = Vec::new();
        for (tool, fields) in documents.enumerate() {
            let mut length = [0; FIELDS.len()];
            for (field, words) in fields.into_iter().enumerate() {
                length[field] = words.len();
                let mut counts: BTreeMap<String, usize> = BTreeMap::new();
                for word in words {
                    let stem = surfaces.entry(word).or_insert_with_key(|word| stem(word));
                    *counts.entry(stem.clone()).or_default() += 1;
                }
                if field == Field::Name as usize {
                    names.push(counts.keys().cloned().collect());
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
        // Every stem is in `words`: each comes from a word of some field.
        let position = |stem: &String| compact(words.binary_search(stem).expect("indexed"));
        let mut name_words = Vec::with_capacity(names.iter().map(Vec::len).sum());
        let mut name_starts = Vec::with_capacity(names.len() + 1);
        for name in &names {
            name_starts.push(compact(name_words.len()));
            name_words.extend(name.iter().map(position));
        }
        name_starts.push(compact(name_words.len()));
        let surface_stems = surfaces.values().map(position).collect();
        SearchIndex {
            surfaces: surfaces.into_keys().collect(),
            surface_stems,
            words,
            starts,
            postings: flat,
            norms,
            names: name_words,
            name_starts,
            #[cfg(feature = "semantic")]
            semantic: None,
            #[cfg(feature = "semantic")]
            fusion: Fusion::default(),
        }
    }

    /// How many tools the index holds.
    pub fn len(&self) -> usize {
        self.norms.len()
    }

    /// Whether the index holds no tools.
    pub fn is_empty(&self) -> bool {
        self.norms.is_empty()
    }

    /// The tools that match `query`, best first; tools with equal scores keep their catalog
    /// order, so the same query always gives the same list. A tool that matches no word of the
    /// query is left out, unless a model ranks by meaning too (`SearchIndex::with_embedder`,
    /// feature `semantic`): then a tool near in meaning is in as well. A query without words
    /// (empty, or only punctuation) lists every tool in catalog order, each with a score of zero.
    pub fn search(&self, query: &str) -> Vec<Hit> {
        self.rank(query).hits
    }

    /// The tools that match `query`, as [`search`](SearchIndex::search) ranks them, and, when
    /// a model ranks by meaning too but could not for this query, why the ranking is by words
    /// only.
    pub fn rank(&self, query: &str) -> Ranked {
        let (lexical, _whole) = self.lexical(query);
        // A query without words lists the catalog in its order, by meaning or not.
        #[cfg(feature = "semantic")]
        if _whole > 0.0
            && let Some(semantic) = &self.semantic
        {
            return match semantic.similarities(query) {
                Ok(similarities) => Ranked {
                    hits: self.fusion.fuse(lexical, _whole, &similarities),
                    words_only: None,
                },
                Err(why) => Ranked {
                    hits: lexical,
                    words_only: Some(why),
                },
            };
        }
        Ranked {
            hits: lexical,
            words_only: None,
        }
    }

    /// The same index, fusing words and meaning as `fusion` says (feature `semantic`; see
    /// [`Fusion`] for the defaults and the evidence that chose them).
    #[cfg(feature = "semantic")]
    #[must_use]
    pub fn with_fusion(mut self, fusion: Fusion) -> SearchIndex {
        self.fusion = fusion;
        self
    }

    /// The tools that share words with `query`, best first; and what a tool would score whose
    /// name held every query word, each with its whole weight and the rarity of the word itself
    /// (of a word one tool has, for a query word no tool has): the `whole` of [`Fusion`].
    fn lexical(&self, query: &str) -> (Vec<Hit>, f64) {
        let mut query = words(query);
        // Function words say nothing about which tool is meant, and as prefixes (`the`, `for`)
        // they would match `theme` or `format`. A query of nothing else keeps them.
        if query
            .iter()
            .any(|word| !STOP_WORDS.contains(&word.as_str()))
        {
            query.retain(|word| !STOP_WORDS.contains(&word.as_str()));
        }
        let mut terms: Vec<Term> = Vec::new();
        for word in query {
            let term = self.term(&word);
            // `branch` and `branches` are one term.
            let repeated =
                |t: &Term| t.word == term.word || (t.exact.is_some() && t.exact == term.exact);
            if !terms.iter().any(repeated) {
                terms.push(term);
            }
        }
        if terms.is_empty() {
            let every = (0..self.len()).map(|index| Hit {
                index,
                score: 0.0,
                matched: Matched::Words,
            });
            return (every.collect(), 0.0);
        }
        let mut scores = vec![0.0; self.len()];
        let mut best = vec![0.0; self.len()];
        let mut frequency = vec![0.0; self.len()];
        let mut full = 0.0;
        for term in &terms {
            best.iter_mut().for_each(|b| *b = 0.0);
            // The word itself, then each word it starts, a weaker match with a rarity of its
            // own: a tool counts its best one, so `not` finding `notion` does not add up over
            // every Notion tool's words.
            full += match term.exact {
                Some(word) => self.score_word(word, 1.0, &mut frequency, &mut best),
                None => rarity(self.len(), 1),
            };
            for &word in &term.expansions {
                self.score_word(word, PREFIX_WEIGHT, &mut frequency, &mut best);
            }
            for (score, b) in scores.iter_mut().zip(&best) {
                *score += b;
            }
        }
        let mut hits: Vec<Hit> = scores
            .into_iter()
            .enumerate()
            .filter(|&(_, score)| score > 0.0)
            .map(|(index, score)| Hit {
                index,
                score: score
                    * name_bonus(
                        self.name_coverage(index, &terms),
                        self.whole_name(index, &terms),
                    ),
                matched: Matched::Words,
            })
            .collect();
        // A stable sort: equal scores keep the catalog order.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        (hits, full * (SATURATION + 1.0) * (1.0 + NAME_COVERAGE))
    }

    /// BM25F for one word: its occurrences are weighted and length-normalised per field, then
    /// summed and saturated once, so a word found in the name and the description adds up to
    /// one strong match, not two independent ones; times its rarity and `weight`. Each tool's
    /// `best` keeps the larger of what it had and this. Returns the word's rarity.
    fn score_word(&self, word: usize, weight: f64, frequency: &mut [f64], best: &mut [f64]) -> f64 {
        let postings = &self.postings[self.starts[word] as usize..self.starts[word + 1] as usize];
        let mut tools = Vec::new();
        for posting in postings {
            let (tool, field) = (posting.tool as usize, posting.field as usize);
            if frequency[tool] == 0.0 {
                tools.push(tool);
            }
            frequency[tool] +=
                FIELDS[field].weight() * f64::from(posting.count) / self.norms[tool][field];
        }
        let rarity = rarity(self.len(), tools.len());
        for tool in tools {
            let f = std::mem::take(&mut frequency[tool]);
            let score = weight * rarity * f * (SATURATION + 1.0) / (f + SATURATION);
            if score > best[tool] {
                best[tool] = score;
            }
        }
        rarity
    }

    /// A query word as the index matches it: its stem, if indexed, and, for a word of three
    /// characters or more, the stems of the words it starts as written (`repo` finds
    /// `repository`; `lin` finds `link`, not every word whose stem is `lin`).
    fn term(&self, word: &str) -> Term {
        let stem = stem(word);
        let exact = self.words.binary_search(&stem).ok();
        let mut expansions = Vec::new();
        if word.chars().count() >= PREFIX_MIN_CHARS {
            let start = self
                .surfaces
                .partition_point(|surface| surface.as_str() < word);
            for (surface, &stem) in self.surfaces[start..]
                .iter()
                .zip(&self.surface_stems[start..])
            {
                if !surface.starts_with(word) {
                    break;
                }
                let stem = stem as usize;
                if Some(stem) != exact && !expansions.contains(&stem) {
                    expansions.push(stem);
                }
            }
        }
        Term {
            word: word.to_owned(),
            exact,
            expansions,
        }
    }

    /// Whether the query holds every word of the tool's name as a whole word (stemmed), not
    /// only as a prefix.
    fn whole_name(&self, tool: usize, terms: &[Term]) -> bool {
        let name =
            &self.names[self.name_starts[tool] as usize..self.name_starts[tool + 1] as usize];
        !name.is_empty()
            && name
                .iter()
                .all(|&word| terms.iter().any(|term| term.exact == Some(word as usize)))
    }

    /// The share of the tool's name words that some query term matches, exactly or as a
    /// prefix.
    fn name_coverage(&self, tool: usize, terms: &[Term]) -> f64 {
        let name =
            &self.names[self.name_starts[tool] as usize..self.name_starts[tool + 1] as usize];
        let covered = name
            .iter()
            .filter(|&&word| terms.iter().any(|term| term.matches(word as usize)))
            .count();
        covered as f64 / name.len().max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn names<'a>(tools: &'a [Value], hits: &[Hit]) -> Vec<&'a str> {
        hits.iter()
            .map(|hit| tools[hit.index]["name"].as_str().unwrap())
            .collect()
    }

    fn search<'a>(tools: &'a [Value], query: &str) -> Vec<&'a str> {
        names(tools, &SearchIndex::new(tools).search(query))
    }

    #[test]
    fn a_query_of_a_whole_name_finds_that_tool_first() {
        let tools = [
            json!({
                "name": "show_board",
                "description": "Show the notebook as a board, one column per tag.",
                "inputSchema": {"properties": {"tag": {"description": "Only this tag."}}},
            }),
            json!({"name": "tag_note", "description": "File a note under more tags."}),
        ];
        assert_eq!(search(&tools, "tag note"), ["tag_note", "show_board"]);
    }

    #[test]
    fn inflected_queries_find_the_base_form() {
        let tools = [
            json!({"name": "delete_branch", "description": "Remove a branch."}),
            json!({"name": "list_entries", "description": "Show the journal."}),
        ];
        assert_eq!(search(&tools, "deleting branches"), ["delete_branch"]);
        assert_eq!(search(&tools, "entry"), ["list_entries"]);
    }

    #[test]
    fn only_terms_of_three_characters_or_more_match_a_prefix() {
        let tools = [
            json!({"name": "get_repository"}),
            json!({"name": "read_file"}),
            json!({"name": "re"}),
        ];
        assert_eq!(search(&tools, "repo"), ["get_repository"]);
        assert_eq!(search(&tools, "rep"), ["get_repository"]);
        // Two characters match whole words only.
        assert_eq!(search(&tools, "re"), ["re"]);
        // A prefix match counts for less than the whole word.
        let tools = [json!({"name": "reader"}), json!({"name": "read"})];
        assert_eq!(search(&tools, "read"), ["read", "reader"]);
    }

    #[test]
    fn a_name_match_outranks_a_description_match() {
        let tools = [
            json!({"name": "get_weather", "description": "Current conditions, with a forecast link."}),
            json!({"name": "get_forecast", "description": "Weather for the next days."}),
        ];
        assert_eq!(search(&tools, "forecast"), ["get_forecast", "get_weather"]);
        assert_eq!(search(&tools, "weather"), ["get_weather", "get_forecast"]);
    }

    #[test]
    fn every_field_is_searched() {
        let tools = [
            json!({"name": "a", "title": "Ship parcel"}),
            json!({"name": "b", "annotations": {"title": "Track parcel"}}),
            json!({"name": "c", "tags": ["logistics"]}),
            json!({"name": "d", "inputSchema": {"type": "object", "properties": {
                "trackingNumber": {"type": "string", "description": "Carrier reference"}
            }}}),
            json!({"name": "e", "inputSchema": {"type": "object", "$defs": {
                "Parcel": {"properties": {"weight": {"description": "In kilograms"}}}
            }}}),
        ];
        assert_eq!(search(&tools, "ship"), ["a"]);
        assert_eq!(search(&tools, "track"), ["b", "d"]);
        assert_eq!(search(&tools, "logistics"), ["c"]);
        assert_eq!(search(&tools, "number"), ["d"]);
        assert_eq!(search(&tools, "carrier"), ["d"]);
        assert_eq!(search(&tools, "kilograms"), ["e"]);
        assert_eq!(search(&tools, "weight"), ["e"]);
    }

    #[test]
    fn a_shorter_field_with_the_same_match_ranks_first() {
        let tools = [
            json!({"name": "create_issue_comment_reply"}),
            json!({"name": "create_issue"}),
        ];
        assert_eq!(
            search(&tools, "create issue"),
            ["create_issue", "create_issue_comment_reply"]
        );
    }

    #[test]
    fn equal_scores_keep_the_catalog_order() {
        let tools = [
            json!({"name": "send_email"}),
            json!({"name": "send_message"}),
            json!({"name": "send_invoice"}),
        ];
        let hits = SearchIndex::new(&tools).search("send");
        assert_eq!(
            names(&tools, &hits),
            ["send_email", "send_message", "send_invoice"]
        );
        assert_eq!(hits[0].score, hits[2].score);
    }

    #[test]
    fn the_initials_of_name_words_match_an_abbreviation() {
        let tools = [
            json!({"name": "create_pull_request"}),
            json!({"name": "send_direct_message"}),
            json!({"name": "press"}),
        ];
        assert_eq!(search(&tools, "pr"), ["create_pull_request"]);
        assert_eq!(search(&tools, "dm"), ["send_direct_message"]);
        assert_eq!(search(&tools, "sdm"), ["send_direct_message"]);
    }

    #[test]
    fn a_tool_whose_whole_name_the_query_holds_ranks_first() {
        let tools = [
            json!({"name": "slack_upload_file", "description": "Upload a file to a channel."}),
            json!({"name": "create_channel", "description": "Create a public channel."}),
        ];
        assert_eq!(
            search(&tools, "create slack channel"),
            ["create_channel", "slack_upload_file"]
        );
    }

    #[test]
    fn name_coverage_is_the_share_of_name_words_the_query_holds() {
        let tools = [
            json!({"name": "create_channel"}),
            json!({"name": "slack_upload_file"}),
        ];
        let index = SearchIndex::new(&tools);
        let coverage = |tool: usize, query: &str| {
            let terms: Vec<Term> = words(query).iter().map(|w| index.term(w)).collect();
            index.name_coverage(tool, &terms)
        };
        assert_eq!(coverage(0, "create slack channel"), 1.0);
        assert_eq!(coverage(1, "create slack channel"), 1.0 / 3.0);
        // Stems and prefixes count as they do for matching.
        assert_eq!(coverage(1, "slack uploads"), 2.0 / 3.0);
        assert_eq!(coverage(0, "chan"), 0.5);
        assert_eq!(coverage(0, "ch"), 0.0);
    }

    #[test]
    fn a_prefix_matches_words_as_written_not_their_stems() {
        // `line` once stemmed to `lin`, which as a prefix reached `link`.
        let tools = [
            json!({"name": "share_link", "description": "A link to the file."}),
            json!({"name": "lineup", "description": "Who plays tonight."}),
            json!({"name": "count_lines", "description": "How long a file is."}),
        ];
        assert_eq!(search(&tools, "line"), ["count_lines", "lineup"]);
        assert_eq!(
            search(&tools, "lin"),
            ["share_link", "lineup", "count_lines"]
        );
    }

    #[test]
    fn each_word_a_prefix_reaches_counts_with_its_own_rarity() {
        // `not` starts `notion`, on three tools, and `notes`, on one: the rarer word ranks its
        // tool first, and a tool scores its best match once, not every word's.
        let tools = [
            json!({"name": "notion_create_page", "description": "Create a Notion page."}),
            json!({"name": "notion_search", "description": "Search Notion."}),
            json!({"name": "notion_update_page", "description": "Update a Notion page."}),
            json!({"name": "list_notes", "description": "List the notes."}),
        ];
        assert_eq!(search(&tools, "not")[0], "list_notes");
        // The stemmer keeps `note` and `not` apart: `note` is a whole word of `list_notes`.
        assert_eq!(search(&tools, "note"), ["list_notes"]);
    }

    #[test]
    fn a_generic_verb_of_a_name_does_not_outrank_the_description() {
        let tools = [
            json!({"name": "read_resource", "description": "Read a resource by its URI."}),
            json!({"name": "list_events", "description": "The meetings of a calendar, \
                    between two dates."}),
        ];
        assert_eq!(search(&tools, "read calendar meetings")[0], "list_events");
    }

    #[test]
    fn function_words_are_left_out_unless_nothing_else_remains() {
        let tools = [
            json!({"name": "format_theme", "description": "Pick colours."}),
            json!({"name": "get_weather"}),
        ];
        // `the` and `for` would otherwise match `theme` and `format` as prefixes.
        assert_eq!(search(&tools, "the weather for today"), ["get_weather"]);
        assert_eq!(search(&tools, "the"), ["format_theme"]);
    }

    #[test]
    fn a_query_without_words_lists_every_tool_in_order() {
        let tools = [json!({"name": "b"}), json!({"name": "a"})];
        let index = SearchIndex::new(&tools);
        for query in ["", "  ", "?!"] {
            assert_eq!(
                index.search(query),
                [
                    Hit {
                        index: 0,
                        score: 0.0,
                        matched: Matched::Words,
                    },
                    Hit {
                        index: 1,
                        score: 0.0,
                        matched: Matched::Words,
                    }
                ]
            );
        }
        assert!(index.search("nothing").is_empty());
        assert!(SearchIndex::new(&[]).search("anything").is_empty());
        assert_eq!(index.len(), 2);
    }

    #[cfg(feature = "semantic")]
    fn by_words(index: usize, score: f64) -> Hit {
        Hit {
            index,
            score,
            matched: Matched::Words,
        }
    }

    /// Two tools that both match past a full match keep their lexical order against a model
    /// that finds the weaker a little nearer: an exact name stays above its siblings.
    #[cfg(feature = "semantic")]
    #[test]
    fn of_two_full_lexical_matches_the_better_ranks_first() {
        let fusion = Fusion::default();
        let lexical = vec![by_words(0, 0.9), by_words(1, 0.6)];
        let hits = fusion.fuse(lexical, 1.0, &[0.60, 0.67]);
        let order: Vec<usize> = hits.iter().map(|hit| hit.index).collect();
        assert_eq!(order, [0, 1]);
        // The best counts as a full match, the other in proportion.
        assert!((hits[0].score - (0.5 + 0.5 * 0.6)).abs() < 1e-6, "{hits:?}");
        assert!(
            (hits[1].score - (0.5 * 0.6 / 0.9 + 0.5 * 0.67)).abs() < 1e-6,
            "{hits:?}"
        );
    }

    /// A query's best lexical score below a full match counts as what it is, a part of one:
    /// a paraphrase's chance word does not count as an exact name would.
    #[cfg(feature = "semantic")]
    #[test]
    fn a_weak_best_lexical_match_counts_as_a_part_of_a_full_one() {
        let hits = Fusion::default().fuse(vec![by_words(0, 0.1)], 1.0, &[0.5, 0.2]);
        assert_eq!(hits[0].index, 0);
        // Its lexical part is 0.1 of a full match's 0.5: 0.2.
        assert!(
            (hits[0].score - (0.5 * 0.2 + 0.5 * 0.5)).abs() < 1e-6,
            "{hits:?}"
        );
    }
}
