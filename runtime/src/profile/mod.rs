//! Client schema profiles: one manifest rendered for the clients people use, each with its own
//! rules for tool names and schemas.
//!
//! A name a client cannot carry is changed and mapped back; a schema a client cannot express
//! faithfully is rewritten and the change [reported](ProfileReport), never changed in meaning
//! silently. The server keeps checking every call against the schema it serves itself, so a
//! call the rewritten schema lets through but the tool's own schema does not is refused with
//! the usual error, which the model reads. See [`Profile`] for each client's rules.

mod names;
mod rewrite;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value, json};

/// A client's rules for tools, and the shape of the document it takes them in.
///
/// | profile | document | names | schemas |
/// | --- | --- | --- | --- |
/// | `mcp` (default) | the manifest itself, `{ "tools": [...] }` as `tools/list` serves it | unchanged | unchanged |
/// | `openai` | `{ "tools": [ { "type": "function", "name", "description", "parameters", "strict": true } ] }`: function tools of the Responses API (Chat Completions nests the same fields under `"function"`) | `^[a-zA-Z0-9_-]{1,64}$` | strict mode (below) |
/// | `anthropic` | `{ "tools": [ { "name", "description", "input_schema" } ] }`: the Messages API's `tools` | `^[a-zA-Z0-9_-]{1,64}$` | JSON Schema, with no `oneOf`, `anyOf` or `allOf` at the root |
/// | `gemini` | `{ "functionDeclarations": [ { "name", "description", "parameters" } ] }`: one `Tool` of the Gemini API | a letter or `_` first, then `a-z A-Z 0-9 _ . -`, at most 64 | the API's OpenAPI-style `Schema` (below) |
///
/// Tools keep the manifest's order (by name). Only the input schema travels: none of these
/// clients takes a `title`, an output schema or annotations for a function.
///
/// # Names
///
/// Each character a client refuses becomes `_`; for Gemini, a name that does not start with a
/// letter or `_` gets a `_` in front. A name still longer than 64 characters is cut to 55 and
/// ends with `_` and the first 8 hex digits of the SHA-256 of the whole original name, so two
/// long names that share their start stay apart. [`Rendering::tool_name`] maps a name a client
/// calls back to the tool; two tools that would get one name are refused with
/// [`ProfileError::Collisions`].
///
/// # Schemas
///
/// What each profile rewrites, and whether the meaning is kept (faithful) or the change is
/// [reported](Rendering::reports). A report names the tool, a JSON pointer into the rendered
/// schema, what changed and why.
///
/// | schema | `openai` | `gemini` |
/// | --- | --- | --- |
/// | `oneOf` whose alternatives are all `const`s or `enum`s (unit variants) | `enum`, the alternatives' descriptions added to the description; faithful | the same |
/// | other `oneOf` | `anyOf`: faithful when no value can match two alternatives (different types; different `const`s of a property both require, as `#[serde(tag = "...")]` makes; a closed object against one that requires a property it does not list, as externally tagged enums make); reported otherwise | the same |
/// | `allOf`; a `$ref` with keywords beside it | merged into one schema, the `$ref` resolved once; faithful unless two parts disagree on a keyword (reported) | merged |
/// | a `$ref` alone | kept, with the `$defs` still referred to | inlined. Where it refers to itself it is inlined once more, and deeper values are not offered (reported): an array there takes only `[]`, an alternative or an optional property there is left out |
/// | an object | closed (`additionalProperties: false`) and every property in `required`: faithful for a property that accepts `null` (`Option<T>`; the tool reads `null` as absent, as serde does); one that does not is required all the same, reported | `additionalProperties: false` dropped: the properties still list what an object holds, and the server refuses other keys as before |
/// | a map (`additionalProperties` with a schema), an object with any keys | closed, so only the listed properties (often none) can be given; reported | not offered (Gemini refuses an object without properties): an optional property is left out, a required one too, and each is reported. Keys beyond listed properties: dropped, reported |
/// | `type: [T, "null"]` | kept | `type: T, nullable: true`; several types become `anyOf`, each with its keywords; faithful |
/// | `anyOf` with a `{"type": "null"}` alternative | kept | the other alternatives and `nullable: true`; faithful |
/// | `const` | kept | a string: an `enum` of one; faithful. Other values: dropped, reported |
/// | `enum` | kept | `null` becomes `nullable: true`; faithful. Values that are not strings: dropped, reported |
/// | a tuple (`prefixItems`) | `items`: the element type when all positions share it (faithful), else `anyOf` of them (reported) | the same |
/// | `default` | dropped, and the value written into the description: documentation only, the tool applies it | the same |
/// | `format` | kept for the string formats OpenAI lists (`date-time`, `time`, `date`, `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uuid`), others dropped: an annotation, which the server does not check (derived schemas carry none of the numeric formats schemars writes: their ranges are `minimum` and `maximum`) | kept when Gemini lists it (`int32`, `int64`, `float`, `double`, `date-time`, `enum`), others dropped |
/// | `minimum`, `maximum` (the integer types' ranges) | kept | kept; an integer's `exclusiveMinimum`/`exclusiveMaximum` becomes `minimum`/`maximum`; faithful |
/// | other keywords the client does not list (`uniqueItems`, `minLength`, `not`, `if`, `patternProperties`, ...) | dropped, reported | dropped, reported |
/// | annotations (`examples`, `deprecated`, `$comment`, ...) | dropped | dropped |
/// | a schema that accepts any value | `anyOf` of string, number, boolean and null; reported | `type: string`; reported |
/// | `oneOf` or `anyOf` at the root (a flattened enum) | merged into one object: every alternative's properties, required when every alternative requires them; reported. The optional ones accept `null` | merged the same, reported |
///
/// `anthropic` merges a composed root the same way, and changes nothing else. A Gemini
/// function without parameters has no `parameters`.
///
/// Reports cover both directions: a rewrite that lets through values the tool's schema
/// refuses (the server, which keeps checking every call against that schema, refuses them with
/// an error the model reads), and one that no longer offers values the tool accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Profile {
    /// The MCP specification, exactly: the manifest as served.
    #[default]
    Mcp,
    /// OpenAI function tools in strict mode.
    OpenAi,
    /// Anthropic's Messages API tools.
    Anthropic,
    /// Gemini function declarations.
    Gemini,
}

