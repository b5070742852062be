//! The manifest: every tool as `tools/list` describes it, in name order, serialised once.

use std::ops::Range;
use std::sync::OnceLock;

use bytes::Bytes;
use serde_json::Value;
use sha2::{Digest, Sha256};

mod diff;

/// How a manifest's compact JSON begins and ends, around its tools.
pub(crate) const HEAD: &[u8] = br#"{"tools":["#;
pub(crate) const TAIL: &[u8] = b"]}";

pub use diff::{Change, Severity, diff};

/// The manifest of a registry: `{ "tools": [...] }`, sorted by name, with its notes; beside the
/// tools, when the server has them, its `prompts` (by name), `resources` (by URI) and
/// `resourceTemplates` (by URI template), as their lists describe them.
///
/// Its bytes are the same across builds, link orders and runs: tools are sorted by name in byte
/// order and every object's keys are sorted.
///
/// Each tool has a SHA-256 over its canonical JSON (compact, keys sorted by code point: the bytes
/// `tools/list` sends for it), and so does the whole manifest, so that a client or a gateway can
/// pin a tool and notice when it changes under it.
#[derive(Clone, Debug)]
pub struct Manifest {
    /// The tools: `{"tools":[...]}`, the `result` of `tools/list`.
    bytes: Bytes,
    /// Each tool's wire name and where its JSON lies in `bytes`.
    tools: Vec<(String, Range<usize>)>,
    notes: Vec<String>,
    /// The members beside `tools`, serialised without braces (`"prompts":[...],...`); empty
    /// when there are none, and the manifest is `bytes`.
    beside: Vec<u8>,
    /// The whole manifest, made the first time it is asked for, when it has members beside
    /// `tools`.
    whole: OnceLock<Vec<u8>>,
    /// Read back from `bytes` the first time it is asked for.
    json: OnceLock<Value>,
    /// Computed the first time they are asked for: serving needs neither.
    sha256: OnceLock<String>,
    tool_sha256: OnceLock<Vec<String>>,
}

impl Manifest {
    /// The manifest of these tools, each its wire name and its compact JSON, in name order.
    pub(crate) fn new<'a>(
        tools: impl ExactSizeIterator<Item = (&'a str, &'a [u8])> + Clone,
        notes: Vec<String>,
    ) -> Manifest {
        let size = tools.clone().map(|(_, json)| json.len() + 1).sum::<usize>();
        let mut bytes = Vec::with_capacity(size + HEAD.len() + TAIL.len());
        bytes.extend_from_slice(HEAD);
        let mut ranges = Vec::with_capacity(tools.len());
        for (i, (name, json)) in tools.enumerate() {
            if i > 0 {
                bytes.push(b',');
            }
            let start = bytes.len();
            bytes.extend_from_slice(json);
            ranges.push((name.to_owned(), start..bytes.len()));
        }
        bytes.extend_from_slice(TAIL);
        Manifest::from_shared(bytes.into(), ranges, notes)
    }

    /// A manifest already serialised, such as one made at build time: `tools` says each tool's
    /// wire name and where its JSON lies in `bytes`, in name order.
    pub(crate) fn from_shared(
        bytes: Bytes,
        tools: Vec<(String, Range<usize>)>,
        notes: Vec<String>,
    ) -> Manifest {
        Manifest {
            bytes,
            tools,
            notes,
            beside: Vec::new(),
            whole: OnceLock::new(),
            json: OnceLock::new(),
            sha256: OnceLock::new(),
            tool_sha256: OnceLock::new(),
        }
    }

    /// Sets what the manifest lists beside its tools, each list in its order: prompts,
    /// resources, resource templates; an empty one is left out.
    pub(crate) fn set_beside(
        &mut self,
        prompts: &[Value],
        resources: &[Value],
        templates: &[Value],
    ) {
        // Keys in code point order, as in every object of the manifest; `tools` comes last.
        let mut beside = Vec::new();
        for (key, list) in [
            ("prompts", prompts),
            ("resourceTemplates", templates),
            ("resources", resources),
        ] {
            if list.is_empty() {
                continue;
            }
            if !beside.is_empty() {
                beside.push(b',');
            }
            serde_json::to_writer(&mut beside, key).expect("a string serialises");
            beside.push(b':');
            serde_json::to_writer(&mut beside, list).expect("a JSON value serialises");
        }
        self.beside = beside;
        self.whole = OnceLock::new();
        self.json = OnceLock::new();
        self.sha256 = OnceLock::new();
    }

    /// The SHA-256 of the whole manifest's bytes, in lowercase hex.
    pub fn sha256(&self) -> &str {
        self.sha256.get_or_init(|| sha256_hex(self.as_bytes()))
    }

    /// The SHA-256 of one tool's canonical JSON, by wire name, in lowercase hex.
    pub fn tool_sha256(&self, wire_name: &str) -> Option<&str> {
        let hashes = self.tool_sha256.get_or_init(|| {
            self.tools
                .iter()
                .map(|(_, range)| sha256_hex(&self.bytes[range.clone()]))
                .collect()
        });
        let i = self.tools.iter().position(|(name, _)| name == wire_name)?;
        Some(&hashes[i])
    }

    /// The manifest as JSON.
    pub fn as_json(&self) -> &Value {
        self.json.get_or_init(|| {
            serde_json::from_slice(self.as_bytes()).expect("the manifest's own bytes read back")
        })
    }

    /// The manifest as compact JSON. Without prompts or resources it is the `result` of
    /// `tools/list` ([`tools_list_bytes`](Manifest::tools_list_bytes)).
    pub fn as_bytes(&self) -> &[u8] {
        if self.beside.is_empty() {
            return &self.bytes;
        }
        self.whole.get_or_init(|| {
            let mut whole = Vec::with_capacity(self.beside.len() + self.bytes.len() + 1);
            whole.push(b'{');
            whole.extend_from_slice(&self.beside);
            whole.push(b',');
            whole.extend_from_slice(&self.bytes[1..]);
            whole
        })
    }

    /// The tools alone, as compact JSON: the `result` of `tools/list`, `{"tools":[...]}`.
    pub fn tools_list_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The tools' bytes, shared.
    pub(crate) fn shared_bytes(&self) -> Bytes {
        self.bytes.clone()
    }

    /// Where each tool's JSON lies in [`tools_list_bytes`](Manifest::tools_list_bytes), in name order.
    pub(crate) fn tool_ranges(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.tools.iter().map(|(_, range)| range.clone())
    }

    /// Each tool's compact JSON, in name order: slices of [`tools_list_bytes`](Manifest::tools_list_bytes).
    pub(crate) fn tool_bytes(&self) -> impl ExactSizeIterator<Item = &[u8]> {
        self.tools
            .iter()
            .map(|(_, range)| &self.bytes[range.clone()])
    }

    /// Things worth knowing that do not stop the server, such as a tool served unstructured.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}
