//! Client schema profiles: the manifest of this binary's tools (hard signatures, and the
//! `notes-tools` crate's) rendered for OpenAI, Anthropic and Gemini, checked by validators that
//! encode each provider's documented rules, with the reports and the name mapping a client
//! relies on.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use toolwright::profile::{NameCollision, Profile, ProfileError, Rendering, render};
use toolwright::registry::Registry;
use toolwright_tests::Client;

/// Tools whose signatures are hard to render for clients.
#[expect(
    dead_code,
    reason = "the types shape the schemas; most tools never read what they are given"
)]
mod corpus {
    use std::collections::{BTreeMap, HashMap, HashSet};

    use schemars::JsonSchema;
    use serde::Deserialize;
    use toolwright::mcp_tool;

    /// A tree of labels.
    #[derive(Deserialize, JsonSchema)]
    pub(crate) struct Tree {
        /// The node's label.
        label: String,
        /// The node's children.
        children: Vec<Tree>,
    }

    /// A link of a chain.
    #[derive(Deserialize, JsonSchema)]
    pub(crate) struct Link {
        /// The link's label.
        label: String,
        /// What follows it.
        next: Box<Next>,
    }

    /// What follows a link.
    #[derive(Deserialize, JsonSchema)]
    pub(crate) enum Next {
        /// The chain ends.
        End,
        /// Another link.
        Then(Link),
    }

    /// An arithmetic expression.
    #[derive(Deserialize, JsonSchema)]
    pub(crate) enum Expr {
        /// A number.
        Num(f64),
        /// The sum of two expressions.
        Add(Box<Expr>, Box<Expr>),
        /// The negation of an expression.
        Neg(Box<Expr>),
    }

    /// A shape.
    #[derive(Deserialize, JsonSchema)]
    pub(crate) enum Shape {
        /// A circle.
        Circle {
            /// Its radius.
            radius: f64,
        },
        /// A rectangle.
        Rect {
            /// Its width.
            width: f64,
            /// Its height.
            height: f64,
        },
        /// Nothing at all.
        Empty,
    }

    /// Which notes.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    pub(crate) enum Filter {
        /// Notes with a tag.
        ByTag {
            /// The tag.
            tag: String,
        },
        /// Notes changed after a time.
        After {
            /// Seconds since the Unix epoch.
            seconds: u64,
        },
        /// Every note.
        All,
    }

    /// A colour.
    #[derive(Deserialize, JsonSchema)]
    pub(crate) enum Colour {
        Red,
        Green,
        Blue,
    }

    /// A size.
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub(crate) enum Size {
        /// Fits in a hand.
        Small,
        /// Needs two.
        Large,
    }

    /// An id or a name.
    #[derive(Deserialize, JsonSchema)]
    #[serde(untagged)]
    pub(crate) enum Key {
        /// By id.
        Id(u64),
        /// By name.
        Name(String),
    }

    /// Paging.
    #[derive(Debug, Deserialize, JsonSchema)]
    pub(crate) struct Page {
        /// How many to skip.
        offset: Option<u32>,
        /// How many at most.
        limit: Option<u32>,
    }

    /// A record with optional parts.
    #[derive(Debug, Deserialize, JsonSchema)]
    pub(crate) struct Inner {
        /// A note.
        note: Option<String>,
        /// A weight.
        weight: Option<f32>,
    }

    /// Count a tree's nodes.
    #[mcp_tool]
    fn count_nodes(
        /// The tree.
        tree: Tree,
    ) {
        let _ = tree;
    }

    /// Walk a chain.
    #[mcp_tool]
    fn walk(
        /// The chain's first link.
        chain: Link,
    ) {
        let _ = chain;
    }

    /// Evaluate an expression.
    #[mcp_tool]
    fn evaluate(
        /// The expression.
        expr: Expr,
    ) {
        let _ = expr;
    }

    /// Draw a shape.
    #[mcp_tool]
    fn draw(
        /// The shape.
        shape: Shape,
        /// Which notes.
        filter: Filter,
        /// A colour.
        colour: Colour,
        /// A size.
        size: Option<Size>,
        /// A key.
        key: Key,
    ) {
        let _ = (shape, filter, colour, size, key);
    }

    /// Show what was given.
    #[mcp_tool]
    fn options(
        /// Absent, null, or a string.
        maybe: Option<Option<String>>,
        /// A nested record.
        inner: Option<Inner>,
        #[arg(flatten)] page: Page,
        /// How many.
        #[arg(default = 10)]
        count: u32,
    ) -> String {
        format!("{maybe:?} {inner:?} {page:?} {count}")
    }

    /// Pick notes.
    #[mcp_tool]
    fn pick(
        /// How many at most.
        limit: u32,
        #[arg(flatten)] filter: Filter,
    ) -> String {
        format!("{limit} {filter:?}")
    }

    /// Maps, sets and tuples.
    #[mcp_tool]
    fn collections(
        /// Counts by name.
        counts: HashMap<String, u32>,
        /// Tags by note.
        tags: BTreeMap<String, Vec<String>>,
        /// Distinct words.
        words: HashSet<String>,
        /// A pair.
        pair: (i32, String),
        /// A point.
        point: (f64, f64),
    ) {
        let _ = (counts, tags, words, pair, point);
    }

    /// Integers of three widths.
    #[mcp_tool]
    fn integers(
        /// A byte.
        byte: u8,
        /// A big one.
        big: u64,
        /// A signed one.
        signed: i32,
    ) {
        let _ = (byte, big, signed);
    }

    /// Do nothing.
    #[mcp_tool]
    fn nothing() {}

    /// A tool with a long name.
    #[mcp_tool(
        name = "a_very_long_tool_name_that_goes_on_and_on_past_the_limit_of_sixty_four_characters_that_some_clients_impose.v2"
    )]
    fn long_name() {}

    /// A tool with dots.
    #[mcp_tool(name = "notes.export.v2")]
    fn dotted() {}
}

