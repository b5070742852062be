//! The schema comparison: the walk over two schemas of a tool, their properties, items and
//! compositions. Types and lists of values are compared in `values`, other keywords in
//! `keywords`, and `$ref`s are followed in `node`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::comparison::{Flow, Place, Schemas};
use super::keywords::{ANNOTATIONS, TYPE_SPECIFIC};
use super::node::{Node, escape, resolve};
use super::values::{Values, is_null_schema, values};
use super::{Change, Severity, TRUE, presence_change};

impl<'a> Schemas<'a> {
    pub(super) fn compare_roots(
        tool: &str,
        side: &str,
        old: &'a Value,
        new: &'a Value,
        flow: Flow,
        changes: &mut Vec<Change>,
    ) {
        let mut schemas = Schemas::new(old, new);
        let place = Place::root(flow);
        let (o, n) = (
            resolve(old, old, String::new()),
            resolve(new, new, String::new()),
        );
        schemas.compare(&o, &n, &place);
        changes.extend(schemas.found.into_iter().map(|f| Change {
            severity: f.severity,
            at: match f.pointer.as_str() {
                "" => format!("{tool} {side}"),
                pointer => format!("{tool} {side} {pointer}"),
            },
            detail: f.detail,
        }));
    }

    pub(super) fn compare(&mut self, old: &Node<'a>, new: &Node<'a>, place: &Place) {
        if !old.followed_ref && !new.followed_ref {
            return self.compare_nodes(old, new, place);
        }
        // Only a `$ref` can make the comparison endless, and the documents are finite, so an
        // endless one comes round to a pair already being compared further up.
        let key = (old.identity(), new.identity(), place.root, place.flow);
        if self.under_way.contains(&key) {
            return;
        }
        // A definition used at many places (at 2^n, down n levels of definitions that each use
        // the next twice) is listed in full once, and each other place points there.
        if let Some((first, gravest)) = self.done.get(&key) {
            if let Some(severity) = *gravest {
                let first = if first.is_empty() { "the root" } else { first };
                let detail = format!("same changes as at `{first}`");
                self.push(severity, place, detail);
            }
            return;
        }
        self.under_way.push(key.clone());
        let start = self.found.len();
        self.compare_nodes(old, new, place);
        self.under_way.pop();
        let gravest = self.found[start..].iter().map(|f| f.severity).min();
        self.done.insert(key, (place.pointer.clone(), gravest));
    }

    fn compare_nodes(&mut self, old: &Node<'a>, new: &Node<'a>, place: &Place) {
        match (old.never, new.never) {
            (true, true) => return,
            (true, false) => return self.widened(place, "schema no longer `false`"),
            (false, true) => {
                return self.narrowed(place, "schema now `false`: no value is valid");
            }
            (false, false) => {}
        }
        match (self.nullable(old, true), self.nullable(new, false)) {
            (Some((inner, _)), None) if !new.admits_null() => {
                self.narrowed(place, "no longer nullable");
                return self.compare(&inner, new, place);
            }
            (None, Some((inner, suffix))) if !old.admits_null() => {
                self.widened(place, "now nullable");
                return self.compare(old, &inner, &place.within(&suffix));
            }
            _ => {}
        }
        let old_values = values(self.old_root, old);
        let new_values = values(self.new_root, new);
        // Two lists of values say all there is to say about types, and so does one where no
        // `type` is written.
        let typed = old.value("type").is_some() || new.value("type").is_some();
        let unrelated = typed
            && (old_values.is_none() || new_values.is_none())
            && self.compare_types(old, new, old_values.as_ref(), new_values.as_ref(), place);
        self.compare_values(old_values.as_ref(), new_values.as_ref(), place);
        self.compare_properties(old, new, place);
        self.compare_items(old, new, place);
        self.compare_compositions(old, new, old_values.as_ref(), new_values.as_ref(), place);
        let keys: BTreeSet<&str> = old.keys().into_iter().chain(new.keys()).collect();
        for key in keys {
            // After `string` -> `integer`, that `minimum` was added says nothing more.
            if !(unrelated && TYPE_SPECIFIC.contains(&key)) {
                self.compare_keyword(key, old, new, place);
            }
        }
    }

