//! `$ref` resolution: a schema seen with the schemas it refers to.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// A schema with its `$ref`s followed: the keywords of the referring schema first, then those of
/// what it refers to, so a `description` next to a `$ref` wins over the definition's.
#[derive(Clone, Debug)]
pub(super) struct Node<'a> {
    /// Where the outermost schema is in its document: with the root, it decides the rest.
    pub(super) pointer: String,
    pub(super) layers: Vec<Level<'a>>,
    /// The schema `false`, which no value satisfies.
    pub(super) never: bool,
    pub(super) followed_ref: bool,
}

#[derive(Clone, Debug)]
pub(super) struct Level<'a> {
    map: &'a Map<String, Value>,
    pointer: String,
    /// Keywords already accounted for: a followed `$ref`, an unwrapped `anyOf`.
    pub(super) hidden: Vec<&'static str>,
    /// Whether a `$ref` led here.
    by_ref: bool,
}

pub(super) fn resolve<'a>(root: &'a Value, value: &'a Value, pointer: String) -> Node<'a> {
    let mut node = Node {
        pointer: pointer.clone(),
        layers: Vec::new(),
        never: false,
        followed_ref: false,
    };
    let (mut value, mut pointer) = (value, pointer);
    loop {
        let Value::Object(map) = value else {
            node.never = *value == Value::Bool(false);
            return node;
        };
        let target = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| Some((root.pointer(p)?, p.to_owned())));
        let hidden = if target.is_some() {
            vec!["$ref"]
        } else {
            vec![]
        };
        let by_ref = !node.layers.is_empty();
        node.layers.push(Level {
            map,
            pointer,
            hidden,
            by_ref,
        });
        match target {
            // A chain of `$ref`s that comes back to itself adds nothing the second time.
            Some((_, p)) if node.layers.iter().any(|l| l.pointer == p) => return node,
            Some((target, p)) => {
                node.followed_ref = true;
                (value, pointer) = (target, p);
            }
            None => return node,
        }
    }
}

impl<'a> Node<'a> {
    /// A keyword's value and its pointer in the document.
    pub(super) fn get(&self, key: &str) -> Option<(&'a Value, String)> {
        self.layers
            .iter()
            .filter(|l| !l.hidden.contains(&key))
            .find_map(|l| {
                let value = l.map.get(key)?;
                Some((value, format!("{}/{}", l.pointer, escape(key))))
            })
    }

    pub(super) fn value(&self, key: &str) -> Option<&'a Value> {
        self.get(key).map(|(v, _)| v)
    }

    /// Where a subschema under `key` would be, for one that is absent.
    pub(super) fn pointer_of(&self, key: &str) -> String {
        self.get(key)
            .map(|(_, p)| p)
            .unwrap_or_else(|| format!("{}/{}", self.pointer, escape(key)))
    }

    pub(super) fn keys(&self) -> BTreeSet<&'a str> {
        self.layers
            .iter()
            .flat_map(|l| {
                l.map
                    .keys()
                    .map(String::as_str)
                    .filter(|k| !l.hidden.contains(k))
            })
            .collect()
    }

    /// What decides the node: the place of the first definition a `$ref` led to, and the keywords
    /// beside the `$ref`s on the way there; or, when no `$ref` was followed, the node's own place.
    /// A recursive definition compares the same way each time round, whichever `$ref` led to it.
    pub(super) fn identity(&self) -> (String, String) {
        let Some(first) = self.layers.iter().position(|l| l.by_ref) else {
            return (self.pointer.clone(), String::new());
        };
        let beside: Vec<Value> = self.layers[..first]
            .iter()
            .map(|l| {
                let visible = l
                    .map
                    .iter()
                    .filter(|(k, _)| !l.hidden.contains(&k.as_str()));
                Value::Object(visible.map(|(k, v)| (k.clone(), v.clone())).collect())
            })
            .collect();
        (
            self.layers[first].pointer.clone(),
            Value::from(beside).to_string(),
        )
    }

    pub(super) fn admits_null(&self) -> bool {
        let typed = match self.value("type") {
            Some(Value::String(t)) => t == "null",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
            _ => false,
        };
        let listed = self.value("const").is_some_and(Value::is_null)
            || self
                .value("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| e.iter().any(Value::is_null));
        typed || listed
    }
}

pub(super) fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