/// Each provider's documented rules, as code. Sources:
///
/// - OpenAI: "Structured Outputs", section "Supported schemas"
///   (platform.openai.com/docs/guides/structured-outputs#supported-schemas), and the function
///   `name` of the API reference ("a-z, A-Z, 0-9, or contain underscores and dashes, with a
///   maximum length of 64"). A `$ref` with keywords beside it is refused ("$ref cannot have
///   keywords").
/// - Anthropic: the Messages API's `tools`: `name` matches `^[a-zA-Z0-9_-]{1,64}$`,
///   `input_schema` is an object schema; `oneOf`, `anyOf` and `allOf` are refused at its root.
/// - Gemini: `FunctionDeclaration` and `Schema` of the Gemini API (ai.google.dev/api) and of
///   Vertex AI (a name starts with a letter or `_`, then `a-z A-Z 0-9 _ . -`, at most 64); an
///   object needs a non-empty `properties` ("should be non-empty for OBJECT type").
mod rules {
    use serde_json::Value;

    fn problem(problems: &mut Vec<String>, at: &str, what: String) {
        problems.push(format!("{}: {what}", if at.is_empty() { "/" } else { at }));
    }

    fn types(schema: &Value) -> Vec<&str> {
        match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    }

    fn has_keys(schema: &Value, keys: &[&str]) -> bool {
        keys.iter().any(|k| schema.get(*k).is_some())
    }

