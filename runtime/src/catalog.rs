//! The progressive catalog: `tools/list` shows the core tools and two meta-tools, and a model
//! finds the other tools with `search_tools` and runs them with `call_tool`.
//!
//! A client that loads hundreds of tool schemas spends tens of thousands of tokens before the
//! conversation starts, and models choose worse among many tools. In progressive mode the list
//! stays short; the whole catalog is still there, ranked by [`SearchIndex`], and every tool can
//! be called, by `call_tool` or directly by name.

use crate::live::Disabled;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::content::ToolResult;
use crate::registry::{Conflict, Registry, Tool};
use crate::schema::check::{ArgumentCheck, problem_list};
use crate::search::{Hit, Matched, SearchIndex, WordsOnly, words};

/// The meta-tool that searches the catalog.
pub(crate) const SEARCH_TOOL: &str = "search_tools";

/// The meta-tool that runs a tool by name.
pub(crate) const CALL_TOOL: &str = "call_tool";

/// The `_meta` key that asks a client to load a tool up front rather than defer it behind its
/// own tool search (Claude reads it; other clients ignore it).
const ALWAYS_LOAD: &str = "anthropic/alwaysLoad";

/// Hits on one `search_tools` page when the call sets no `limit`.
const DEFAULT_LIMIT: usize = 10;

/// The largest `limit` `search_tools` accepts, as its input schema states (and the argument
/// check enforces, as for every tool).
const MAX_LIMIT: usize = 50;

/// The longest `query`, in characters, as the input schema states.
const MAX_QUERY_CHARS: usize = 128;

/// The most distinct words one `query` may hold: the bound on the work of one search, checked
/// whatever the features, since no schema can state it.
const MAX_QUERY_WORDS: usize = 16;

/// How many tags the search tool's description names, the most used first; a catalog of
/// thousands of tools would otherwise make it as long as the list it replaces.
const OUTLINE_TAGS: usize = 24;

/// What progressive mode adds to the server's instructions.
const GUIDANCE: &str = "The tool list shows only the core tools. To find any other tool, call \
    `search_tools` with a few words of what you need; to run a tool the list does not show, \
    call `call_tool` with its name and arguments.";

/// How `tools/list` presents the tools: chosen with [`Server::catalog`](crate::Server::catalog)
/// or `--catalog full|progressive` on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Catalog {
    /// Every tool is listed. The default.
    #[default]
    Full,
    /// The list holds two meta-tools, `search_tools` and `call_tool`, then the core tools
    /// (`#[mcp_tool(core)]`). `search_tools` ranks the whole catalog for a query; `call_tool`
    /// runs any tool by name, with the checks of a direct call; a direct `tools/call` of an
    /// unlisted tool works too. This is not access control: every tool can be found and called.
    ///
    /// The server's instructions gain a sentence saying how to find the other tools, after the
    /// author's own. A tool named `search_tools` or `call_tool` stops the server at start with a
    /// [`Conflict::ReservedName`].
    Progressive,
}

impl Catalog {
    /// Every mode, in the order `--help` lists them.
    pub const ALL: [Catalog; 2] = [Catalog::Full, Catalog::Progressive];

    /// The mode's name on the command line: `full`, `progressive`.
    pub fn name(self) -> &'static str {
        match self {
            Catalog::Full => "full",
            Catalog::Progressive => "progressive",
        }
    }
}

impl fmt::Display for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Catalog {
    type Err = UnknownCatalog;

    fn from_str(name: &str) -> Result<Catalog, UnknownCatalog> {
        Catalog::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| UnknownCatalog(name.to_owned()))
    }
}

/// A name that is not a [`Catalog`] mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownCatalog(String);

impl fmt::Display for UnknownCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown catalog `{}`; expected `full` or `progressive`",
            self.0
        )
    }
}

impl std::error::Error for UnknownCatalog {}

