//! `oneOf` and `anyOf`: alternatives of values as an `enum`, `oneOf` as `anyOf` when no value
//! can match two alternatives, and `null` alternatives as Gemini's `nullable`.

use serde_json::{Map, Value, json};

use super::keywords::ANNOTATIONS;
use super::{Profile, Rewrite, types};
use crate::schema::{json_type, plain};

impl Rewrite<'_> {
    /// `oneOf` and `anyOf`: alternatives of values become an `enum`, a single alternative is
    /// merged, `oneOf` becomes `anyOf`, and for Gemini a `null` alternative becomes
    /// `nullable`. `true` when an alternative was merged into the node.
    pub(super) fn alternatives(&mut self, node: &mut Map<String, Value>, at: &str) -> bool {
        for key in ["oneOf", "anyOf"] {
            let Some(Value::Array(mut branches)) = node.get(key).cloned() else {
                continue;
            };
            node.remove(key);
            if self.profile == Profile::Gemini {
                let before = branches.len();
                branches.retain(|b| !is_null(b));
                if branches.len() < before {
                    node.insert("nullable".into(), json!(true));
                }
            }
            if let Some(values) = values_of(&branches, key == "oneOf") {
                enumerate(node, &branches, values);
                continue;
            }
            match branches.as_slice() {
                [] => {
                    node.insert("type".into(), json!("null"));
                    continue;
                }
                [Value::Object(only)] => {
                    self.merge(node, only.clone(), at, key);
                    return true;
                }
                _ => {}
            }
            if key == "oneOf" && !self.disjoint(&branches) {
                self.report(
                    at,
                    format!(
                        "`oneOf` became `anyOf` ({} supports no `oneOf`), and its alternatives \
                         overlap: a value that matches several of them, which `oneOf` refused, \
                         is accepted",
                        self.client()
                    ),
                );
            }
            if node.contains_key("anyOf") {
                self.report(
                    at,
                    "both `oneOf` and `anyOf`: the `oneOf` is dropped, so values it refused may \
                     be given",
                );
                continue;
            }
            node.insert("anyOf".into(), Value::Array(branches));
        }
        false
    }

    /// Whether no value can match two of the alternatives, as far as can be told cheaply.
    pub(super) fn disjoint(&self, branches: &[Value]) -> bool {
        let branches: Vec<Value> = branches
            .iter()
            .map(|b| self.resolved(b).into_owned())
            .collect();
        branches
            .iter()
            .enumerate()
            .all(|(i, a)| branches[i + 1..].iter().all(|b| disjoint_pair(a, b)))
    }
}

/// The values of alternatives that each allow only listed values (`const` or `enum`, with a
/// type and a description at most); `None` if one allows more. For `oneOf` (`distinct`), a
/// value two alternatives share is not allowed, so then `None` too.
pub(super) fn values_of(branches: &[Value], distinct: bool) -> Option<Vec<Value>> {
    let mut values: Vec<Value> = Vec::new();
    for branch in branches {
        let branch = branch.as_object()?;
        let only_values = branch.keys().all(|k| {
            matches!(
                k.as_str(),
                "const" | "enum" | "type" | "description" | "title"
            )
        });
        if !only_values {
            return None;
        }
        let listed = match (branch.get("const"), branch.get("enum")) {
            (Some(value), None) => vec![value.clone()],
            (None, Some(Value::Array(listed))) => listed.clone(),
            _ => return None,
        };
        for value in listed {
            if !values.contains(&value) {
                values.push(value);
            } else if distinct {
                return None;
            }
        }
    }
    (!values.is_empty()).then_some(values)
}