impl Profile {
    /// Every profile, in the order of [`Profile::name`]'s list.
    pub const ALL: [Profile; 4] = [
        Profile::Mcp,
        Profile::OpenAi,
        Profile::Anthropic,
        Profile::Gemini,
    ];

    /// The profile's name: `mcp`, `openai`, `anthropic` or `gemini`.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Mcp => "mcp",
            Profile::OpenAi => "openai",
            Profile::Anthropic => "anthropic",
            Profile::Gemini => "gemini",
        }
    }

    /// The client, as a sentence names it.
    fn client(self) -> &'static str {
        match self {
            Profile::Mcp => "MCP",
            Profile::OpenAi => "OpenAI's strict mode",
            Profile::Anthropic => "Anthropic",
            Profile::Gemini => "Gemini's schema",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = UnknownProfile;

    fn from_str(name: &str) -> Result<Profile, UnknownProfile> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| UnknownProfile(name.to_owned()))
    }
}

/// A profile name that is none of [`Profile::ALL`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownProfile(String);

impl fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown profile `{}`; expected one of ", self.0)?;
        for (i, profile) in Profile::ALL.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}`{profile}`")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownProfile {}

/// A manifest rendered for one client: the document to send it, the way back from the names it
/// calls to the tools, and what could not be kept.
#[derive(Clone, Debug)]
pub struct Rendering {
    profile: Profile,
    document: Value,
    names: BTreeMap<String, String>,
    reports: Vec<ProfileReport>,
}

impl Rendering {
    /// The profile rendered for.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// The document, in the client's shape (see [`Profile`]).
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// The document, owned.
    pub fn into_document(self) -> Value {
        self.document
    }

    /// Every name the client sees, with the tool it calls: the same name unless the client
    /// could not carry it.
    pub fn names(&self) -> &BTreeMap<String, String> {
        &self.names
    }

    /// The tool a name the client called stands for.
    pub fn tool_name(&self, client_name: &str) -> Option<&str> {
        self.names.get(client_name).map(String::as_str)
    }

    /// The name the client sees for a tool.
    pub fn client_name(&self, tool: &str) -> Option<&str> {
        self.names
            .iter()
            .find(|(_, t)| *t == tool)
            .map(|(name, _)| name.as_str())
    }

    /// Every change that does not keep a schema's meaning, in manifest order; empty when the
    /// client receives every tool as the server means it.
    pub fn reports(&self) -> &[ProfileReport] {
        &self.reports
    }
}

/// A change to a tool's input schema that a client's rules forced and that does not keep its
/// meaning exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileReport {
    tool: String,
    pointer: String,
    change: String,
}