/// Whether `name` is a meta-tool's.
fn is_meta_tool(name: &str) -> bool {
    name == SEARCH_TOOL || name == CALL_TOOL
}

impl Catalog {
    /// The tools this mode cannot serve: in progressive mode, those named like a meta-tool.
    pub(crate) fn conflicts(self, registry: &Registry) -> Vec<Conflict> {
        if self == Catalog::Full {
            return Vec::new();
        }
        registry
            .tools()
            .iter()
            .filter(|tool| is_meta_tool(tool.wire_name()))
            .map(|tool| Conflict::ReservedName {
                name: tool.wire_name().to_owned(),
                location: tool.origin(),
            })
            .collect()
    }
}

/// Whom a tool list is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Audience {
    /// A client that declared MCP Apps: it sees the tools only views call, which its host keeps
    /// from the model.
    Apps,
    /// Any other client, whose model sees all that is listed.
    Model,
}

/// The tools `tools/list` shows `audience`, each its JSON, in order: in progressive mode the
/// meta-tools and then the core tools, never one disabled or held back; `None` for the manifest's
/// tools as they are.
pub(crate) fn listed(
    progressive: Option<&Progressive>,
    registry: &Registry,
    audience: Audience,
    disabled: &Disabled,
) -> Option<Vec<Vec<u8>>> {
    let shown = |tool: &Tool| {
        let shown = match (progressive.is_some(), audience) {
            (false, Audience::Apps) => true,
            (false, Audience::Model) => !tool.is_app_only(),
            (true, Audience::Apps) => tool.is_core() || tool.is_app_only(),
            (true, Audience::Model) => tool.is_core() && !tool.is_app_only(),
        };
        shown && !disabled.tool_off(tool.wire_name())
    };
    let meta = match progressive {
        Some(progressive) => progressive.descriptors.to_vec(),
        None if registry.tools().iter().all(shown) => return None,
        None => Vec::new(),
    };
    let tools = registry.tools().iter().filter(|tool| shown(tool));
    Some(
        meta.into_iter()
            .chain(tools.map(|tool| tool.json().to_vec()))
            .collect(),
    )
}

/// The server's instructions in this mode: the author's, then the guidance progressive mode
/// adds. `None` when both are empty.
pub(crate) fn instructions(author: Option<String>, catalog: Catalog) -> Option<String> {
    let author = author.filter(|text| !text.trim().is_empty());
    match (author, catalog) {
        (author, Catalog::Full) => author,
        (Some(text), Catalog::Progressive) => Some(format!("{}\n\n{GUIDANCE}", text.trim_end())),
        (None, Catalog::Progressive) => Some(GUIDANCE.to_owned()),
    }
}

/// The catalog in progressive mode, built once at start: the meta-tools, checked by the input
/// schemas they declare, and the search index over every tool the model may call.
pub(crate) struct Progressive {
    /// The tools searched and called.
    registry: Arc<Registry>,
    index: SearchIndex,
    /// The registry's index of each indexed tool: tools only views call are left out.
    searched: Vec<usize>,
    /// The `tools/list` entries of `search_tools` and `call_tool`, serialised.
    descriptors: [Vec<u8>; 2],
    /// Each meta-tool's arguments, against its input schema.
    search_check: ArgumentCheck,
    call_check: ArgumentCheck,
}

/// The arguments of `search_tools`, as its input schema describes them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Search {
    #[serde(default)]
    query: String,
    #[serde(default)]
    detail: Detail,
    #[serde(default = "default_limit", deserialize_with = "integer")]
    limit: usize,
    #[serde(default, deserialize_with = "integer")]
    offset: usize,
}

fn default_limit() -> usize {
    DEFAULT_LIMIT
}