    /// `anyOf: [X, {"type": "null"}]` seen as X with its siblings: the inner node and the suffix
    /// of its pointer.
    fn nullable(&self, node: &Node<'a>, old: bool) -> Option<(Node<'a>, String)> {
        let (Value::Array(branches), pointer) = node.get("anyOf")? else {
            return None;
        };
        let alone = node
            .keys()
            .iter()
            .all(|k| *k == "anyOf" || ANNOTATIONS.contains(k));
        if branches.len() != 2 || !alone {
            return None;
        }
        let at = 1 - branches.iter().position(is_null_schema)?;
        if is_null_schema(&branches[at]) {
            return None;
        }
        let pointer = format!("{pointer}/{at}");
        let inner = if old {
            self.in_old(&branches[at], pointer)
        } else {
            self.in_new(&branches[at], pointer)
        };
        let mut layers = node.layers.clone();
        for layer in &mut layers {
            layer.hidden.push("anyOf");
        }
        layers.extend(inner.layers);
        let node = Node {
            pointer: inner.pointer,
            layers,
            never: inner.never,
            followed_ref: inner.followed_ref,
        };
        Some((node, format!("/anyOf/{at}")))
    }

    fn compare_properties(&mut self, old: &Node<'a>, new: &Node<'a>, place: &Place) {
        let properties = |node: &Node<'a>| node.value("properties").and_then(Value::as_object);
        let required = |node: &Node<'a>| -> BTreeSet<&'a str> {
            let listed = node.value("required").and_then(Value::as_array);
            listed
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect()
        };
        let (old_properties, new_properties) = (properties(old), properties(new));
        let (old_required, new_required) = (required(old), required(new));
        let names: BTreeSet<&str> = old_properties
            .into_iter()
            .chain(new_properties)
            .flat_map(|p| p.keys().map(String::as_str))
            .chain(old_required.iter().copied())
            .chain(new_required.iter().copied())
            .collect();
        let noun = place.noun();
        let closed = |node: &Node<'a>| {
            ["additionalProperties", "unevaluatedProperties"]
                .iter()
                .any(|k| node.value(k) == Some(&Value::Bool(false)))
        };
        for name in names {
            let suffix = format!("/properties/{}", escape(name));
            let child = place.child(&suffix);
            let schema = |node: &Node<'a>, properties: Option<&'a Map<String, Value>>| {
                let pointer = format!("{}/{}", node.pointer_of("properties"), escape(name));
                (properties.and_then(|p| p.get(name)), pointer)
            };
            let (old_schema, old_pointer) = schema(old, old_properties);
            let (new_schema, new_pointer) = schema(new, new_properties);
            let (was_required, is_required) =
                (old_required.contains(name), new_required.contains(name));
            // A name that is required without a schema is a property that may be anything.
            let was_declared = old_schema.is_some() || was_required;
            let is_declared = new_schema.is_some() || is_required;
            match (was_declared, is_declared, place.flow) {
                (true, true, _) => {
                    let o = self.in_old(old_schema.unwrap_or(&TRUE), old_pointer);
                    let n = self.in_new(new_schema.unwrap_or(&TRUE), new_pointer);
                    self.compare(&o, &n, &child);
                    let output = place.flow == Flow::Output;
                    match (was_required, is_required) {
                        (false, true) if output => {
                            self.narrowed(&child, format!("field `{name}` now guaranteed"));
                        }
                        (false, true) => {
                            self.narrowed(&child, format!("{noun} `{name}` now required"));
                        }
                        (true, false) if output => {
                            self.widened(&child, format!("field `{name}` no longer guaranteed"));
                        }
                        (true, false) => {
                            self.widened(&child, format!("{noun} `{name}` now optional"));
                        }
                        _ => {}
                    }
                }
                (false, true, flow) => {
                    let (severity, detail) = match (flow, is_required) {
                        (Flow::Input, true) => {
                            (Severity::Breaking, format!("new required {noun} `{name}`"))
                        }
                        (Flow::Input, false) => {
                            (Severity::Additive, format!("new optional {noun} `{name}`"))
                        }
                        (Flow::Output, true) => (Severity::Additive, format!("new field `{name}`")),
                        (Flow::Output, false) => {
                            (Severity::Additive, format!("new optional field `{name}`"))
                        }
                        (Flow::Invariant, _) => (Severity::Breaking, format!("new field `{name}`")),
                    };
                    self.push(severity, &child, detail);
                }
                (true, false, Flow::Input) if closed(new) => {
                    self.push(
                        Severity::Breaking,
                        &child,
                        format!("{noun} `{name}` removed"),
                    );
                }
                (true, false, Flow::Input) => {
                    let detail = format!("{noun} `{name}` removed; unknown {noun}s are accepted");
                    self.push(Severity::Additive, &child, detail);
                    // What it was is now checked against the schema for unlisted properties.
                    if let Some((extra, pointer)) = new.get("additionalProperties")
                        && extra.is_object()
                    {
                        let o = self.in_old(old_schema.unwrap_or(&TRUE), old_pointer);
                        self.compare(&o, &self.in_new(extra, pointer), &child);
                    }
                }
                (true, false, Flow::Output) if was_required => {
                    self.push(
                        Severity::Breaking,
                        &child,
                        format!("field `{name}` removed"),
                    );
                }
                (true, false, Flow::Output) => {
                    let detail = format!("optional field `{name}` removed");
                    self.push(Severity::Additive, &child, detail);
                }
                (true, false, Flow::Invariant) => {
                    self.push(
                        Severity::Breaking,
                        &child,
                        format!("field `{name}` removed"),
                    );
                }
                (false, false, _) => {}
            }
        }
        let (old_extra, new_extra) = (
            old.get("additionalProperties"),
            new.get("additionalProperties"),
        );
        if old_extra.is_none() && new_extra.is_none() {
            return;
        }
        let refused =
            |extra: &Option<(&Value, String)>| matches!(extra, Some((Value::Bool(false), _)));
        let (refusal, acceptance) = match place.flow {
            Flow::Output => (
                "no longer has unlisted fields".to_owned(),
                "may now have unlisted fields".to_owned(),
            ),
            _ => (
                format!("unknown {noun}s now refused"),
                format!("unknown {noun}s now accepted"),
            ),
        };
        match (refused(&old_extra), refused(&new_extra)) {
            (false, true) => self.narrowed(place, refusal),
            (true, false) => self.widened(place, acceptance),
            (true, true) => {}
            (false, false) => {
                let o = old_extra.unwrap_or((&TRUE, old.pointer_of("additionalProperties")));
                let n = new_extra.unwrap_or((&TRUE, new.pointer_of("additionalProperties")));
                let (o, n) = (self.in_old(o.0, o.1), self.in_new(n.0, n.1));
                self.compare(&o, &n, &place.child("/additionalProperties"));
            }
        }
    }

    fn compare_items(&mut self, old: &Node<'a>, new: &Node<'a>, place: &Place) {
        let (old_items, new_items) = (old.get("items"), new.get("items"));
        let array = |items: &Option<(&Value, String)>| matches!(items, Some((Value::Array(_), _)));
        if array(&old_items) || array(&new_items) {
            // The tuple form of drafts before 2020-12: compared as it is written.
            let (o, n) = (old_items.map(|i| i.0), new_items.map(|i| i.0));
            if let Some(detail) = presence_change("keyword `items`", o, n) {
                self.push(Severity::Breaking, place, detail);
            }
        } else if old_items.is_some() || new_items.is_some() {
            let o = old_items.unwrap_or((&TRUE, old.pointer_of("items")));
            let n = new_items.unwrap_or((&TRUE, new.pointer_of("items")));
            let (o, n) = (self.in_old(o.0, o.1), self.in_new(n.0, n.1));
            self.compare(&o, &n, &place.child("/items"));
        }
        let tuple = |node: &Node<'a>| match node.get("prefixItems") {
            Some((Value::Array(items), pointer)) => Some((items, pointer)),
            _ => None,
        };
        match (tuple(old), tuple(new)) {
            (Some((o, op)), Some((n, np))) if o.len() == n.len() => {
                for (i, (o, n)) in o.iter().zip(n).enumerate() {
                    let (o, n) = (
                        self.in_old(o, format!("{op}/{i}")),
                        self.in_new(n, format!("{np}/{i}")),
                    );
                    self.compare(&o, &n, &place.child(&format!("/prefixItems/{i}")));
                }
            }
            (None, None) => {
                let (o, n) = (old.value("prefixItems"), new.value("prefixItems"));
                if let Some(detail) = presence_change("keyword `prefixItems`", o, n) {
                    self.push(Severity::Breaking, place, detail);
                }
            }
            (o, n) => {
                let len = |t: Option<(&Vec<Value>, String)>| t.map_or(0, |(items, _)| items.len());
                let detail = format!(
                    "`prefixItems` changed from {} to {} entries",
                    len(o),
                    len(n)
                );
                self.push(Severity::Breaking, place, detail);
            }
        }
    }

    fn compare_compositions(
        &mut self,
        old: &Node<'a>,
        new: &Node<'a>,
        old_values: Option<&Values<'a>>,
        new_values: Option<&Values<'a>>,
        place: &Place,
    ) {
        for keyword in ["allOf", "anyOf", "oneOf"] {
            let listed =
                |values: Option<&Values<'a>>| values.is_some_and(|v| v.from == Some(keyword));
            let (old_listed, new_listed) = (listed(old_values), listed(new_values));
            let (o, n) = (old.get(keyword), new.get(keyword));
            if old_listed && new_listed {
                continue;
            }
            if old_listed || new_listed {
                // One side lists values with the keyword, the other composes schemas with it.
                if o.is_some() && n.is_some() {
                    let detail = format!("`{keyword}` changed from values to schemas");
                    let detail = if old_listed {
                        detail
                    } else {
                        format!("`{keyword}` changed from schemas to values")
                    };
                    self.push(Severity::Breaking, place, detail);
                }
                continue;
            }
            let more_is_wider = keyword != "allOf";
            match (o, n) {
                (None, None) => {}
                (Some((Value::Array(o), op)), Some((Value::Array(n), np))) => {
                    self.compare_branches(keyword, (o, &op), (n, &np), more_is_wider, place);
                }
                (Some((Value::Array(_), _)), None) if !more_is_wider => {
                    self.widened(place, format!("`{keyword}` removed"));
                }
                (None, Some((Value::Array(_), _))) if !more_is_wider => {
                    self.narrowed(place, format!("`{keyword}` added"));
                }
                (o, n) => {
                    let (o, n) = (o.map(|o| o.0), n.map(|n| n.0));
                    if let Some(detail) = presence_change(&format!("`{keyword}`"), o, n) {
                        self.push(Severity::Breaking, place, detail);
                    }
                }
            }
        }
    }

    fn compare_branches(
        &mut self,
        keyword: &str,
        (old, old_pointer): (&'a [Value], &str),
        (new, new_pointer): (&'a [Value], &str),
        more_is_wider: bool,
        place: &Place,
    ) {
        let mut pairs = Vec::new();
        if old.len() == new.len() {
            pairs.extend((0..old.len()).map(|i| (i, i)));
        } else {
            // Branches kept as they were are found by equality; the rest were added or removed.
            let mut taken = vec![false; new.len()];
            let mut removed = Vec::new();
            for (i, branch) in old.iter().enumerate() {
                match (0..new.len()).find(|&j| !taken[j] && new[j] == *branch) {
                    Some(j) => {
                        taken[j] = true;
                        pairs.push((i, j));
                    }
                    None => removed.push(i),
                }
            }
            let added: Vec<usize> = (0..new.len()).filter(|&j| !taken[j]).collect();
            if !removed.is_empty() && !added.is_empty() {
                let detail = format!(
                    "`{keyword}` changed from {} to {} branches",
                    old.len(),
                    new.len()
                );
                return self.push(Severity::Breaking, place, detail);
            }
            for j in added {
                let here = place.within(&format!("/{keyword}/{j}"));
                let detail = format!("`{keyword}` branch {j} added");
                self.changed(&here, !more_is_wider, more_is_wider, detail);
            }
            for i in removed {
                let here = place.within(&format!("/{keyword}/{i}"));
                let detail = format!("`{keyword}` branch {i} removed");
                self.changed(&here, more_is_wider, !more_is_wider, detail);
            }
        }
        for (i, j) in pairs {
            let o = self.in_old(&old[i], format!("{old_pointer}/{i}"));
            let n = self.in_new(&new[j], format!("{new_pointer}/{j}"));
            self.compare(&o, &n, &place.within(&format!("/{keyword}/{j}")));
        }
    }
}
