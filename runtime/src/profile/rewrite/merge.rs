//! References resolved and compositions merged: a `$ref` inlined where the client needs it,
//! `allOf` as one schema, and alternatives at the root as one object.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::alternatives::{enumerate, narrower, values_of};
use super::keywords::ANNOTATIONS;
use super::{Profile, Resolved, Rewrite, types};
use crate::schema::{DEFS_PREFIX, unescape_pointer};

impl Rewrite<'_> {
    /// Inlines a `$ref` where the client needs it: always for Gemini, and for OpenAI when
    /// keywords sit beside it (strict mode takes a `$ref` alone).
    pub(super) fn reference(&mut self, node: &mut Map<String, Value>, at: &str) -> Resolved {
        let Some(Value::String(target)) = node.get("$ref").cloned() else {
            return Resolved::Kept;
        };
        let gemini = self.profile == Profile::Gemini;
        if !gemini && node.len() == 1 {
            return Resolved::Kept;
        }
        let Some(resolved) = self.resolve(&target) else {
            if gemini {
                node.remove("$ref");
                self.report(
                    at,
                    format!(
                        "`$ref` `{target}` points outside the schema's `$defs`, and Gemini's \
                         schema has no references: dropped, so the value is not described"
                    ),
                );
                return Resolved::Again;
            }
            return Resolved::Kept;
        };
        if self.inlining.contains(&target) {
            if gemini {
                self.report(
                    at,
                    format!(
                        "`{target}` refers to itself, and Gemini's schema has no references: it \
                         is inlined once, and values that nest deeper are not offered"
                    ),
                );
                return Resolved::Cut;
            }
            let beside: Vec<String> = node
                .keys()
                .filter(|k| *k != "$ref" && !ANNOTATIONS.contains(&k.as_str()))
                .map(|k| format!("`{k}`"))
                .collect();
            if !beside.is_empty() {
                self.report(
                    at,
                    format!(
                        "{} beside the recursive `$ref` `{target}` dropped: strict mode takes a \
                         `$ref` alone",
                        beside.join(", ")
                    ),
                );
            }
            node.retain(|k, _| k == "$ref");
            return Resolved::Kept;
        }
        self.inlining.push(target);
        node.remove("$ref");
        if let Value::Object(resolved) = resolved {
            self.merge(node, resolved, at, "$ref");
        }
        Resolved::Again
    }

    /// The schema a `$ref` inside the schema points to: `#`, or one of its `$defs`.
    pub(super) fn resolve(&self, target: &str) -> Option<Value> {
        if target == "#" {
            return Some(self.root.clone());
        }
        let name = unescape_pointer(target.strip_prefix(DEFS_PREFIX)?);
        self.defs.get(&name).cloned()
    }

    /// A schema with a lone `$ref` resolved, for looking into it.
    pub(super) fn resolved<'v>(&self, schema: &'v Value) -> Cow<'v, Value> {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(target) if schema.as_object().is_some_and(|s| s.len() == 1) => self
                .resolve(target)
                .map_or(Cow::Borrowed(schema), Cow::Owned),
            _ => Cow::Borrowed(schema),
        }
    }

    /// Adds `other`'s keywords to `node`, as `allOf` (or a `$ref` and the keywords beside it)
    /// would apply both. Where both annotate, `node`'s (the outer, more specific) wins.
    pub(super) fn merge(
        &mut self,
        node: &mut Map<String, Value>,
        other: Map<String, Value>,
        at: &str,
        by: &str,
    ) {
        let listed = |s: &Map<String, Value>| -> Vec<String> {
            s.get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        };
        let closed = |s: &Map<String, Value>| s.get("additionalProperties") == Some(&json!(false));
        let (mine, theirs) = (listed(node), listed(&other));
        if (closed(node) && theirs.iter().any(|p| !mine.contains(p)))
            || (closed(&other) && mine.iter().any(|p| !theirs.contains(p)))
        {
            self.report(
                at,
                format!(
                    "`{by}` combines a closed object with properties it does not list: merged \
                     into one object that accepts them, where the original accepted none"
                ),
            );
        }
        for (key, value) in other {
            let Some(existing) = node.get_mut(&key) else {
                node.insert(key, value);
                continue;
            };
            if *existing == value || ANNOTATIONS.contains(&key.as_str()) {
                continue;
            }
            let merged = match (key.as_str(), existing.take(), value) {
                ("properties", Value::Object(mut mine), Value::Object(theirs)) => {
                    for (name, schema) in theirs {
                        let both = match mine.remove(&name) {
                            Some(own) if own != schema => json!({"allOf": [own, schema]}),
                            _ => schema,
                        };
                        mine.insert(name, both);
                    }
                    Some(Value::Object(mine))
                }
                ("required", Value::Array(mut mine), Value::Array(theirs)) => {
                    for name in theirs {
                        if !mine.contains(&name) {
                            mine.push(name);
                        }
                    }
                    Some(Value::Array(mine))
                }
                ("type", mine, theirs) => {
                    let both: Vec<String> = types(&mine)
                        .into_iter()
                        .filter_map(|a| types(&theirs).iter().find_map(|b| narrower(&a, b)))
                        .collect();
                    match both.as_slice() {
                        [] => {
                            *existing = mine;
                            None
                        }
                        [one] => Some(json!(one)),
                        _ => Some(json!(both)),
                    }
                }
                ("enum", Value::Array(mine), Value::Array(theirs)) => Some(Value::Array(
                    mine.into_iter().filter(|v| theirs.contains(v)).collect(),
                )),
                (
                    "minimum" | "exclusiveMinimum" | "minItems" | "minLength" | "minProperties",
                    Value::Number(a),
                    Value::Number(b),
                ) => Some(if b.as_f64() > a.as_f64() { b } else { a }.into()),
                (
                    "maximum" | "exclusiveMaximum" | "maxItems" | "maxLength" | "maxProperties",
                    Value::Number(a),
                    Value::Number(b),
                ) => Some(if b.as_f64() < a.as_f64() { b } else { a }.into()),
                (_, mine, _) => {
                    *existing = mine;
                    None
                }
            };
            match merged {
                Some(merged) => *existing = merged,
                None => self.report(
                    at,
                    format!(
                        "the schemas `{by}` combines disagree on `{key}`: only the first is \
                         kept, so values the other refuses may be given"
                    ),
                ),
            }
        }
    }

    /// `oneOf`, `anyOf` or `allOf` at the root, which no client but MCP takes: merged into one
    /// object.
    pub(super) fn merge_root(&mut self, root: &mut Map<String, Value>) {
        if self.profile == Profile::Mcp {
            return;
        }
        if let Some(Value::Array(members)) = root.remove("allOf") {
            for member in members {
                if let Value::Object(member) = self.resolved(&member).into_owned() {
                    self.merge(root, member, "", "allOf");
                }
            }
        }
        for key in ["oneOf", "anyOf"] {
            let Some(Value::Array(branches)) = root.remove(key) else {
                continue;
            };
            let branches: Vec<Map<String, Value>> = branches
                .iter()
                .map(|b| match self.resolved(b).into_owned() {
                    Value::Object(b) => b,
                    _ => Map::new(),
                })
                .collect();
            let mut merged: Vec<(String, Vec<Value>)> = Vec::new();
            for branch in &branches {
                for (name, schema) in branch
                    .get("properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    match merged.iter_mut().find(|(n, _)| n == name) {
                        Some((_, schemas)) if !schemas.contains(schema) => {
                            schemas.push(schema.clone())
                        }
                        Some(_) => {}
                        None => merged.push((name.clone(), vec![schema.clone()])),
                    }
                }
            }
            let required_by = |b: &Map<String, Value>, name: &str| {
                b.get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.contains(&json!(name)))
            };
            let mut required: Vec<Value> = match root.get("required") {
                Some(Value::Array(r)) => r.clone(),
                _ => Vec::new(),
            };
            let mut properties = match root.remove("properties") {
                Some(Value::Object(p)) => p,
                _ => Map::new(),
            };
            let mut optional = Vec::new();
            for (name, schemas) in merged {
                let mut schema = match schemas.as_slice() {
                    [one] => one.clone(),
                    _ => {
                        let mut node = Map::new();
                        match values_of(&schemas, false) {
                            Some(values) => enumerate(&mut node, &schemas, values),
                            None => {
                                node.insert("anyOf".into(), Value::Array(schemas));
                            }
                        }
                        Value::Object(node)
                    }
                };
                if let Some(own) = properties.remove(&name) {
                    schema = json!({"allOf": [own, schema]});
                }
                if !required.contains(&json!(name)) {
                    if branches.iter().all(|b| required_by(b, &name)) {
                        required.push(json!(name));
                    } else {
                        optional.push(format!("`{name}`"));
                        if self.profile == Profile::OpenAi {
                            schema = self.nullable(schema);
                        }
                    }
                }
                properties.insert(name, schema);
            }
            root.insert("properties".into(), Value::Object(properties));
            if !required.is_empty() {
                root.insert("required".into(), Value::Array(required));
            }
            let optional = match optional.split_last() {
                None => String::new(),
                Some((last, [])) => format!(", in which {last} is optional"),
                Some((last, rest)) => {
                    format!(", in which {} and {last} are optional", rest.join(", "))
                }
            };
            let null = if self.profile == Profile::OpenAi && !optional.is_empty() {
                " (`null` for absent)"
            } else {
                ""
            };
            self.report(
                "",
                format!(
                    "{} takes no `{key}` at the root: its {} alternatives are merged into one \
                     object{optional}{null}, so the model can combine arguments of different \
                     alternatives, or leave out one an alternative needs; the server refuses a \
                     call that matches none of them",
                    self.client(),
                    branches.len()
                ),
            );
        }
    }

    /// `schema`, accepting `null` too.
    pub(super) fn nullable(&self, schema: Value) -> Value {
        if self.accepts_null(&schema, 0) {
            return schema;
        }
        let Value::Object(mut node) = schema else {
            return schema;
        };
        match node.get_mut("type") {
            Some(Value::String(t)) => {
                let t = std::mem::take(t);
                node.insert("type".into(), json!([t, "null"]));
            }
            Some(Value::Array(list)) => list.push(json!("null")),
            _ => {
                let mut outer = Map::new();
                if let Some(description) = node.remove("description") {
                    outer.insert("description".into(), description);
                }
                outer.insert("anyOf".into(), json!([node, {"type": "null"}]));
                return Value::Object(outer);
            }
        }
        if let Some(value) = node.remove("const") {
            node.insert("enum".into(), json!([value]));
        }
        if let Some(Value::Array(values)) = node.get_mut("enum") {
            values.push(Value::Null);
        }
        Value::Object(node)
    }
}