    /// `^[a-zA-Z0-9_-]{1,64}$`
    pub(crate) fn openai_or_anthropic_name(name: &str) -> bool {
        (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }

    /// A letter or `_`, then letters, digits, `_`, `.` and `-`; at most 64.
    pub(crate) fn gemini_name(name: &str) -> bool {
        name.len() <= 64
            && name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    }

    const OPENAI_KEYWORDS: &[&str] = &[
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "description",
        "title",
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    ];
    const OPENAI_FORMATS: &[&str] = &[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uuid",
    ];
    const JSON_TYPES: &[&str] = &[
        "string", "number", "integer", "boolean", "object", "array", "null",
    ];

    /// A function tool in strict mode, as the Responses API takes it.
    pub(crate) fn openai(tool: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        let name = tool["name"].as_str().unwrap_or_default();
        if !openai_or_anthropic_name(name) {
            problem(&mut problems, "", format!("name `{name}`"));
        }
        if tool["type"] != "function" || tool["strict"] != true {
            problem(&mut problems, "", "not a strict function tool".into());
        }
        let root = &tool["parameters"];
        if root["type"] != "object" {
            problem(&mut problems, "", "the root is not `type: object`".into());
        }
        if has_keys(root, &["anyOf", "oneOf", "allOf"]) {
            problem(&mut problems, "", "the root is composed".into());
        }
        openai_schema(root, root, "", &mut problems);
        if let Some(defs) = root.get("$defs").and_then(Value::as_object) {
            for (name, def) in defs {
                openai_schema(def, root, &format!("/$defs/{name}"), &mut problems);
            }
        }
        problems
    }

    fn openai_schema(schema: &Value, root: &Value, at: &str, problems: &mut Vec<String>) {
        let Some(node) = schema.as_object() else {
            return problem(problems, at, "not a schema object".into());
        };
        for key in node.keys() {
            let root_defs = at.is_empty() && key == "$defs";
            if !OPENAI_KEYWORDS.contains(&key.as_str()) && !root_defs {
                problem(problems, at, format!("unsupported keyword `{key}`"));
            }
        }
        for key in ["oneOf", "allOf", "not", "if", "then", "else"] {
            if node.contains_key(key) {
                problem(problems, at, format!("`{key}`"));
            }
        }
        if let Some(target) = node.get("$ref").and_then(Value::as_str) {
            if node.len() > 1 {
                problem(problems, at, "`$ref` with keywords beside it".into());
            }
            let resolves = target == "#"
                || target
                    .strip_prefix("#/$defs/")
                    .is_some_and(|name| root["$defs"].get(name).is_some());
            if !resolves {
                problem(problems, at, format!("`$ref` `{target}` does not resolve"));
            }
            return;
        }
        if !has_keys(schema, &["type", "enum", "const", "anyOf"]) {
            problem(problems, at, "no type".into());
        }
        for t in types(schema) {
            if !JSON_TYPES.contains(&t) {
                problem(problems, at, format!("type `{t}`"));
            }
        }
        if let Some(format) = node.get("format").and_then(Value::as_str)
            && !OPENAI_FORMATS.contains(&format)
        {
            problem(problems, at, format!("format `{format}`"));
        }
        if types(schema).contains(&"object") {
            if node.get("additionalProperties") != Some(&Value::Bool(false)) {
                problem(problems, at, "an object not closed".into());
            }
            let properties: Vec<&String> = node
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            let mut required: Vec<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            required.sort_unstable();
            if !node.contains_key("properties") || properties != required {
                problem(problems, at, "not every property is required".into());
            }
        }
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                openai_schema(property, root, &format!("{at}/properties/{name}"), problems);
            }
        }
        if let Some(items) = node.get("items") {
            openai_schema(items, root, &format!("{at}/items"), problems);
        }
        for (i, branch) in node
            .get("anyOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            openai_schema(branch, root, &format!("{at}/anyOf/{i}"), problems);
        }
    }

    /// A tool of the Messages API.
    pub(crate) fn anthropic(tool: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        let name = tool["name"].as_str().unwrap_or_default();
        if !openai_or_anthropic_name(name) {
            problem(&mut problems, "", format!("name `{name}`"));
        }
        let keys: Vec<&String> = tool
            .as_object()
            .map(|t| t.keys().collect())
            .unwrap_or_default();
        if keys != ["description", "input_schema", "name"] {
            problem(&mut problems, "", format!("fields {keys:?}"));
        }
        let root = &tool["input_schema"];
        if root["type"] != "object" {
            problem(&mut problems, "", "the root is not `type: object`".into());
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            if root.get(key).is_some() {
                problem(&mut problems, "", format!("`{key}` at the root"));
            }
        }
        problems
    }

    const GEMINI_FIELDS: &[&str] = &[
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "items",
        "minimum",
        "maximum",
    ];
    const GEMINI_FORMATS: &[&str] = &["int32", "int64", "float", "double", "date-time", "enum"];

    /// A function declaration of the Gemini API.
    pub(crate) fn gemini(declaration: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        let name = declaration["name"].as_str().unwrap_or_default();
        if !gemini_name(name) {
            problem(&mut problems, "", format!("name `{name}`"));
        }
        if let Some(parameters) = declaration.get("parameters") {
            if parameters["type"] != "object" {
                problem(&mut problems, "", "the parameters are not an object".into());
            }
            gemini_schema(parameters, "", &mut problems);
        }
        problems
    }

    fn gemini_schema(schema: &Value, at: &str, problems: &mut Vec<String>) {
        let Some(node) = schema.as_object() else {
            return problem(problems, at, "not a schema object".into());
        };
        for key in [
            "$schema",
            "$ref",
            "$defs",
            "additionalProperties",
            "const",
            "default",
        ] {
            if node.contains_key(key) {
                problem(problems, at, format!("forbidden `{key}`"));
            }
        }
        for key in node.keys() {
            if !GEMINI_FIELDS.contains(&key.as_str()) {
                problem(problems, at, format!("not a `Schema` field: `{key}`"));
            }
        }
        match node.get("type") {
            Some(Value::String(t)) if JSON_TYPES.contains(&t.as_str()) => {}
            None if node.contains_key("anyOf") => {}
            other => problem(problems, at, format!("`type` {other:?}")),
        }
        if let Some(values) = node.get("enum").and_then(Value::as_array)
            && !values.iter().all(Value::is_string)
        {
            problem(problems, at, "an `enum` of non-strings".into());
        }
        if let Some(format) = node.get("format").and_then(Value::as_str)
            && !GEMINI_FORMATS.contains(&format)
        {
            problem(problems, at, format!("format `{format}`"));
        }
        let properties = node.get("properties").and_then(Value::as_object);
        let object = node.get("type") == Some(&Value::from("object"));
        if object && properties.is_none_or(|p| p.is_empty()) {
            problem(problems, at, "an object with no properties".into());
        }
        if properties.is_some() && !object {
            problem(problems, at, "properties on a non-object".into());
        }
        for name in node
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if properties.is_none_or(|p| !p.contains_key(name.as_str().unwrap_or_default())) {
                problem(problems, at, format!("required {name} is not a property"));
            }
        }
        if node.get("type") == Some(&Value::from("array")) && !node.contains_key("items") {
            problem(problems, at, "an array with no `items`".into());
        }
        for (name, property) in properties.into_iter().flatten() {
            gemini_schema(property, &format!("{at}/properties/{name}"), problems);
        }
        if let Some(items) = node.get("items") {
            gemini_schema(items, &format!("{at}/items"), problems);
        }
        for (i, branch) in node
            .get("anyOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            gemini_schema(branch, &format!("{at}/anyOf/{i}"), problems);
        }
    }
}