impl ProfileReport {
    /// The tool, by its name in the manifest.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Where in the rendered input schema, as a JSON pointer (`""` is the root).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// What changed and why.
    pub fn change(&self) -> &str {
        &self.change
    }
}

impl fmt::Display for ProfileReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "tool `{}`, at the root: {}", self.tool, self.change)
        } else {
            write!(
                f,
                "tool `{}`, at `{}`: {}",
                self.tool, self.pointer, self.change
            )
        }
    }
}

/// Why a manifest cannot be rendered for a profile.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProfileError {
    /// Tools whose names become one name in the profile: every such name.
    Collisions {
        /// The profile.
        profile: Profile,
        /// Each name given to more than one tool.
        collisions: Vec<NameCollision>,
    },
    /// The value is not a manifest: `{ "tools": [...] }` of objects with a string `name`.
    NotAManifest(String),
}

/// One name a profile would give to several tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameCollision {
    /// The name in the profile.
    pub name: String,
    /// The tools, by their names in the manifest, in manifest order.
    pub tools: Vec<String>,
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileError::Collisions {
                profile,
                collisions,
            } => {
                write!(
                    f,
                    "the tools cannot be told apart in the `{profile}` profile:"
                )?;
                for collision in collisions {
                    let tools: Vec<String> =
                        collision.tools.iter().map(|t| format!("`{t}`")).collect();
                    let tools = match tools.split_last() {
                        Some((last, [first])) => format!("{first} and {last} both"),
                        Some((last, rest)) => format!("{} and {last} all", rest.join(", ")),
                        None => String::new(),
                    };
                    write!(
                        f,
                        "\n  - {tools} become `{}`; rename one with \
                         `#[mcp_tool(name = \"...\")]`",
                        collision.name
                    )?;
                }
                Ok(())
            }
            ProfileError::NotAManifest(reason) => write!(f, "not a manifest: {reason}"),
        }
    }
}

impl std::error::Error for ProfileError {}

/// Renders a manifest (`{ "tools": [...] }`, as [`Manifest::as_json`](crate::manifest::Manifest::as_json)
/// gives it) for a client. The renderings for a model's function calling (every profile but
/// [`Profile::Mcp`]) leave out the tools whose MCP Apps visibility leaves out the model.
///
/// ```
/// use serde_json::json;
/// use toolwright::profile::Profile;
///
/// let manifest = json!({"tools": [{
///     "name": "notes.search",
///     "description": "Search notes.",
///     "inputSchema": {
///         "type": "object",
///         "properties": {"limit": {"type": ["integer", "null"], "minimum": 0, "maximum": 4294967295u32}},
///         "additionalProperties": false
///     }
/// }]});
/// let rendering = toolwright::profile::render(&manifest, Profile::OpenAi)?;
/// assert_eq!(rendering.document()["tools"][0]["name"], "notes_search");
/// assert_eq!(rendering.tool_name("notes_search"), Some("notes.search"));
/// // `Option<u32>`: required, and `null` stands for absent.
/// assert_eq!(rendering.document()["tools"][0]["parameters"]["required"], json!(["limit"]));
/// assert!(rendering.reports().is_empty());
/// # Ok::<(), toolwright::profile::ProfileError>(())
/// ```
pub fn render(manifest: &Value, profile: Profile) -> Result<Rendering, ProfileError> {
    let all = manifest
        .get("tools")
        .and_then(Value::as_array)
        .ok_or_else(|| ProfileError::NotAManifest("it has no `tools` array".to_owned()))?;
    // A model's function list leaves out the tools only MCP Apps views call.
    let tools: Vec<&Value> = all
        .iter()
        .filter(|tool| {
            profile == Profile::Mcp
                || crate::apps::ToolMeta::parse(tool.get("_meta").unwrap_or(&Value::Null))
                    .visibility
                    .model
        })
        .collect();
    let mut names = BTreeMap::new();
    let mut taken: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (i, tool) in tools.iter().enumerate() {
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| ProfileError::NotAManifest(format!("tool {i} has no string `name`")))?;
        let client_name = names::client_name(name, profile);
        taken
            .entry(client_name.clone())
            .or_default()
            .push(name.to_owned());
        names.insert(client_name, name.to_owned());
    }
    let collisions: Vec<NameCollision> = taken
        .into_iter()
        .filter(|(_, tools)| tools.len() > 1)
        .map(|(name, tools)| NameCollision { name, tools })
        .collect();
    if !collisions.is_empty() {
        return Err(ProfileError::Collisions {
            profile,
            collisions,
        });
    }
    if profile == Profile::Mcp {
        return Ok(Rendering {
            profile,
            document: manifest.clone(),
            names,
            reports: Vec::new(),
        });
    }
    let mut reports = Vec::new();
    let mut rendered = Vec::with_capacity(tools.len());
    for tool in tools {
        let name = tool["name"].as_str().unwrap_or_default();
        let empty = json!({"type": "object", "properties": {}});
        let schema = tool.get("inputSchema").unwrap_or(&empty);
        let schema = rewrite::input_schema(profile, name, schema, &mut reports);
        rendered.push(function(
            profile,
            tool,
            names::client_name(name, profile),
            schema,
        ));
    }
    let document = match profile {
        Profile::Gemini => json!({ "functionDeclarations": rendered }),
        _ => json!({ "tools": rendered }),
    };
    Ok(Rendering {
        profile,
        document,
        names,
        reports,
    })
}