/// An integer as JSON Schema has it, `5.0` too: the schema accepted it. Past `usize`, the most
/// `usize` holds: an offset past every match, whatever its size, gives an empty page.
fn integer<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<usize, D::Error> {
    let number = serde_json::Number::deserialize(deserializer)?;
    let integral = number.as_u64().or_else(|| {
        number
            .as_f64()
            .filter(|n| n.fract() == 0.0 && *n >= 0.0)
            .map(|n| n as u64)
    });
    match integral {
        Some(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        None => Err(serde::de::Error::custom(format!(
            "{number} is not an integer of 0 or more"
        ))),
    }
}

/// How much of each tool `search_tools` returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Detail {
    Name,
    #[default]
    Summary,
    Full,
}

/// The arguments of `call_tool`, as its input schema describes them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallToolArguments {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
}

/// How the progressive catalog ranks the tools: by the words a query shares with them, or by
/// meaning too, with a model that embeds the tools at once (`wait`, for a command that prints
/// one search) or on a thread of its own while the server serves.
pub(crate) enum Ranking {
    Lexical,
    #[cfg(feature = "semantic")]
    Semantic {
        embedder: Arc<crate::search::Embedder>,
        /// The tools' vectors built with the binary, and where they are kept between starts.
        kept: crate::search::Kept,
        wait: bool,
    },
}

impl Progressive {
    pub(crate) fn new(registry: Arc<Registry>, ranking: Ranking) -> Progressive {
        let tools = registry.tools();
        let searched: Vec<usize> = (0..tools.len())
            .filter(|&i| !tools[i].is_app_only())
            .collect();
        let [search, call] = meta_descriptors(&registry);
        let check = |tool: &Value| {
            ArgumentCheck::new(&tool["inputSchema"]).expect("a meta-tool's schema compiles")
        };
        let searched_tools = searched.iter().map(|&i| tools[i].described());
        let index = match ranking {
            Ranking::Lexical => SearchIndex::from_described(searched_tools),
            #[cfg(feature = "semantic")]
            Ranking::Semantic {
                embedder,
                kept,
                wait,
            } => SearchIndex::from_described_embedded(searched_tools, embedder, kept, wait),
        };
        Progressive {
            registry,
            index,
            searched,
            search_check: check(&search),
            call_check: check(&call),
            descriptors: [search, call]
                .map(|tool| serde_json::to_vec(&tool).expect("a JSON value serialises")),
        }
    }

    /// The tools the model may call that match `query`, best first, with their scores and how
    /// they matched; and why the ranking is by words only, when a model should have ranked by
    /// meaning too.
    pub(crate) fn ranked(&self, query: &str) -> (Vec<(&Tool, Hit)>, Option<WordsOnly>) {
        let tools = self.registry.tools();
        let ranked = self.index.rank(query);
        let hits = ranked
            .hits
            .into_iter()
            .map(|hit| (&tools[self.searched[hit.index]], hit))
            .collect();
        (hits, ranked.words_only)
    }

    /// Runs `search_tools`: one page of the tools that match, those disabled or held back left
    /// out, or a
    /// tool error naming what is wrong with the arguments.
    pub(crate) fn search(&self, arguments: Value, disabled: &Disabled) -> ToolResult {
        let search: Search = match read(SEARCH_TOOL, &self.search_check, arguments) {
            Ok(search) => search,
            Err(refused) => return refused,
        };
        // The bound no schema can state.
        let mut distinct = words(&search.query);
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() > MAX_QUERY_WORDS {
            return ToolResult::error(format!(
                "invalid arguments for tool `{SEARCH_TOOL}`: `query` must hold at most \
                 {MAX_QUERY_WORDS} distinct words, not {}",
                distinct.len()
            ));
        }
        let (mut hits, words_only) = self.ranked(&search.query);
        hits.retain(|(tool, _)| !disabled.tool_off(tool.wire_name()));
        let tools: Vec<Value> = hits
            .iter()
            .skip(search.offset)
            .take(search.limit)
            .map(|(tool, hit)| entry(tool, hit.matched, search.detail))
            .collect();
        let mut found = json!({ "total": hits.len(), "tools": tools });
        if let Some(why) = words_only {
            #[cfg(feature = "otel")]
            crate::telemetry::words_only(why.kind());
            found["note"] = json!(format!(
                "These tools were ranked by their words only, not by meaning: {why}."
            ));
        }
        let text = serde_json::to_string(&found).expect("a JSON value serialises");
        ToolResult::text(text).with_structured(found)
    }