/// Checks one function of a rendered document; returns what breaks the client's rules.
type Validator = fn(&Value) -> Vec<String>;

const LONG_NAME: &str = "a_very_long_tool_name_that_goes_on_and_on_past_the_limit_of_sixty_four_characters_that_some_clients_impose.v2";

// Referring to the crate keeps it, and its tools, linked into this binary.
use notes_tools as _;

fn manifest() -> Value {
    Registry::collect()
        .expect("the tools of this binary do not conflict")
        .manifest()
        .as_json()
        .clone()
}

fn rendered(profile: Profile) -> Rendering {
    render(&manifest(), profile).unwrap_or_else(|e| panic!("{profile}: {e}"))
}

/// The tools of a rendering's document, in order.
fn functions(rendering: &Rendering) -> Vec<Value> {
    let list = match rendering.profile() {
        Profile::Gemini => &rendering.document()["functionDeclarations"],
        _ => &rendering.document()["tools"],
    };
    list.as_array().expect("a list of tools").clone()
}

/// The function a rendering offers for the tool named `tool` in the manifest.
fn function(rendering: &Rendering, tool: &str) -> Value {
    let name = rendering.client_name(tool).expect("the tool is rendered");
    functions(rendering)
        .into_iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("`{name}` is not in the document"))
}

fn schema_of(profile: Profile, tool: &str) -> Value {
    let function = function(&rendered(profile), tool);
    match profile {
        Profile::OpenAi | Profile::Gemini => function["parameters"].clone(),
        Profile::Anthropic => function["input_schema"].clone(),
        Profile::Mcp => function["inputSchema"].clone(),
    }
}