/// One tool in the client's shape.
fn function(profile: Profile, tool: &Value, name: String, schema: Value) -> Value {
    let mut function = Map::new();
    if profile == Profile::OpenAi {
        function.insert("type".into(), json!("function"));
    }
    function.insert("name".into(), json!(name));
    if let Some(description) = tool.get("description") {
        function.insert("description".into(), description.clone());
    }
    match profile {
        Profile::OpenAi => {
            function.insert("parameters".into(), schema);
            function.insert("strict".into(), json!(true));
        }
        Profile::Anthropic => {
            function.insert("input_schema".into(), schema);
        }
        _ => {
            // Gemini refuses an object with no properties; a function without parameters
            // leaves them out.
            let has_properties = schema
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty());
            if has_properties {
                function.insert("parameters".into(), schema);
            }
        }
    }
    Value::Object(function)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_rendering_leaves_out_the_tools_only_views_call() {
        let tool = |name: &str, meta: Value| {
            json!({"name": name, "description": "A tool.", "_meta": meta,
                   "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}})
        };
        // `a.b` would collide with `a_b` under OpenAI's names, were it rendered.
        let manifest = json!({"tools": [
            tool("a.b", json!({"ui": {"visibility": ["app"]}})),
            tool("a_b", json!({"ui": {"resourceUri": "ui://a/b.html"}})),
        ]});
        for profile in [Profile::OpenAi, Profile::Anthropic, Profile::Gemini] {
            let rendering = render(&manifest, profile).expect("no collision");
            let key = if profile == Profile::Gemini {
                "functionDeclarations"
            } else {
                "tools"
            };
            let names: Vec<&str> = rendering.document()[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["a_b"], "{profile}");
        }
        let mcp = render(&manifest, Profile::Mcp).expect("the manifest as it is");
        assert_eq!(mcp.document(), &manifest);
    }

    #[test]
    fn profiles_parse_from_their_names_and_refuse_others() {
        for profile in Profile::ALL {
            assert_eq!(profile.name().parse::<Profile>(), Ok(profile));
            assert_eq!(profile.to_string(), profile.name());
        }
        assert_eq!(Profile::default(), Profile::Mcp);
        assert_eq!(
            "claude".parse::<Profile>().unwrap_err().to_string(),
            "unknown profile `claude`; expected one of `mcp`, `openai`, `anthropic`, `gemini`"
        );
    }

    #[test]
    fn collisions_name_every_tool() {
        let manifest = json!({"tools": [
            {"name": "a-b", "inputSchema": {"type": "object"}},
            {"name": "a.b", "inputSchema": {"type": "object"}},
            {"name": "a_b", "inputSchema": {"type": "object"}},
            {"name": "x.y", "inputSchema": {"type": "object"}},
            {"name": "x_y", "inputSchema": {"type": "object"}}
        ]});
        let error = render(&manifest, Profile::Anthropic).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the tools cannot be told apart in the `anthropic` profile:\n  - `a.b` and `a_b` \
             both become `a_b`; rename one with `#[mcp_tool(name = \"...\")]`\n  - `x.y` and \
             `x_y` both become `x_y`; rename one with `#[mcp_tool(name = \"...\")]`"
        );
        assert!(render(&manifest, Profile::Gemini).is_ok());
    }

    #[test]
    fn a_value_that_is_not_a_manifest_is_refused() {
        assert_eq!(
            render(&json!({"tool": []}), Profile::Mcp).unwrap_err(),
            ProfileError::NotAManifest("it has no `tools` array".to_owned())
        );
        assert_eq!(
            render(&json!({"tools": [{"name": 1}]}), Profile::Gemini)
                .unwrap_err()
                .to_string(),
            "not a manifest: tool 0 has no string `name`"
        );
    }
}
