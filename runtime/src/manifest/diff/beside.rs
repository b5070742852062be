//! What changed in what a manifest lists beside its tools: prompts (by name), resources (by
//! URI) and resource templates (by URI template). The rules are documented on
//! [`diff`](super::diff).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{Change, Severity, change, presence_change};

/// The changes to the prompts, resources and templates from `old` to `new`.
pub(super) fn compare(old: &Value, new: &Value, changes: &mut Vec<Change>) {
    for (list, key, what) in [
        ("prompts", "name", "prompt"),
        ("resources", "uri", "resource"),
        ("resourceTemplates", "uriTemplate", "resource template"),
    ] {
        let (o, n) = (by(old, list, key), by(new, list, key));
        for id in o.keys().filter(|id| !n.contains_key(*id)) {
            changes.push(change(
                Severity::Breaking,
                &format!("{what} {id}"),
                format!("{what} removed"),
            ));
        }
        for (id, new_item) in &n {
            let at = format!("{what} {id}");
            match o.get(id) {
                None => changes.push(change(Severity::Additive, &at, format!("{what} added"))),
                Some(old_item) if list == "prompts" => prompt(&at, old_item, new_item, changes),
                Some(old_item) => resource(&at, what, key, old_item, new_item, changes),
            }
        }
    }
}

/// The entries of a manifest's `list`, by their `key`; of two with one key the first counts.
fn by<'a>(manifest: &'a Value, list: &str, key: &str) -> BTreeMap<&'a str, &'a Map<String, Value>> {
    let mut entries = BTreeMap::new();
    let listed = manifest.get(list).and_then(Value::as_array);
    for entry in listed.into_iter().flatten() {
        if let Some(object) = entry.as_object()
            && let Some(id) = object.get(key).and_then(Value::as_str)
        {
            entries.entry(id).or_insert(object);
        }
    }
    entries
}

/// A prompt's fields and arguments. The client sends the arguments, so one it may no longer
/// send, or must now send, breaks it.
fn prompt(at: &str, old: &Map<String, Value>, new: &Map<String, Value>, changes: &mut Vec<Change>) {
    for field in fields(old, new) {
        let (o, n) = (old.get(field), new.get(field));
        match field {
            "name" => {}
            "arguments" => arguments(at, o, n, changes),
            "title" | "description" | "icons" | "_meta" => {
                if let Some(detail) = presence_change(&described(field), o, n) {
                    changes.push(change(Severity::Cosmetic, at, detail));
                }
            }
            _ => {
                if let Some(detail) = presence_change(&format!("prompt field `{field}`"), o, n) {
                    changes.push(change(Severity::Breaking, at, detail));
                }
            }
        }
    }
}

fn arguments(at: &str, old: Option<&Value>, new: Option<&Value>, changes: &mut Vec<Change>) {
    let named = |list: Option<&Value>| -> BTreeMap<String, (bool, Value)> {
        list.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|argument| {
                let name = argument.get("name")?.as_str()?.to_owned();
                let required = argument.get("required") == Some(&Value::Bool(true));
                let mut shown = argument.clone();
                if let Value::Object(shown) = &mut shown {
                    shown.remove("name");
                    shown.remove("required");
                }
                Some((name, (required, shown)))
            })
            .collect()
    };
    let (old, new) = (named(old), named(new));
    for name in old.keys().filter(|name| !new.contains_key(*name)) {
        changes.push(change(
            Severity::Breaking,
            at,
            format!("argument `{name}` removed"),
        ));
    }
    for (name, (required, shown)) in &new {
        let Some((was_required, was_shown)) = old.get(name) else {
            let (severity, kind) = if *required {
                (Severity::Breaking, "required")
            } else {
                (Severity::Additive, "optional")
            };
            changes.push(change(
                severity,
                at,
                format!("new {kind} argument `{name}`"),
            ));
            continue;
        };
        match (was_required, required) {
            (false, true) => changes.push(change(
                Severity::Breaking,
                at,
                format!("argument `{name}` now required"),
            )),
            (true, false) => changes.push(change(
                Severity::Additive,
                at,
                format!("argument `{name}` now optional"),
            )),
            _ => {}
        }
        if was_shown != shown {
            changes.push(change(
                Severity::Cosmetic,
                at,
                format!("argument `{name}` description changed"),
            ));
        }
    }
}

/// A resource's or a template's fields. A client reads what it names: a media type that
/// changes or goes breaks a client that relies on it.
fn resource(
    at: &str,
    what: &str,
    key: &str,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    changes: &mut Vec<Change>,
) {
    for field in fields(old, new) {
        let (o, n) = (old.get(field), new.get(field));
        if field == key || o == n {
            continue;
        }
        match (field, o, n) {
            ("mimeType", None, Some(type_)) => changes.push(change(
                Severity::Additive,
                at,
                format!("media type {type_} added"),
            )),
            ("mimeType", Some(type_), None) => changes.push(change(
                Severity::Breaking,
                at,
                format!("media type {type_} removed"),
            )),
            ("mimeType", Some(was), Some(is)) => changes.push(change(
                Severity::Breaking,
                at,
                format!("media type {was} -> {is}"),
            )),
            ("name" | "title" | "description" | "annotations" | "icons" | "size" | "_meta", ..) => {
                if let Some(detail) = presence_change(&described(field), o, n) {
                    changes.push(change(Severity::Cosmetic, at, detail));
                }
            }
            _ => {
                if let Some(detail) = presence_change(&format!("{what} field `{field}`"), o, n) {
                    changes.push(change(Severity::Breaking, at, detail));
                }
            }
        }
    }
}

/// Every field of either entry, in order.
fn fields<'a>(old: &'a Map<String, Value>, new: &'a Map<String, Value>) -> BTreeSet<&'a str> {
    old.keys().chain(new.keys()).map(String::as_str).collect()
}

/// A field as a detail names it: `description`, `` `_meta` ``.
fn described(field: &str) -> String {
    match field {
        "title" | "description" | "name" | "icons" | "annotations" | "size" => field.to_owned(),
        other => format!("`{other}`"),
    }
}
