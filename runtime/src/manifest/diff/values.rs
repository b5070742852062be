//! The types a schema names and the values it lists (`enum`, `const`, a `oneOf`/`anyOf` of
//! `const`s), and how they compare.

use std::collections::BTreeSet;

use serde_json::Value;

use super::comparison::{Place, Schemas};
use super::keywords::ANNOTATIONS;
use super::node::{Node, resolve};
use crate::schema::{json_type, plain};

/// What a `{"type": "null"}` branch among `const`s stands for.
static NULL: Value = Value::Null;

/// `{"type": "null"}`, perhaps with a description: the branch schemars adds for an `Option`.
pub(super) fn is_null_schema(value: &Value) -> bool {
    value.as_object().is_some_and(|o| {
        o.get("type").and_then(Value::as_str) == Some("null")
            && o.keys()
                .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
    })
}

/// The values a schema is limited to, when it is a list of values.
pub(super) struct Values<'a> {
    /// Each value, with the `oneOf`/`anyOf` branch that names it alone and its index there.
    list: Vec<(&'a Value, Option<(Node<'a>, usize)>)>,
    /// The composition keyword the list was read from, if any.
    pub(super) from: Option<&'static str>,
}

impl<'a> Values<'a> {
    fn find(&self, value: &Value) -> Option<&(&'a Value, Option<(Node<'a>, usize)>)> {
        self.list.iter().find(|(v, _)| *v == value)
    }

    fn shown(&self) -> String {
        let values: Vec<Value> = self.list.iter().map(|(v, _)| (*v).clone()).collect();
        format!("`{}`", Value::from(values))
    }
}

pub(super) fn values<'a>(root: &'a Value, node: &Node<'a>) -> Option<Values<'a>> {
    if let Some(value) = node.value("const") {
        return Some(Values {
            list: vec![(value, None)],
            from: None,
        });
    }
    if let Some(Value::Array(list)) = node.value("enum") {
        return Some(Values {
            list: list.iter().map(|v| (v, None)).collect(),
            from: None,
        });
    }
    for keyword in ["oneOf", "anyOf"] {
        let Some((Value::Array(branches), pointer)) = node.get(keyword) else {
            continue;
        };
        let mut list = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            if is_null_schema(branch) {
                list.push((&NULL, None));
                continue;
            }
            let branch = resolve(root, branch, format!("{pointer}/{i}"));
            let only_values = branch
                .keys()
                .iter()
                .all(|k| matches!(*k, "const" | "enum" | "type") || ANNOTATIONS.contains(k));
            match (branch.value("const"), branch.value("enum")) {
                (Some(value), _) if only_values => list.push((value, Some((branch, i)))),
                (None, Some(Value::Array(e))) if only_values => {
                    list.extend(e.iter().map(|v| (v, None)));
                }
                _ => return None,
            }
        }
        return (!list.is_empty()).then_some(Values {
            list,
            from: Some(keyword),
        });
    }
    None
}

/// A `type`, as a set of type names and as written.
struct Types {
    names: BTreeSet<String>,
    shown: String,
}

fn types(node: &Node<'_>, values: Option<&Values<'_>>) -> Option<Types> {
    let names: BTreeSet<String> = match node.value("type") {
        Some(Value::String(t)) => [t.clone()].into(),
        Some(Value::Array(ts)) => ts.iter().map(plain).collect(),
        Some(other) => [other.to_string()].into(),
        // A list of values has the types of its values.
        None => values?
            .list
            .iter()
            .map(|(v, _)| json_type(v).to_owned())
            .collect(),
    };
    let shown = match node.value("type") {
        Some(Value::String(t)) => t.clone(),
        Some(other) => other.to_string(),
        None if names.len() == 1 => names.iter().next().cloned().unwrap_or_default(),
        None => Value::from(names.iter().cloned().collect::<Vec<_>>()).to_string(),
    };
    Some(Types { names, shown })
}

/// Whether `names` allows every value of type `name`.
fn covers(names: &BTreeSet<String>, name: &str) -> bool {
    names.contains(name) || (name == "integer" && names.contains("number"))
}

impl<'a> Schemas<'a> {
    pub(super) fn compare_types(
        &mut self,
        old: &Node<'a>,
        new: &Node<'a>,
        old_values: Option<&Values<'a>>,
        new_values: Option<&Values<'a>>,
        place: &Place,
    ) -> bool {
        match (types(old, old_values), types(new, new_values)) {
            (None, None) => {}
            (Some(o), None) => self.widened(place, format!("type `{}` -> any", o.shown)),
            (None, Some(n)) => self.narrowed(place, format!("type any -> `{}`", n.shown)),
            (Some(o), Some(n)) => {
                let lost = o.names.iter().any(|t| !covers(&n.names, t));
                let gained = n.names.iter().any(|t| !covers(&o.names, t));
                let without_null = |names: &BTreeSet<String>| {
                    names
                        .iter()
                        .filter(|t| *t != "null")
                        .cloned()
                        .collect::<BTreeSet<_>>()
                };
                let detail = if without_null(&o.names) == without_null(&n.names) {
                    if gained {
                        "now nullable"
                    } else {
                        "no longer nullable"
                    }
                    .to_owned()
                } else {
                    format!("type `{}` -> `{}`", o.shown, n.shown)
                };
                self.changed(place, lost, gained, detail);
                let shared = o.names.iter().any(|t| covers(&n.names, t))
                    || n.names.iter().any(|t| covers(&o.names, t));
                return !shared;
            }
        }
        false
    }

    pub(super) fn compare_values(
        &mut self,
        old: Option<&Values<'a>>,
        new: Option<&Values<'a>>,
        place: &Place,
    ) {
        match (old, new) {
            (None, None) => {}
            (Some(o), None) => self.widened(place, format!("no longer limited to {}", o.shown())),
            (None, Some(n)) => self.narrowed(place, format!("now limited to {}", n.shown())),
            (Some(o), Some(n)) => {
                for (value, _) in &o.list {
                    if n.find(value).is_none() {
                        self.narrowed(place, format!("enum value `{value}` removed"));
                    }
                }
                for (value, new_branch) in &n.list {
                    match o.find(value) {
                        None => self.widened(place, format!("enum value `{value}` added")),
                        Some((_, Some((old_branch, _)))) => {
                            if let (Some((new_branch, i)), Some(keyword)) = (new_branch, n.from) {
                                let here = place.within(&format!("/{keyword}/{i}"));
                                for key in ANNOTATIONS {
                                    self.compare_keyword(key, old_branch, new_branch, &here);
                                }
                            }
                        }
                        Some((_, None)) => {}
                    }
                }
            }
        }
    }
}