    /// Reads `call_tool`'s arguments: the name of the tool to run and its arguments (absent is
    /// `{}`), or a tool error saying what is wrong.
    pub(crate) fn unwrap_call(&self, arguments: Value) -> Result<(String, Value), ToolResult> {
        let call: CallToolArguments = read(CALL_TOOL, &self.call_check, arguments)?;
        if is_meta_tool(&call.name) {
            return Err(ToolResult::error(format!(
                "`{CALL_TOOL}` runs the catalog's tools, not `{name}`: call `{name}` directly",
                name = call.name
            )));
        }
        Ok((call.name, Value::Object(call.arguments.unwrap_or_default())))
    }
}

/// A meta-tool's arguments, checked against its input schema as a direct call's are, then read.
fn read<T: DeserializeOwned>(
    tool: &str,
    check: &ArgumentCheck,
    arguments: Value,
) -> Result<T, ToolResult> {
    let invalid = |problems: &str| {
        ToolResult::error(problem_list(
            &format!("invalid arguments for tool `{tool}`"),
            problems,
        ))
    };
    // A member given as `null` is taken for one left out, as models often send them.
    let arguments = match arguments {
        Value::Object(mut members) => {
            members.retain(|_, value| !value.is_null());
            Value::Object(members)
        }
        other => other,
    };
    check
        .check(&arguments)
        .map_err(|problems| invalid(&problems))?;
    serde_json::from_value(arguments).map_err(|error| invalid(&error.to_string()))
}

/// The `tools/list` entries of `search_tools` and `call_tool`.
fn meta_descriptors(registry: &Registry) -> [Value; 2] {
    let model_tools = || registry.tools().iter().filter(|tool| !tool.is_app_only());
    let search = format!(
        "Search this server's tools. {} A query of a few words matches tool names, titles, \
         descriptions, tags and arguments, best match first; an empty query lists every tool \
         in name order. The result gives `total`, the number of matches, and one page of \
         them: pass `offset` for the next. Use `detail: \"full\"` for a tool's input schema, \
         then run it with `call_tool`.",
        outline(
            model_tools().count(),
            model_tools().flat_map(|tool| tool.tags().iter().copied())
        )
    );
    let search = json!({
        "name": SEARCH_TOOL,
        "title": "Search tools",
        "description": search,
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "maxLength": MAX_QUERY_CHARS,
                    "description": "A few words of what the tool should do, at most 16. \
                        Empty lists every tool in name order.",
                },
                "detail": {
                    "type": "string",
                    "enum": ["name", "summary", "full"],
                    "default": "summary",
                    "description": "How much of each tool to return: `name` only; \
                        `summary` adds the title, description, tags and annotations; `full` \
                        adds the input and output schemas.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "default": DEFAULT_LIMIT,
                    "description": "The most tools to return.",
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "default": 0,
                    "description": "How many matches to skip: the next page starts at the \
                        previous offset plus its limit.",
                },
            },
            "additionalProperties": false,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "total": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "How many tools match the query.",
                },
                "tools": {
                    "type": "array",
                    "description": "One page of the matching tools, best first.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": { "type": "string" },
                            "matched": {
                                "type": "string",
                                "enum": ["words", "meaning", "both"],
                                "description": "How the tool matched: by the query's words, \
                                    by meaning alone (it shares no word with the query), or \
                                    both.",
                            },
                        },
                        "required": ["name", "matched"],
                    },
                },
                "note": {
                    "type": "string",
                    "description": "Why the tools were ranked by their words only, when the \
                        server ranks by meaning too but could not for this query.",
                },
            },
            "required": ["total", "tools"],
        },
        "annotations": {
            "readOnlyHint": true,
            "idempotentHint": true,
            "openWorldHint": false,
        },
        "_meta": { ALWAYS_LOAD: true },
    });
    let call = json!({
        "name": CALL_TOOL,
        "title": "Call a tool",
        "description": "Run one of this server's tools by name, including one the tool list \
            does not show; `search_tools` finds it and gives its input schema. The call is \
            checked and answered exactly as a direct call of that tool.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "The tool's name, as `search_tools` gives it.",
                },
                "arguments": {
                    "type": "object",
                    "description": "The tool's arguments, as its input schema describes them.",
                },
            },
            "required": ["name"],
            "additionalProperties": false,
        },
        // The tool it runs is not known in advance: the annotations state the worst case,
        // so that a client asks before running it.
        "annotations": {
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": false,
            "openWorldHint": true,
        },
        "_meta": { ALWAYS_LOAD: true },
    });
    [search, call]
}

