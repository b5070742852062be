//! What each client takes, keyword by keyword: the vocabularies, and the rewrites of single
//! keywords (Gemini's types and values, tuples).

use serde_json::{Map, Value, json};

use super::{Profile, Rewrite};

/// The keywords OpenAI's strict mode supports (`$defs` too, at the root).
pub(super) const OPENAI: &[&str] = &[
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

/// The string formats OpenAI's strict mode supports.
pub(super) const OPENAI_FORMATS: &[&str] = &[
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

/// The fields of the Gemini API's `Schema`, but `default` (see [`Profile`]).
pub(super) const GEMINI: &[&str] = &[
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

/// The formats the Gemini API documents, with the type each is for.
pub(super) const GEMINI_FORMATS: &[(&str, &str)] = &[
    ("int32", "integer"),
    ("int64", "integer"),
    ("float", "number"),
    ("double", "number"),
    ("date-time", "string"),
    ("enum", "string"),
];

/// Keywords that annotate, in JSON Schema 2020-12 (`format` included: an annotation unless a
/// validator opts in, and the server's does not): dropping one never changes what is accepted.
pub(super) const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$comment",
    "$vocabulary",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Keywords that decide what is accepted, in JSON Schema 2020-12.
pub(super) const ASSERTIONS: &[&str] = &[
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "prefixItems",
    "items",
    "contains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "$ref",
    "$dynamicRef",
];

impl Rewrite<'_> {
    /// Drops or rewrites the keywords the client does not take.
    pub(super) fn keywords(&mut self, node: &mut Map<String, Value>, at: &str) {
        let supported = match self.profile {
            Profile::OpenAi => OPENAI,
            Profile::Gemini => GEMINI,
            Profile::Mcp | Profile::Anthropic => return,
        };
        if let Some(Value::String(format)) = node.get("format") {
            let known = match self.profile {
                Profile::OpenAi => OPENAI_FORMATS.contains(&format.as_str()),
                _ => GEMINI_FORMATS.iter().any(|(f, _)| f == format),
            };
            if !known {
                node.remove("format");
            }
        }
        let keys: Vec<String> = node.keys().cloned().collect();
        for key in keys {
            if supported.contains(&key.as_str()) {
                continue;
            }
            let Some(value) = node.remove(&key) else {
                continue;
            };
            match key.as_str() {
                "default" => {
                    let default = format!("Default: `{value}`.");
                    let description = match node.get("description").and_then(Value::as_str) {
                        Some(text) if !text.is_empty() => format!("{text}\n\n{default}"),
                        _ => default,
                    };
                    node.insert("description".into(), json!(description));
                }
                // Without listed properties, `Rewrite::listed` reports the map.
                "additionalProperties" if value.is_object() && node.contains_key("properties") => {
                    self.report(
                        at,
                        "keys beyond the listed properties (`additionalProperties` with a \
                         schema) cannot be expressed in Gemini's schema: not offered",
                    );
                }
                // `true` is the default; `false`: the listed properties still say what an
                // object holds, and the server refuses any other key as before.
                "additionalProperties" => {}
                key if ASSERTIONS.contains(&key) => self.report(
                    at,
                    format!(
                        "`{key}` is dropped: {} does not support it, so the model is no longer \
                         held to it (the server still checks it)",
                        self.client()
                    ),
                ),
                // Annotations, and keywords JSON Schema does not define: neither changes what
                // is accepted.
                _ => {}
            }
        }
    }

    /// A tuple (`prefixItems`) as `items`: faithful when every position takes the same schema.
    pub(super) fn tuple(&mut self, node: &mut Map<String, Value>, at: &str) {
        let Some(Value::Array(positions)) = node.remove("prefixItems") else {
            return;
        };
        let rest = node.remove("items");
        let len = positions.len() as u64;
        if rest == Some(json!(false)) {
            raise(node, "maxItems", len as f64, f64::min);
        }
        let bounded = node
            .get("maxItems")
            .and_then(Value::as_u64)
            .is_some_and(|max| max <= len);
        let mut distinct: Vec<Value> = Vec::new();
        let beyond = rest.iter().filter(|r| !bounded && r.is_object());
        for schema in positions.iter().chain(beyond) {
            if !distinct.contains(schema) {
                distinct.push(schema.clone());
            }
        }
        // Items past the tuple were free: `items` would hold them to the element type.
        let open = !bounded && rest.is_none();
        match distinct.as_slice() {
            [one] if !open => {
                node.insert("items".into(), one.clone());
            }
            _ => {
                node.insert("items".into(), json!({ "anyOf": distinct }));
                self.report(
                    at,
                    format!(
                        "a tuple (`prefixItems`) cannot be expressed in {}: every position \
                         accepts any of the element types",
                        self.client()
                    ),
                );
            }
        }
    }

    /// Gemini: `const` and `enum` as enums of strings, `null` among them as `nullable`.
    pub(super) fn gemini_values(&mut self, node: &mut Map<String, Value>, at: &str) {
        if let Some(value) = node.remove("const") {
            node.insert("enum".into(), json!([value]));
        }
        let Some(Value::Array(values)) = node.get("enum").cloned() else {
            return;
        };
        let strings: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
        if strings.len() < values.len() {
            node.insert("nullable".into(), json!(true));
        }
        if strings.is_empty() {
            node.remove("enum");
            node.insert("type".into(), json!("null"));
        } else if strings.iter().all(Value::is_string) {
            node.insert("enum".into(), Value::Array(strings));
        } else {
            node.remove("enum");
            self.report(
                at,
                "an `enum` or `const` of values that are not strings is dropped: Gemini's enums \
                 are strings, so the model may give another value",
            );
        }
    }

    /// Gemini: one `type`, with `nullable` for `null` and `anyOf` for several; an integer's
    /// exclusive bounds as inclusive ones.
    pub(super) fn gemini_types(&mut self, node: &mut Map<String, Value>) {
        if let Some(Value::Array(list)) = node.get("type").cloned() {
            let mut list: Vec<String> = list
                .iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect();
            if list.iter().any(|t| t == "null") {
                node.insert("nullable".into(), json!(true));
                list.retain(|t| t != "null");
            }
            match list.as_slice() {
                [] => {
                    node.insert("type".into(), json!("null"));
                }
                [one] => {
                    node.insert("type".into(), json!(one));
                }
                several if !node.contains_key("anyOf") => {
                    node.remove("type");
                    let branches = split_by_type(node, several);
                    node.insert("anyOf".into(), branches);
                }
                // Both a list of types and alternatives: each alternative keeps its own type.
                _ => {
                    node.remove("type");
                }
            }
        }
        if node.get("type") == Some(&json!("integer")) {
            if let Some(bound) = node.remove("exclusiveMinimum").and_then(|b| b.as_f64()) {
                raise(node, "minimum", bound.floor() + 1.0, f64::max);
            }
            if let Some(bound) = node.remove("exclusiveMaximum").and_then(|b| b.as_f64()) {
                raise(node, "maximum", bound.ceil() - 1.0, f64::min);
            }
        }
    }
}

/// The types a keyword applies to, for the keywords that apply to some types only.
fn applies_to(keyword: &str, value: &Value) -> Option<&'static [&'static str]> {
    Some(match keyword {
        "minLength" | "maxLength" | "pattern" => &["string"],
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
            &["number", "integer"]
        }
        "items" | "prefixItems" | "minItems" | "maxItems" | "uniqueItems" | "contains"
        | "minContains" | "maxContains" => &["array"],
        "properties"
        | "required"
        | "additionalProperties"
        | "patternProperties"
        | "propertyNames"
        | "minProperties"
        | "maxProperties"
        | "dependentRequired" => &["object"],
        "format" => match GEMINI_FORMATS
            .iter()
            .find(|(f, _)| Some(*f) == value.as_str())
            .map(|(_, t)| *t)
        {
            Some("integer") => &["integer"],
            Some("number") => &["number"],
            Some("string") => &["string"],
            // An annotation for no type Gemini documents: it goes nowhere.
            _ => &[],
        },
        _ => return None,
    })
}

/// Splits a node of several types into alternatives, one per type, each with the keywords
/// that apply to it.
fn split_by_type(node: &mut Map<String, Value>, kinds: &[String]) -> Value {
    let branches: Vec<Value> = kinds
        .iter()
        .map(|kind| {
            let mut branch = Map::new();
            branch.insert("type".into(), json!(kind));
            for (keyword, value) in node.iter() {
                if applies_to(keyword, value).is_some_and(|k| k.contains(&kind.as_str())) {
                    branch.insert(keyword.clone(), value.clone());
                }
            }
            Value::Object(branch)
        })
        .collect();
    node.retain(|keyword, value| applies_to(keyword, value).is_none());
    Value::Array(branches)
}

/// Sets `node[key]` to `bound`, or to `pick` of it and the bound already there.
fn raise(node: &mut Map<String, Value>, key: &str, bound: f64, pick: fn(f64, f64) -> f64) {
    let bound = match node.get(key).and_then(Value::as_f64) {
        Some(own) => pick(own, bound),
        None => bound,
    };
    // Integral by construction; shown without a fraction when it fits.
    let value = if bound.abs() < 9.0e15 {
        json!(bound as i64)
    } else {
        json!(bound)
    };
    node.insert(key.into(), value);
}
