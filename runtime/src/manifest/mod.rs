//! The manifest: every tool as `tools/list` describes it, in name order, serialised once.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::registry::Tool;

/// The manifest of a registry: `{ "tools": [...] }`, sorted by name, with its notes.
///
/// Its bytes are the same across builds, link orders and runs: tools are sorted by name in byte
/// order and every object's keys are sorted.
#[derive(Clone, Debug)]
pub struct Manifest {
    json: Value,
    bytes: Arc<[u8]>,
    notes: Vec<String>,
}

impl Manifest {
    pub(crate) fn new(tools: &[Tool]) -> Manifest {
        let json = json!({ "tools": tools.iter().map(Tool::descriptor).collect::<Vec<_>>() });
        let bytes = serde_json::to_vec(&json)
            .expect("a JSON value serialises")
            .into();
        let notes = tools.iter().filter_map(Tool::unstructured_note).collect();
        Manifest { json, bytes, notes }
    }

    /// The manifest as JSON.
    pub fn as_json(&self) -> &Value {
        &self.json
    }

    /// The manifest as compact JSON: the `result` of `tools/list`.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Things worth knowing that do not stop the server, such as a tool served unstructured.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}
