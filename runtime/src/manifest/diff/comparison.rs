//! A comparison of two schemas of a tool under way: where it is ([`Place`]), which way changes
//! cut ([`Flow`]), the documents `$ref`s resolve in, and the changes found so far. The walk is in
//! `schema`, and the keywords it meets are judged in `keywords` and `values`.

use std::collections::HashMap;

use serde_json::Value;

use super::Severity;
use super::node::{Node, resolve};

/// Who reads the values a schema describes, which decides what a narrower schema means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Flow {
    /// The tool reads them: accepting less breaks callers.
    Input,
    /// The caller reads them: producing more breaks callers.
    Output,
    /// Under keywords whose direction is not followed (`not`, `if`, ...): any change breaks.
    Invariant,
}

impl Flow {
    /// The severity of a change after which fewer values are valid.
    fn narrowed(self) -> Severity {
        match self {
            Flow::Output => Severity::Additive,
            Flow::Input | Flow::Invariant => Severity::Breaking,
        }
    }

    /// The severity of a change after which more values are valid.
    fn widened(self) -> Severity {
        match self {
            Flow::Input => Severity::Additive,
            Flow::Output | Flow::Invariant => Severity::Breaking,
        }
    }
}

/// Where in the schema a comparison is, and how to judge it.
#[derive(Clone, Debug)]
pub(super) struct Place {
    pub(super) pointer: String,
    /// Whether this is the schema's root object, whose properties are the tool's arguments.
    /// Kept through `allOf`/`anyOf`/`oneOf`, which describe the same value.
    pub(super) root: bool,
    pub(super) flow: Flow,
}

impl Place {
    /// The schema's root, read as `flow` says.
    pub(super) fn root(flow: Flow) -> Place {
        Place {
            pointer: String::new(),
            root: true,
            flow,
        }
    }

    /// A value inside this one: a property, an item.
    pub(super) fn child(&self, suffix: &str) -> Place {
        Place {
            pointer: format!("{}{suffix}", self.pointer),
            root: false,
            flow: self.flow,
        }
    }

    /// The same value, described by a subschema: a branch of a composition.
    pub(super) fn within(&self, suffix: &str) -> Place {
        Place {
            pointer: format!("{}{suffix}", self.pointer),
            ..self.clone()
        }
    }

    pub(super) fn invariant(mut self) -> Place {
        self.flow = Flow::Invariant;
        self
    }

    /// What a property here is called in a detail.
    pub(super) fn noun(&self) -> &'static str {
        if self.root && self.flow == Flow::Input {
            "argument"
        } else {
            "field"
        }
    }
}

/// A change found in a schema, at its pointer.
#[derive(Debug)]
pub(super) struct SchemaChange {
    pub(super) severity: Severity,
    pub(super) pointer: String,
    pub(super) detail: String,
}

/// A comparison of two nodes, at least one of which followed a `$ref`: their identities and how
/// to judge.
pub(super) type Key = ((String, String), (String, String), bool, Flow);

/// One comparison of two schemas of a tool: the documents `$ref`s resolve in, and what was found.
pub(super) struct Schemas<'a> {
    pub(super) old_root: &'a Value,
    pub(super) new_root: &'a Value,
    pub(super) found: Vec<SchemaChange>,
    /// The comparisons of definitions under way, to stop where a recursive one comes round.
    pub(super) under_way: Vec<Key>,
    /// Each finished comparison of definitions: where it was, and the gravest change it found.
    pub(super) done: HashMap<Key, (String, Option<Severity>)>,
}

impl<'a> Schemas<'a> {
    /// A comparison of the schemas `old` and `new`, before anything is found.
    pub(super) fn new(old: &'a Value, new: &'a Value) -> Schemas<'a> {
        Schemas {
            old_root: old,
            new_root: new,
            found: Vec::new(),
            under_way: Vec::new(),
            done: HashMap::new(),
        }
    }

    /// A schema of the old document, its `$ref`s followed.
    pub(super) fn in_old(&self, value: &'a Value, pointer: String) -> Node<'a> {
        resolve(self.old_root, value, pointer)
    }

    /// A schema of the new document, its `$ref`s followed.
    pub(super) fn in_new(&self, value: &'a Value, pointer: String) -> Node<'a> {
        resolve(self.new_root, value, pointer)
    }

    pub(super) fn push(&mut self, severity: Severity, place: &Place, detail: impl Into<String>) {
        self.found.push(SchemaChange {
            severity,
            pointer: place.pointer.clone(),
            detail: detail.into(),
        });
    }

    pub(super) fn narrowed(&mut self, place: &Place, detail: impl Into<String>) {
        self.push(place.flow.narrowed(), place, detail);
    }

    pub(super) fn widened(&mut self, place: &Place, detail: impl Into<String>) {
        self.push(place.flow.widened(), place, detail);
    }

    /// Both ways at once: what was valid may not be, and what was not may be.
    pub(super) fn changed(&mut self, place: &Place, narrowed: bool, widened: bool, detail: String) {
        match (narrowed, widened) {
            (true, true) => self.push(Severity::Breaking, place, detail),
            (true, false) => self.narrowed(place, detail),
            (false, true) => self.widened(place, detail),
            (false, false) => {}
        }
    }
}