/// What `search_tools` returns of one tool.
fn entry(tool: &Tool, matched: Matched, detail: Detail) -> Value {
    let descriptor = tool.descriptor();
    let mut entry = Map::new();
    entry.insert("name".into(), json!(tool.wire_name()));
    entry.insert("matched".into(), json!(matched.as_str()));
    if detail == Detail::Name {
        return Value::Object(entry);
    }
    let mut copy = |key: &str| {
        if let Some(value) = descriptor.get(key) {
            entry.insert(key.into(), value.clone());
        }
    };
    copy("title");
    copy("description");
    copy("annotations");
    if detail == Detail::Full {
        copy("inputSchema");
        copy("outputSchema");
    }
    if !tool.tags().is_empty() {
        entry.insert("tags".into(), json!(tool.tags()));
    }
    Value::Object(entry)
}

/// One sentence with the number of tools, and the most used tags with their counts.
fn outline<'a>(count: usize, tool_tags: impl Iterator<Item = &'a str>) -> String {
    let mut tags: Vec<(&str, usize)> = Vec::new();
    for tag in tool_tags {
        match tags.iter_mut().find(|(name, _)| *name == tag) {
            Some((_, count)) => *count += 1,
            None => tags.push((tag, 1)),
        }
    }
    // The most used first; a stable sort keeps equal counts in order of first use.
    tags.sort_by_key(|&(_, count)| std::cmp::Reverse(count));
    let mut outline = format!(
        "The server has {count} tool{}.",
        if count == 1 { "" } else { "s" }
    );
    if !tags.is_empty() {
        let named: Vec<String> = tags
            .iter()
            .take(OUTLINE_TAGS)
            .map(|(name, count)| format!("{name} ({count})"))
            .collect();
        outline.push_str(" Tags: ");
        outline.push_str(&named.join(", "));
        if tags.len() > OUTLINE_TAGS {
            outline.push_str(&format!(" and {} more", tags.len() - OUTLINE_TAGS));
        }
        outline.push('.');
    }
    outline
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_from_their_names_only() {
        for catalog in Catalog::ALL {
            assert_eq!(catalog.name().parse::<Catalog>(), Ok(catalog));
        }
        let err = "Progressive".parse::<Catalog>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown catalog `Progressive`; expected `full` or `progressive`"
        );
        assert_eq!(Catalog::default(), Catalog::Full);
    }

    #[test]
    fn instructions_put_the_guidance_after_the_authors_text() {
        assert_eq!(instructions(None, Catalog::Full), None);
        assert_eq!(instructions(Some(" \n".into()), Catalog::Full), None);
        assert_eq!(
            instructions(Some("Notes.".into()), Catalog::Full).as_deref(),
            Some("Notes.")
        );
        assert_eq!(
            instructions(None, Catalog::Progressive).as_deref(),
            Some(GUIDANCE)
        );
        assert_eq!(
            instructions(Some("Notes.\n".into()), Catalog::Progressive),
            Some(format!("Notes.\n\n{GUIDANCE}"))
        );
    }

    fn empty() -> Progressive {
        Progressive::new(
            Arc::new(Registry::from_registrations([]).unwrap()),
            Ranking::Lexical,
        )
    }

    fn error_text(result: &ToolResult) -> String {
        assert!(result.is_error());
        serde_json::to_value(result).unwrap()["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn the_search_rules_hold_at_their_limits() {
        let catalog = empty();
        let at_limits = json!({
            "query": "é".repeat(MAX_QUERY_CHARS),
            "detail": "full",
            "limit": MAX_LIMIT,
            "offset": u64::MAX,
        });
        assert!(!catalog.search(at_limits, &Disabled::default()).is_error());
        let defaults = [
            json!({}),
            json!({"query": null, "detail": null, "limit": null, "offset": null}),
        ];
        for arguments in defaults {
            let search: Search = read(SEARCH_TOOL, &catalog.search_check, arguments).unwrap();
            assert_eq!(
                (
                    search.query.as_str(),
                    search.detail,
                    search.limit,
                    search.offset
                ),
                ("", Detail::Summary, 10, 0)
            );
        }
        // An integer, as JSON Schema has it.
        let search: Search =
            read(SEARCH_TOOL, &catalog.search_check, json!({"limit": 5.0})).unwrap();
        assert_eq!(search.limit, 5);
        // Words are counted as the search splits them: `listNotes` is two.
        let camel = |pairs: u32| {
            let query: Vec<String> = (0..pairs).map(|n| format!("x{n}Y{n}")).collect();
            catalog.search(json!({"query": query.join(" ")}), &Disabled::default())
        };
        assert!(!camel(8).is_error());
        assert_eq!(
            error_text(&camel(9)),
            "invalid arguments for tool `search_tools`: `query` must hold at most 16 distinct \
             words, not 18"
        );
    }

    #[test]
    fn search_arguments_are_checked_by_the_schema_search_tools_declares() {
        let catalog = empty();
        let refused =
            |arguments: Value| error_text(&catalog.search(arguments, &Disabled::default()));
        assert_eq!(
            refused(json!({"limit": 0})),
            "invalid arguments for tool `search_tools`: argument `limit`: 0 is less than the \
             minimum of 1"
        );
        assert_eq!(
            refused(json!({"filter": "notes"})),
            "invalid arguments for tool `search_tools`: unknown argument `filter`; expected one \
             of `detail`, `limit`, `offset`, `query`"
        );
    }

    #[test]
    fn the_outline_names_the_most_used_tags_first() {
        assert_eq!(outline(1, std::iter::empty()), "The server has 1 tool.");
        assert_eq!(
            outline(3, ["b", "a", "a", "c", "b", "a"].into_iter()),
            "The server has 3 tools. Tags: a (3), b (2), c (1)."
        );
        let many: Vec<String> = (0..30).map(|n| format!("t{n}")).collect();
        let outline = outline(30, many.iter().map(String::as_str));
        assert!(
            outline.ends_with("t22 (1), t23 (1) and 6 more."),
            "{outline}"
        );
    }

    #[test]
    fn call_tool_arguments_default_to_an_empty_object() {
        let catalog = empty();
        let (name, arguments) = catalog.unwrap_call(json!({"name": "get_note"})).unwrap();
        assert_eq!((name.as_str(), arguments), ("get_note", json!({})));
        let (_, arguments) = catalog
            .unwrap_call(json!({"name": "x", "arguments": null}))
            .unwrap();
        assert_eq!(arguments, json!({}));
        let refused = catalog.unwrap_call(json!("get_note")).unwrap_err();
        assert!(refused.is_error());
        let refused = catalog
            .unwrap_call(json!({"name": "search_tools"}))
            .unwrap_err();
        assert_eq!(
            error_text(&refused),
            "`call_tool` runs the catalog's tools, not `search_tools`: call `search_tools` directly"
        );
    }
}
