//! Input schemas rewritten to a client's rules, with a report for each change that does not
//! keep what the schema means: the walk over a schema. What each client takes is in
//! `keywords`, references and merged compositions in `merge`, `oneOf` and `anyOf` in
//! `alternatives`, and OpenAI's closed objects in `strict`.

mod alternatives;
mod keywords;
mod merge;
mod strict;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

use super::{Profile, ProfileReport};
use crate::schema::prune_definitions;

/// The input schema of `tool` as `profile` takes it; what could not be kept goes to `reports`.
pub(super) fn input_schema(
    profile: Profile,
    tool: &str,
    schema: &Value,
    reports: &mut Vec<ProfileReport>,
) -> Value {
    let Value::Object(root) = schema else {
        return schema.clone();
    };
    let mut root = root.clone();
    let defs = match root.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    let mut rewrite = Rewrite {
        profile,
        tool,
        defs,
        root: Value::Object(root.clone()),
        inlining: Vec::new(),
        reports,
    };
    rewrite.merge_root(&mut root);
    match profile {
        Profile::Mcp => schema.clone(),
        Profile::Anthropic => {
            if !rewrite.defs.is_empty() {
                root.insert("$defs".into(), Value::Object(rewrite.defs.clone()));
            }
            Value::Object(root)
        }
        Profile::OpenAi => {
            // Strict mode leaves every part offered: `schema` is never `None` for it.
            let mut schema = rewrite.schema(&Value::Object(root), "").unwrap_or_default();
            let mut defs = Map::new();
            for (name, def) in rewrite.defs.clone() {
                let at = format!("/$defs/{}", escape(&name));
                if let Some(def) = rewrite.schema(&def, &at) {
                    defs.insert(name, def);
                }
            }
            if !defs.is_empty() {
                schema["$defs"] = Value::Object(defs);
                // A definition reached only through a `$ref` that was resolved is now unused.
                prune_definitions(&mut schema);
            }
            schema
        }
        // The root is offered: what it cannot offer, it leaves out (see `children`).
        Profile::Gemini => rewrite
            .schema(&Value::Object(root), "")
            .unwrap_or_else(|| json!({"type": "object"})),
    }
}

/// One tool's input schema on its way to a client.
struct Rewrite<'a> {
    profile: Profile,
    /// The tool, for the reports.
    tool: &'a str,
    /// The schema's `$defs`.
    defs: Map<String, Value>,
    /// The schema as given, without `$defs`: what `#` refers to.
    root: Value,
    /// The references being inlined, outermost first: one met again is recursive.
    inlining: Vec<String>,
    reports: &'a mut Vec<ProfileReport>,
}

/// What resolving a `$ref` left to do.
enum Resolved {
    /// The node changed: look at it again.
    Again,
    /// Nothing to do.
    Kept,
    /// The node was cut where it recurses: leave it as it is.
    Cut,
}