fn manifest_names() -> Vec<String> {
    manifest()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Whether a model's rendering has the tool: all but those only MCP Apps views call (here the
/// notes board's `move_note`).
fn for_the_model(tool: &Value) -> bool {
    toolwright::apps::ToolMeta::parse(&tool["_meta"])
        .visibility
        .model
}

/// The names a rendering for `profile` holds, in manifest order.
fn rendered_names(profile: Profile) -> Vec<String> {
    manifest()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| profile == Profile::Mcp || for_the_model(t))
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The reports of a rendering, as a user reads them, for one tool.
fn reports_for(rendering: &Rendering, tool: &str) -> Vec<String> {
    rendering
        .reports()
        .iter()
        .filter(|r| r.tool() == tool)
        .map(ToString::to_string)
        .collect()
}

#[test]
fn every_tool_follows_each_clients_documented_rules() {
    let validators: [(Profile, Validator); 3] = [
        (Profile::OpenAi, rules::openai),
        (Profile::Anthropic, rules::anthropic),
        (Profile::Gemini, rules::gemini),
    ];
    let mut problems = Vec::new();
    for (profile, validate) in validators {
        let rendering = rendered(profile);
        let functions = functions(&rendering);
        assert_eq!(functions.len(), rendered_names(profile).len(), "{profile}");
        assert!(
            functions.len() < manifest_names().len(),
            "`move_note` is left out"
        );
        for function in &functions {
            for problem in validate(function) {
                problems.push(format!(
                    "{profile} `{}` {problem}",
                    function["name"].as_str().unwrap_or_default()
                ));
            }
        }
    }
    assert_eq!(problems, Vec::<String>::new());
}

#[test]
fn the_validators_refuse_what_the_clients_refuse() {
    // The manifest itself breaks every client's rules: each validator can fail.
    let manifest = manifest();
    let draw = manifest["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "draw")
        .unwrap();
    let as_openai = json!({"type": "function", "name": "draw", "parameters": draw["inputSchema"], "strict": true});
    assert!(
        rules::openai(&as_openai)
            .iter()
            .any(|p| p.contains("`oneOf`"))
    );
    let as_gemini = json!({"name": "notes.export.v2", "parameters": draw["inputSchema"]});
    assert!(
        rules::gemini(&as_gemini)
            .iter()
            .any(|p| p.contains("forbidden `additionalProperties`"))
    );
    let pick =
        json!({"name": "pick", "description": "", "input_schema": {"type": "object", "oneOf": []}});
    assert_eq!(rules::anthropic(&pick), ["/: `oneOf` at the root"]);
    assert!(!rules::openai_or_anthropic_name("notes.export.v2"));
    assert!(!rules::openai_or_anthropic_name(&"x".repeat(65)));
    assert!(!rules::gemini_name("1st"));
    assert!(rules::gemini_name("notes.export.v2"));
}

#[test]
fn the_mcp_profile_is_the_manifest_itself() {
    let rendering = rendered(Profile::Mcp);
    assert_eq!(rendering.document(), &manifest());
    assert!(rendering.reports().is_empty());
    assert!(
        rendering
            .names()
            .iter()
            .all(|(client, tool)| client == tool)
    );
    assert_eq!(rendering.names().len(), manifest_names().len());
}

#[test]
fn every_client_name_maps_back_to_its_tool_in_manifest_order() {
    for profile in Profile::ALL {
        let tools = rendered_names(profile);
        let rendering = rendered(profile);
        let listed: Vec<String> = functions(&rendering)
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_owned())
            .collect();
        let back: Vec<&str> = listed
            .iter()
            .map(|name| {
                rendering
                    .tool_name(name)
                    .expect("every listed name maps back")
            })
            .collect();
        assert_eq!(back, tools, "{profile}");
        let distinct: BTreeSet<&String> = listed.iter().collect();
        assert_eq!(distinct.len(), listed.len(), "{profile}");
        assert_eq!(rendering.names().len(), tools.len(), "{profile}");
        for tool in &tools {
            let client = rendering.client_name(tool).unwrap();
            assert_eq!(
                rendering.tool_name(client),
                Some(tool.as_str()),
                "{profile}"
            );
        }
    }
    // SHA-256 of the whole name begins `df7cfeda`; 55 characters, `_` and 8 digits make 64.
    let cut = "a_very_long_tool_name_that_goes_on_and_on_past_the_limi_df7cfeda";
    assert_eq!(cut.len(), 64);
    let name = |profile, tool| rendered(profile).client_name(tool).unwrap().to_owned();
    for profile in [Profile::OpenAi, Profile::Anthropic, Profile::Gemini] {
        assert_eq!(name(profile, LONG_NAME), cut, "{profile}");
    }
    assert_eq!(name(Profile::Mcp, LONG_NAME), LONG_NAME);
    assert_eq!(name(Profile::OpenAi, "notes.export.v2"), "notes_export_v2");
    assert_eq!(
        name(Profile::Anthropic, "notes.export.v2"),
        "notes_export_v2"
    );
    assert_eq!(name(Profile::Gemini, "notes.export.v2"), "notes.export.v2");
    assert_eq!(
        rendered(Profile::OpenAi).tool_name("notes_export_v2"),
        Some("notes.export.v2")
    );
    assert_eq!(rendered(Profile::OpenAi).tool_name("notes.export.v2"), None);
}

#[test]
fn reports_are_made_exactly_where_a_meaning_could_not_be_kept() {
    let with_reports = |profile| -> BTreeSet<String> {
        rendered(profile)
            .reports()
            .iter()
            .map(|r| r.tool().to_owned())
            .collect()
    };
    let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
    // Maps, sets and tuples everywhere but Anthropic; for OpenAI, defaults that become required;
    // for Gemini, recursion. `draw`, `options`, `integers` and the other notes tools keep their
    // meaning.
    assert_eq!(
        with_reports(Profile::OpenAi),
        set(&[
            "collections",
            "export_notes",
            "list_notes",
            "options",
            "pick",
            "search_notes",
            "wait_for_note"
        ])
    );
    assert_eq!(with_reports(Profile::Anthropic), set(&["pick"]));
    assert_eq!(
        with_reports(Profile::Gemini),
        set(&["collections", "count_nodes", "evaluate", "pick", "walk"])
    );
    assert_eq!(with_reports(Profile::Mcp), set(&[]));

    assert_eq!(
        reports_for(&rendered(Profile::OpenAi), "collections"),
        [
            "tool `collections`, at `/properties/counts`: `additionalProperties` with a schema \
             (a map, or keys beyond the listed properties) cannot be expressed in strict mode, \
             where every key is listed: only the listed properties can be given",
            "tool `collections`, at `/properties/pair`: a tuple (`prefixItems`) cannot be \
             expressed in OpenAI's strict mode: every position accepts any of the element types",
            "tool `collections`, at `/properties/tags`: `additionalProperties` with a schema \
             (a map, or keys beyond the listed properties) cannot be expressed in strict mode, \
             where every key is listed: only the listed properties can be given",
            "tool `collections`, at `/properties/words`: `uniqueItems` is dropped: OpenAI's \
             strict mode does not support it, so the model is no longer held to it (the server \
             still checks it)",
        ]
    );
    assert_eq!(
        reports_for(&rendered(Profile::OpenAi), "list_notes"),
        [
            "tool `list_notes`, at `/properties/limit`: optional with a default (`20`), but \
             strict mode requires every property: the model must always give it (the default \
             is in its description)",
            "tool `list_notes`, at `/properties/offset`: optional with a default (`0`), but \
             strict mode requires every property: the model must always give it (the default \
             is in its description)",
        ]
    );
    assert_eq!(
        reports_for(&rendered(Profile::Anthropic), "pick"),
        [
            "tool `pick`, at the root: Anthropic takes no `oneOf` at the root: its 3 \
             alternatives are merged into one object, in which `tag` and `seconds` are \
             optional, so the model can combine arguments of different alternatives, or leave \
             out one an alternative needs; the server refuses a call that matches none of them"
        ]
    );
    assert_eq!(
        reports_for(&rendered(Profile::Gemini), "count_nodes"),
        [
            "tool `count_nodes`, at `/properties/tree/properties/children/items/properties/\
             children/items`: `#/$defs/Tree` refers to itself, and Gemini's schema has no \
             references: it is inlined once, and values that nest deeper are not offered"
        ]
    );
    assert_eq!(
        reports_for(&rendered(Profile::Gemini), "collections")[..2],
        [
            "tool `collections`, at `/properties/counts`: a map (`additionalProperties` with a \
             schema) cannot be expressed in Gemini's schema, where an object lists its \
             properties: not offered",
            "tool `collections`, at `/properties/counts`: required, but it cannot be offered: \
             every call is refused for lack of it",
        ]
    );
    assert_eq!(reports_for(&rendered(Profile::Gemini), "evaluate").len(), 4);
}

#[test]
fn openai_strict_mode_keeps_what_serde_means() {
    // `Option<T>`: required, and `null` stands for absent. A default: required, and said.
    assert_eq!(
        schema_of(Profile::OpenAi, "options"),
        json!({
            "type": "object",
            "properties": {
                "count": {
                    "description": "How many.\n\nDefault: `10`.",
                    "type": "integer",
                    "minimum": 0,
                    "maximum": u32::MAX
                },
                "inner": {
                    "description": "A nested record.",
                    "type": ["object", "null"],
                    "properties": {
                        "note": {"description": "A note.", "type": ["string", "null"]},
                        "weight": {"description": "A weight.", "type": ["number", "null"]}
                    },
                    "required": ["note", "weight"],
                    "additionalProperties": false
                },
                "limit": {
                    "description": "How many at most.",
                    "type": ["integer", "null"],
                    "minimum": 0,
                    "maximum": u32::MAX
                },
                "maybe": {"description": "Absent, null, or a string.", "type": ["string", "null"]},
                "offset": {
                    "description": "How many to skip.",
                    "type": ["integer", "null"],
                    "minimum": 0,
                    "maximum": u32::MAX
                }
            },
            "required": ["count", "inner", "limit", "maybe", "offset"],
            "additionalProperties": false
        })
    );
    let draw = schema_of(Profile::OpenAi, "draw");
    // An externally tagged enum: the same alternatives, closed, under `anyOf`.
    assert_eq!(
        draw["properties"]["shape"]["anyOf"][0],
        json!({
            "description": "A circle.",
            "type": "object",
            "properties": {"Circle": {
                "type": "object",
                "properties": {"radius": {"description": "Its radius.", "type": "number"}},
                "required": ["radius"],
                "additionalProperties": false
            }},
            "required": ["Circle"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        draw["properties"]["shape"]["anyOf"][2],
        json!({"const": "Empty", "description": "Nothing at all.", "type": "string"})
    );
    // Documented unit variants: an `enum`, their descriptions kept.
    assert_eq!(
        draw["properties"]["size"],
        json!({
            "description": "A size.",
            "anyOf": [
                {
                    "description": "A size.\n\n- `small`: Fits in a hand.\n- `large`: Needs two.",
                    "type": "string",
                    "enum": ["small", "large"]
                },
                {"type": "null"}
            ]
        })
    );
    // Recursion stays a reference; the definition is strict too.
    let evaluate = schema_of(Profile::OpenAi, "evaluate");
    assert_eq!(
        evaluate["$defs"]["Expr"]["anyOf"][1]["properties"]["Add"],
        json!({"type": "array", "items": {"$ref": "#/$defs/Expr"}, "minItems": 2, "maxItems": 2})
    );
    // A `$ref` with a description beside it is resolved once; the definition only it used
    // is gone.
    let walk = schema_of(Profile::OpenAi, "walk");
    let defs: Vec<&String> = walk["$defs"].as_object().unwrap().keys().collect();
    assert_eq!(defs, ["Link"]);
    assert_eq!(
        walk["properties"]["chain"]["properties"]["next"]["anyOf"][1]["properties"]["Then"],
        json!({"$ref": "#/$defs/Link"})
    );
    assert_eq!(
        walk["$defs"]["Link"]["properties"]["next"]["description"],
        "What follows it."
    );
    // Widths: each type's range, as bounds every client keeps.
    assert_eq!(
        schema_of(Profile::OpenAi, "integers")["properties"],
        json!({
            "big": {"description": "A big one.", "type": "integer", "minimum": 0, "maximum": u64::MAX},
            "byte": {"description": "A byte.", "type": "integer", "minimum": 0, "maximum": 255},
            "signed": {
                "description": "A signed one.",
                "type": "integer",
                "minimum": i32::MIN,
                "maximum": i32::MAX
            }
        })
    );
}

#[test]
fn gemini_gets_one_type_string_enums_and_no_references() {
    let options = schema_of(Profile::Gemini, "options");
    assert_eq!(
        options["properties"]["maybe"],
        json!({"description": "Absent, null, or a string.", "type": "string", "nullable": true})
    );
    assert_eq!(options.get("required"), None);
    let draw = schema_of(Profile::Gemini, "draw");
    assert_eq!(
        draw["properties"]["filter"]["anyOf"][0]["properties"]["kind"],
        json!({"type": "string", "enum": ["by_tag"]})
    );
    assert_eq!(
        draw["properties"]["size"],
        json!({
            "description": "A size.\n\n- `small`: Fits in a hand.\n- `large`: Needs two.",
            "type": "string",
            "enum": ["small", "large"],
            "nullable": true
        })
    );
    // One level of the tree is inlined; below it, only an empty list of children.
    let tree = &schema_of(Profile::Gemini, "count_nodes")["properties"]["tree"];
    assert_eq!(
        tree["properties"]["children"]["items"]["properties"]["children"],
        json!({
            "description": "The node's children.",
            "type": "array",
            "maxItems": 0,
            "items": {"type": "string"}
        })
    );
    assert_eq!(
        schema_of(Profile::Gemini, "integers")["properties"]["signed"],
        json!({
            "description": "A signed one.",
            "type": "integer",
            "minimum": i32::MIN,
            "maximum": i32::MAX
        })
    );
    let gemini = rendered(Profile::Gemini);
    assert_eq!(
        function(&gemini, "nothing"),
        json!({"name": "nothing", "description": "Do nothing."})
    );
    assert_eq!(
        function(&gemini, "pick")["parameters"]["required"],
        json!(["limit", "kind"])
    );
}

#[test]
fn anthropic_changes_only_a_composed_root() {
    let manifest = manifest();
    for tool in manifest["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        if name != "pick" && for_the_model(tool) {
            assert_eq!(
                schema_of(Profile::Anthropic, name),
                tool["inputSchema"],
                "{name}"
            );
        }
    }
    assert_eq!(
        schema_of(Profile::Anthropic, "pick"),
        json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["by_tag", "after", "all"]},
                "limit": {
                    "description": "How many at most.",
                    "type": "integer",
                    "minimum": 0,
                    "maximum": u32::MAX
                },
                "seconds": {
                    "description": "Seconds since the Unix epoch.",
                    "type": "integer",
                    "minimum": 0,
                    "maximum": u64::MAX
                },
                "tag": {"description": "The tag.", "type": "string"}
            },
            "required": ["limit", "kind"]
        })
    );
}

