//! The keywords compared one by one: bounds, `multipleOf`, `pattern`, `format`, annotations,
//! the subschemas whose direction is not followed, and any keyword not understood.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::comparison::{Place, Schemas};
use super::node::{Node, escape};
use super::{Severity, TRUE, presence_change};
use crate::schema::plain;

/// Keywords that only describe: they never change which values are valid.
pub(super) const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Keywords that constrain values of some types only: moot once the type changed to another.
pub(super) const TYPE_SPECIFIC: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
];

/// Keywords whose subschema is compared with every difference taken as breaking.
const INVARIANT_SUBSCHEMAS: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];

impl<'a> Schemas<'a> {
    /// The keywords not compared as a group above.
    pub(super) fn compare_keyword(
        &mut self,
        key: &str,
        old: &Node<'a>,
        new: &Node<'a>,
        place: &Place,
    ) {
        let (o, n) = (old.value(key), new.value(key));
        match key {
            "type"
            | "enum"
            | "const"
            | "properties"
            | "required"
            | "additionalProperties"
            | "items"
            | "prefixItems"
            | "allOf"
            | "anyOf"
            | "oneOf"
            | "$defs"
            | "definitions" => {}
            "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties"
            | "minContains" => self.compare_bound(key, true, o, n, place),
            "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties"
            | "maxContains" => self.compare_bound(key, false, o, n, place),
            "multipleOf" => self.compare_multiple(o, n, place),
            "uniqueItems" => {
                let unique = |v: Option<&Value>| v == Some(&Value::Bool(true));
                match (unique(o), unique(n)) {
                    (false, true) => self.narrowed(place, "items must now be unique"),
                    (true, false) => self.widened(place, "items no longer need to be unique"),
                    _ => {}
                }
            }
            "pattern" => match (o, n) {
                (None, Some(n)) => self.narrowed(place, format!("`pattern` `{}` added", plain(n))),
                (Some(o), None) => self.widened(place, format!("`pattern` `{}` removed", plain(o))),
                (Some(o), Some(n)) if o != n => {
                    let detail = format!("`pattern` `{}` -> `{}`", plain(o), plain(n));
                    self.push(Severity::Breaking, place, detail);
                }
                _ => {}
            },
            "format" => self.compare_format(o, n, place),
            "description" | "title" => {
                if let Some(detail) = presence_change(key, o, n) {
                    self.push(Severity::Cosmetic, place, detail);
                }
            }
            "default" => {
                let detail = match (o, n) {
                    (None, Some(n)) => format!("default `{n}` added"),
                    (Some(o), None) => format!("default `{o}` removed"),
                    (Some(o), Some(n)) if o != n => format!("default `{o}` -> `{n}`"),
                    _ => return,
                };
                self.push(Severity::Cosmetic, place, detail);
            }
            "deprecated" => {
                let deprecated = |v: Option<&Value>| v == Some(&Value::Bool(true));
                match (deprecated(o), deprecated(n)) {
                    (false, true) => self.push(Severity::Cosmetic, place, "now deprecated"),
                    (true, false) => self.push(Severity::Cosmetic, place, "no longer deprecated"),
                    _ => {}
                }
            }
            "examples" | "readOnly" | "writeOnly" | "$comment" => {
                if let Some(detail) = presence_change(&format!("`{key}`"), o, n) {
                    self.push(Severity::Cosmetic, place, detail);
                }
            }
            key if INVARIANT_SUBSCHEMAS.contains(&key) => {
                let o = self.in_old(o.unwrap_or(&TRUE), old.pointer_of(key));
                let n = self.in_new(n.unwrap_or(&TRUE), new.pointer_of(key));
                let here = place.child(&format!("/{key}")).invariant();
                self.compare(&o, &n, &here);
            }
            "patternProperties" | "dependentSchemas"
                if o.is_none_or(Value::is_object) && n.is_none_or(Value::is_object) =>
            {
                let (om, nm) = (o.and_then(Value::as_object), n.and_then(Value::as_object));
                let names: BTreeSet<&String> =
                    om.into_iter().chain(nm).flat_map(Map::keys).collect();
                let (op, np) = (old.pointer_of(key), new.pointer_of(key));
                for name in names {
                    let suffix = format!("/{}", escape(name));
                    let o = om.and_then(|m| m.get(name)).unwrap_or(&TRUE);
                    let n = nm.and_then(|m| m.get(name)).unwrap_or(&TRUE);
                    let o = self.in_old(o, format!("{op}{suffix}"));
                    let n = self.in_new(n, format!("{np}{suffix}"));
                    let here = place.child(&format!("/{key}{suffix}")).invariant();
                    self.compare(&o, &n, &here);
                }
            }
            // Not understood, so not known to be harmless.
            _ => {
                if let Some(detail) = presence_change(&format!("keyword `{key}`"), o, n) {
                    self.push(Severity::Breaking, place, detail);
                }
            }
        }
    }

    fn compare_bound(
        &mut self,
        key: &str,
        lower: bool,
        old: Option<&Value>,
        new: Option<&Value>,
        place: &Place,
    ) {
        match (old, new) {
            (None, None) => {}
            (None, Some(n)) => self.narrowed(place, format!("`{key}` `{n}` added")),
            (Some(o), None) => self.widened(place, format!("`{key}` `{o}` removed")),
            (Some(o), Some(n)) => {
                let detail = format!("`{key}` `{o}` -> `{n}`");
                match (o.as_f64(), n.as_f64()) {
                    (Some(a), Some(b)) if a == b => {}
                    (Some(a), Some(b)) if (b > a) == lower => self.narrowed(place, detail),
                    (Some(_), Some(_)) => self.widened(place, detail),
                    _ if o != n => self.push(Severity::Breaking, place, detail),
                    _ => {}
                }
            }
        }
    }

    fn compare_multiple(&mut self, old: Option<&Value>, new: Option<&Value>, place: &Place) {
        let divides = |a: f64, b: f64| {
            let ratio = b / a;
            ratio.is_finite() && (ratio - ratio.round()).abs() < 1e-9
        };
        match (old, new) {
            (None, None) => {}
            (None, Some(n)) => self.narrowed(place, format!("`multipleOf` `{n}` added")),
            (Some(o), None) => self.widened(place, format!("`multipleOf` `{o}` removed")),
            (Some(o), Some(n)) => {
                let detail = format!("`multipleOf` `{o}` -> `{n}`");
                match (o.as_f64(), n.as_f64()) {
                    (Some(a), Some(b)) if a == b => {}
                    (Some(a), Some(b)) => {
                        // From 2 to 4 keeps to fewer values; from 2 to 3 to different ones.
                        let (fewer, more) = (divides(a, b), divides(b, a));
                        let unrelated = !fewer && !more;
                        self.changed(place, fewer || unrelated, more || unrelated, detail);
                    }
                    _ if o != n => self.push(Severity::Breaking, place, detail),
                    _ => {}
                }
            }
        }
    }

    fn compare_format(&mut self, old: Option<&Value>, new: Option<&Value>, place: &Place) {
        match (old, new) {
            (None, Some(n)) => self.narrowed(place, format!("format `{}` added", plain(n))),
            (Some(o), None) => self.widened(place, format!("format `{}` removed", plain(o))),
            (Some(o), Some(n)) if o != n => {
                let detail = format!("format `{}` -> `{}`", plain(o), plain(n));
                self.push(Severity::Breaking, place, detail);
            }
            _ => {}
        }
    }
}