impl Rewrite<'_> {
    fn report(&mut self, at: &str, change: impl Into<String>) {
        let report = ProfileReport {
            tool: self.tool.to_owned(),
            pointer: at.to_owned(),
            change: change.into(),
        };
        if !self.reports.contains(&report) {
            self.reports.push(report);
        }
    }

    fn client(&self) -> &'static str {
        self.profile.client()
    }

    /// A subschema, rewritten (OpenAI and Gemini only); `None` when no value it accepts can be
    /// offered (Gemini only: a recursion cut, or an object without properties).
    fn schema(&mut self, schema: &Value, at: &str) -> Option<Value> {
        let mut node = match schema {
            Value::Object(node) => node.clone(),
            Value::Bool(true) => Map::new(),
            other => return Some(other.clone()),
        };
        let depth = self.inlining.len();
        let offered = self.normalise(&mut node, at) && {
            self.keywords(&mut node, at);
            if self.profile == Profile::OpenAi {
                self.close(&mut node, at);
            }
            let offered = self.children(&mut node, at);
            self.untyped(&mut node, at);
            offered && self.listed(&node, schema, at)
        };
        self.inlining.truncate(depth);
        offered.then_some(Value::Object(node))
    }

    /// Gemini refuses an object without properties (but at the root, where it means no
    /// parameters): such an object cannot be offered.
    fn listed(&mut self, node: &Map<String, Value>, original: &Value, at: &str) -> bool {
        let empty = node
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if self.profile != Profile::Gemini || at.is_empty() || !is_object(node) || !empty {
            return true;
        }
        let change = if original
            .get("additionalProperties")
            .is_some_and(Value::is_object)
        {
            "a map (`additionalProperties` with a schema) cannot be expressed in Gemini's \
             schema, where an object lists its properties: not offered"
        } else {
            "an object that lists no properties cannot be expressed in Gemini's schema, which \
             refuses an empty `properties`: not offered"
        };
        self.report(at, change);
        false
    }

    /// Resolves references and merges compositions the client does not take, until only
    /// keywords it may take are left; `false` when the node was cut.
    fn normalise(&mut self, node: &mut Map<String, Value>, at: &str) -> bool {
        loop {
            if node.contains_key("$ref") {
                match self.reference(node, at) {
                    Resolved::Again => continue,
                    Resolved::Cut => return false,
                    Resolved::Kept => {}
                }
            }
            if let Some(members) = node.remove("allOf") {
                for member in members.as_array().into_iter().flatten() {
                    if let Value::Object(member) = member {
                        self.merge(node, member.clone(), at, "allOf");
                    }
                }
                continue;
            }
            if self.alternatives(node, at) {
                continue;
            }
            break;
        }
        if self.profile == Profile::Gemini {
            self.gemini_values(node, at);
            self.gemini_types(node);
        }
        self.tuple(node, at);
        true
    }

    /// Rewrites the subschemas the node keeps; `false` when the node cannot be offered
    /// because a part it needs cannot.
    fn children(&mut self, node: &mut Map<String, Value>, at: &str) -> bool {
        let mut offered = true;
        if let Some(Value::Object(properties)) = node.get("properties").cloned() {
            let mut kept = Map::new();
            for (name, schema) in &properties {
                let here = format!("{at}/properties/{}", escape(name));
                if let Some(schema) = self.schema(schema, &here) {
                    kept.insert(name.clone(), schema);
                    continue;
                }
                let required = node
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.contains(&json!(name)));
                if let Some(Value::Array(r)) = node.get_mut("required") {
                    r.retain(|n| n != name);
                }
                if required && at.is_empty() {
                    self.report(
                        &here,
                        "required, but it cannot be offered: every call is refused for lack of \
                         it",
                    );
                } else if required {
                    offered = false;
                }
            }
            node.insert("properties".into(), Value::Object(kept));
            if node
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                node.remove("required");
            }
        }
        if let Some(items) = node.get("items").cloned() {
            match self.schema(&items, &format!("{at}/items")) {
                Some(items) => {
                    node.insert("items".into(), items);
                }
                // Only an empty list can be given; Gemini still wants an `items`.
                None if node.get("minItems").and_then(Value::as_u64).unwrap_or(0) == 0 => {
                    node.insert("maxItems".into(), json!(0));
                    node.insert("items".into(), json!({"type": "string"}));
                }
                None => offered = false,
            }
        }
        if let Some(Value::Array(branches)) = node.get("anyOf").cloned() {
            let branches: Vec<Value> = branches
                .iter()
                .enumerate()
                .filter_map(|(i, b)| self.schema(b, &format!("{at}/anyOf/{i}")))
                .collect();
            offered &= !branches.is_empty();
            match <[Value; 1]>::try_from(branches) {
                // One alternative left (the others could not be offered): it is the schema.
                Ok([Value::Object(only)]) => {
                    node.remove("anyOf");
                    for (key, value) in only {
                        node.entry(key).or_insert(value);
                    }
                }
                Ok([only]) => {
                    node.insert("anyOf".into(), json!([only]));
                }
                Err(branches) => {
                    node.insert("anyOf".into(), Value::Array(branches));
                }
            }
        }
        offered
    }

    /// A schema that names no type accepts any value; neither client can say so.
    fn untyped(&mut self, node: &mut Map<String, Value>, at: &str) {
        if ["type", "enum", "const", "anyOf", "$ref"]
            .iter()
            .any(|k| node.contains_key(*k))
        {
            return;
        }
        if node.contains_key("properties") {
            node.insert("type".into(), json!("object"));
            self.report(
                at,
                "properties without a `type`: given `type: object`, so the other values it \
                 accepted are not offered",
            );
            return;
        }
        if self.profile == Profile::Gemini {
            node.insert("type".into(), json!("string"));
            self.report(
                at,
                "any value is accepted, which Gemini's schema cannot express: the model is \
                 offered a string",
            );
        } else {
            node.insert(
                "anyOf".into(),
                json!([{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}]),
            );
            self.report(
                at,
                "any value is accepted, which strict mode cannot express: the model is offered a \
                 string, a number, a boolean or `null`",
            );
        }
    }
}

/// The types a `type` keyword names.
fn types(value: &Value) -> Vec<String> {
    match value {
        Value::String(t) => vec![t.clone()],
        Value::Array(list) => list
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether a schema describes objects: `type: object` among its types, or properties.
fn is_object(node: &Map<String, Value>) -> bool {
    node.get("type")
        .is_some_and(|t| types(t).iter().any(|t| t == "object"))
        || node.contains_key("properties")
}

/// A JSON pointer token: `~` as `~0`, `/` as `~1`.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