#[test]
fn two_tools_that_become_one_name_are_refused_naming_both() {
    let manifest = json!({"tools": [
        {"name": "notes.search", "description": "Search.", "inputSchema": {"type": "object"}},
        {"name": "notes_search", "description": "Search too.", "inputSchema": {"type": "object"}}
    ]});
    for profile in [Profile::OpenAi, Profile::Anthropic] {
        let error = render(&manifest, profile).unwrap_err();
        assert_eq!(
            error,
            ProfileError::Collisions {
                profile,
                collisions: vec![NameCollision {
                    name: "notes_search".to_owned(),
                    tools: vec!["notes.search".to_owned(), "notes_search".to_owned()],
                }],
            }
        );
        assert_eq!(
            error.to_string(),
            format!(
                "the tools cannot be told apart in the `{profile}` profile:\n  - `notes.search` \
                 and `notes_search` both become `notes_search`; rename one with \
                 `#[mcp_tool(name = \"...\")]`"
            )
        );
    }
    let gemini = render(&manifest, Profile::Gemini).expect("Gemini takes dots");
    assert_eq!(gemini.tool_name("notes.search"), Some("notes.search"));
    assert_eq!(
        render(&json!({"tools": {}}), Profile::OpenAi).unwrap_err(),
        ProfileError::NotAManifest("it has no `tools` array".to_owned())
    );
}

