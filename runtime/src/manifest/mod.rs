//! The manifest: every tool as `tools/list` describes it, in name order, serialised once.

use std::sync::Arc;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::registry::Tool;

mod diff;

pub use diff::{Change, Severity, diff};

/// The manifest of a registry: `{ "tools": [...] }`, sorted by name, with its notes.
///
/// Its bytes are the same across builds, link orders and runs: tools are sorted by name in byte
/// order and every object's keys are sorted.
///
/// Each tool has a SHA-256 over its canonical JSON (compact, keys sorted by code point: the bytes
/// `tools/list` sends for it), and so does the whole manifest, so that a client or a gateway can
/// pin a tool and notice when it changes under it.
#[derive(Clone, Debug)]
pub struct Manifest {
    json: Value,
    bytes: Arc<[u8]>,
    notes: Vec<String>,
    sha256: String,
    tool_sha256: Vec<(String, String)>,
}

impl Manifest {
    pub(crate) fn new(tools: &[Tool]) -> Manifest {
        let json = json!({ "tools": tools.iter().map(Tool::descriptor).collect::<Vec<_>>() });
        let bytes: Arc<[u8]> = serde_json::to_vec(&json)
            .expect("a JSON value serialises")
            .into();
        let notes = tools.iter().filter_map(Tool::unstructured_note).collect();
        let tool_sha256 = tools
            .iter()
            .map(|t| {
                let bytes = serde_json::to_vec(t.descriptor()).expect("a JSON value serialises");
                (t.wire_name().to_owned(), sha256_hex(&bytes))
            })
            .collect();
        let sha256 = sha256_hex(&bytes[..]);
        Manifest {
            json,
            bytes,
            notes,
            sha256,
            tool_sha256,
        }
    }

    /// The SHA-256 of the whole manifest's bytes, in lowercase hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The SHA-256 of one tool's canonical JSON, by wire name, in lowercase hex.
    pub fn tool_sha256(&self, wire_name: &str) -> Option<&str> {
        self.tool_sha256
            .iter()
            .find(|(name, _)| name == wire_name)
            .map(|(_, hash)| hash.as_str())
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

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