/// Writes alternatives of values into `node` as one `enum`, their descriptions after its own.
pub(super) fn enumerate(node: &mut Map<String, Value>, branches: &[Value], values: Vec<Value>) {
    if !node.contains_key("type") {
        let mut kinds: Vec<&str> = Vec::new();
        for value in &values {
            let kind = json_type(value);
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        node.insert(
            "type".into(),
            match kinds.as_slice() {
                [one] => json!(one),
                _ => json!(kinds),
            },
        );
    }
    let lines: Vec<String> = branches
        .iter()
        .filter_map(|b| {
            let text = b.get("description").or_else(|| b.get("title"))?.as_str()?;
            // Each value as a description shows it: `small`, `3`, `null`.
            let values: Vec<&Value> = match (b.get("const"), b.get("enum")) {
                (Some(value), _) => vec![value],
                (_, Some(Value::Array(listed))) => listed.iter().collect(),
                _ => Vec::new(),
            };
            let shown: Vec<String> = values
                .into_iter()
                .map(|value| format!("`{}`", plain(value)))
                .collect();
            Some(format!("- {}: {text}", shown.join(", ")))
        })
        .collect();
    if !lines.is_empty() {
        let lines = lines.join("\n");
        let description = match node.get("description").and_then(Value::as_str) {
            Some(text) if !text.is_empty() => format!("{text}\n\n{lines}"),
            _ => lines,
        };
        node.insert("description".into(), json!(description));
    }
    node.insert("enum".into(), Value::Array(values));
}

/// The type two types have in common: an integer is a number.
pub(super) fn narrower(a: &str, b: &str) -> Option<String> {
    match (a, b) {
        _ if a == b => Some(a.to_owned()),
        ("integer", "number") | ("number", "integer") => Some("integer".to_owned()),
        _ => None,
    }
}

/// The types a schema's values can have, when it says: from `type`, or from its values.
fn value_types(schema: &Map<String, Value>) -> Option<Vec<String>> {
    if let Some(t) = schema.get("type") {
        return Some(types(t));
    }
    let values = listed_values(schema)?;
    Some(values.iter().map(|v| json_type(v).to_owned()).collect())
}

/// The only values a schema allows, if it lists them.
fn listed_values(schema: &Map<String, Value>) -> Option<Vec<Value>> {
    match (schema.get("const"), schema.get("enum")) {
        (Some(value), _) => Some(vec![value.clone()]),
        (_, Some(Value::Array(values))) => Some(values.clone()),
        _ => None,
    }
}

/// Whether no value matches both schemas: different types, different listed values, different
/// listed values of a property both require (an internal tag), or a closed object against one
/// that requires a property it does not list (an external tag).
fn disjoint_pair(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return false;
    };
    if let (Some(ta), Some(tb)) = (value_types(a), value_types(b))
        && ta
            .iter()
            .all(|x| tb.iter().all(|y| narrower(x, y).is_none()))
    {
        return true;
    }
    if let (Some(va), Some(vb)) = (listed_values(a), listed_values(b))
        && va.iter().all(|v| !vb.contains(v))
    {
        return true;
    }
    let required = |s: &Map<String, Value>| -> Vec<String> {
        s.get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let property = |s: &Map<String, Value>, name: &str| {
        s.get("properties")
            .and_then(|p| p.get(name))
            .and_then(Value::as_object)
            .and_then(listed_values)
    };
    let tagged = required(a).iter().any(|name| {
        required(b).contains(name)
            && matches!(
                (property(a, name), property(b, name)),
                (Some(va), Some(vb)) if va.iter().all(|v| !vb.contains(v))
            )
    });
    let excludes = |closed: &Map<String, Value>, other: &Map<String, Value>| {
        closed.get("additionalProperties") == Some(&json!(false))
            && !closed.contains_key("patternProperties")
            && value_types(closed).is_some_and(|t| t == ["object"])
            && required(other).iter().any(|name| {
                closed
                    .get("properties")
                    .and_then(|p| p.get(name.as_str()))
                    .is_none()
            })
    };
    tagged || excludes(a, b) || excludes(b, a)
}

/// Whether a schema allows `null` and nothing else.
fn is_null(schema: &Value) -> bool {
    schema.as_object().is_some_and(|s| {
        s.get("type") == Some(&json!("null"))
            && s.keys()
                .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
    })
}