/// Calls a tool through a server of this binary's tools; returns the `CallToolResult`.
async fn call(name: &str, arguments: Value) -> Value {
    let server = toolwright::Server::new("profiles", "0.0.1");
    let mut client = Client::with(server.state(notes_tools::Notebook::in_memory()));
    client.initialize().await;
    let (result, _notifications) = client
        .call_notified(2, json!({"name": name, "arguments": arguments}))
        .await;
    result
}

#[tokio::test]
async fn the_server_takes_the_nulls_strict_mode_sends() {
    // Every property required, `null` for the absent ones: what the `openai` profile asks for.
    let result = call(
        "options",
        json!({"maybe": null, "inner": {"note": null, "weight": null}, "offset": null, "limit": null, "count": 3}),
    )
    .await;
    assert_eq!(
        result["content"][0]["text"],
        "None Some(Inner { note: None, weight: None }) Page { offset: None, limit: None } 3",
        "{result}"
    );
    assert_eq!(result.get("isError"), None, "{result}");
    // A merged root: the other alternative's argument as `null`.
    let result = call(
        "pick",
        json!({"limit": 2, "kind": "by_tag", "tag": "work", "seconds": null}),
    )
    .await;
    assert_eq!(
        result["content"][0]["text"], "2 ByTag { tag: \"work\" }",
        "{result}"
    );
}
