//! The bytes a build embeds: the manifest's JSON followed by an index of its tools ([`indexed`]):
//! where each tool's JSON lies, its name, and what start-up compares with the linked tool
//! ([`head`]). Start-up reads that index ([`open`]), and release builds never parse the JSON.
//! Bytes without an index, a manifest's JSON alone, are read with one pass of the parser that
//! skips the schemas.
//!
//! The same build writes the index and the JSON together. [`open`] checks that the index fits the
//! JSON's layout (each tool's object where the index puts it, `,` between them, names in order),
//! not that each entry says what the JSON says.

use std::borrow::Cow;
use std::ops::Range;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::manifest::{HEAD, TAIL};
use crate::registration::{Annotations, ToolRegistration};
use crate::registry::Registry;
use crate::registry::derived::{execution, meta};

/// What start-up needs of one tool of an embedded manifest.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct IndexEntry {
    pub(super) name: Cow<'static, str>,
    /// Where the tool's JSON lies in the manifest's bytes.
    pub(super) range: Range<usize>,
    /// Whether it has an `outputSchema`.
    pub(super) structured: bool,
    /// Its title, description, annotations, `execution` and `_meta`, as [`head`] encodes them: a
    /// linked tool is the one described when its [`registration_head`] is the same.
    pub(super) head: Cow<'static, [u8]>,
}

/// How embedded bytes with an index end. Before it: the JSON's length and the number of tools,
/// each a little-endian `u32`. JSON ends with `}`, so the JSON alone never ends so.
pub(super) const MAGIC: &[u8] = b"\0toolwright-index-2";

/// Says what start-up compares of a tool, in one encoding for both sides: the index and the
/// linked registration. Strings are their length (`u32`, little-endian) and UTF-8; an absent
/// title, `execution` or `_meta` is a 0 byte, a present one a 1 byte and its text (an object's
/// as compact JSON, keys sorted); each hint is 0 (absent), 1 (false) or 2 (true).
pub(super) fn head(
    out: &mut Vec<u8>,
    title: Option<&str>,
    description: &str,
    annotations: &Annotations,
    execution: Option<&Value>,
    meta: Option<&Value>,
) {
    match title {
        None => out.push(0),
        Some(title) => {
            out.push(1);
            put(out, title.as_bytes());
        }
    }
    put(out, description.as_bytes());
    let Annotations {
        read_only,
        destructive,
        idempotent,
        open_world,
    } = *annotations;
    for hint in [read_only, destructive, idempotent, open_world] {
        out.push(match hint {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        });
    }
    for object in [execution, meta] {
        match object {
            None => out.push(0),
            Some(object) => {
                out.push(1);
                let canonical =
                    serde_json::to_vec(&sorted(object)).expect("a JSON value serialises");
                put(out, &canonical);
            }
        }
    }
}

/// The value with every object's keys in order, whatever order `serde_json`'s maps keep
/// (`preserve_order` may be on for the binary and off for its build script).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(members) => {
            let mut members: Vec<(&String, &Value)> = members.iter().collect();
            members.sort_by_key(|(key, _)| *key);
            Value::Object(
                members
                    .into_iter()
                    .map(|(key, value)| (key.clone(), sorted(value)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The [`head`] of a linked tool, as its manifest entry says it.
pub(super) fn registration_head(out: &mut Vec<u8>, registration: &ToolRegistration) {
    head(
        out,
        registration.title,
        registration.description,
        &registration.annotations,
        execution(registration).as_ref(),
        meta(registration).as_ref(),
    );
}

/// Appends a length (`u32`, little-endian) and the bytes.
fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(out, bytes.len());
    out.extend_from_slice(bytes);
}

/// Appends an offset, length or count as a little-endian `u32`.
fn put_u32(out: &mut Vec<u8>, n: usize) {
    let n = u32::try_from(n).expect("a manifest is smaller than 4 GiB");
    out.extend_from_slice(&n.to_le_bytes());
}

/// The bytes a binary embeds: the registry's tools as `tools/list` serves them, then the index
/// of its tools. Prompts and resources are not embedded: they are served from what the binary
/// links.
pub(in crate::registry) fn indexed(registry: &Registry) -> Vec<u8> {
    let manifest = registry.manifest();
    let json = manifest.tools_list_bytes();
    let mut out = Vec::with_capacity(json.len() + registry.len() * 256);
    out.extend_from_slice(json);
    let mut scratch = Vec::new();
    for (tool, range) in registry.tools().iter().zip(manifest.tool_ranges()) {
        put_u32(&mut out, range.start);
        put_u32(&mut out, range.end);
        out.push(u8::from(tool.is_structured()));
        put(&mut out, tool.wire_name().as_bytes());
        scratch.clear();
        registration_head(
            &mut scratch,
            tool.registration()
                .expect("an embedded manifest is built from the tools linked in, none mounted"),
        );
        put(&mut out, &scratch);
    }
    put_u32(&mut out, json.len());
    put_u32(&mut out, registry.len());
    out.extend_from_slice(MAGIC);
    out
}

/// The manifest's JSON in embedded bytes, and each of its tools in order (by name), or why they
/// cannot be read.
pub(super) fn open(bytes: &'static [u8]) -> Result<(&'static [u8], Vec<IndexEntry>), String> {
    match bytes.strip_suffix(MAGIC) {
        Some(rest) => from_index(rest).ok_or_else(|| DAMAGED.to_owned()),
        // Cut short: a manifest's JSON, but neither its end nor an index's.
        None if bytes.starts_with(HEAD) && !bytes.ends_with(TAIL) => Err(DAMAGED.to_owned()),
        None => read(bytes).map(|entries| (bytes, entries)),
    }
}

/// Why embedded bytes with an index, or cut short, cannot be read.
pub(super) const DAMAGED: &str =
    "it is cut short, or its index does not fit its JSON; build the crate again";

/// The JSON and its entries, from the bytes before [`MAGIC`]; `None` when the index does not
/// describe the JSON before it (byte ranges out of place, names out of order).
fn from_index(bytes: &'static [u8]) -> Option<(&'static [u8], Vec<IndexEntry>)> {
    let (rest, mut footer) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    let json_len = take_u32(&mut footer)?;
    let count = take_u32(&mut footer)?;
    let (json, mut index) = rest.split_at_checked(json_len)?;
    let tools = json.strip_prefix(HEAD)?.strip_suffix(TAIL)?;
    // The smallest entry: two offsets, the flag, and two empty strings.
    let mut entries: Vec<IndexEntry> =
        Vec::with_capacity(count.min(index.len() / (4 + 4 + 1 + 4 + 4)));
    // Where the next tool's JSON must start: the tools are one after the other, `,` between.
    let mut next = HEAD.len();
    for _ in 0..count {
        let start = take_u32(&mut index)?;
        let end = take_u32(&mut index)?;
        let structured = match take(&mut index, 1)? {
            [0] => false,
            [1] => true,
            _ => return None,
        };
        let name = std::str::from_utf8(take_str(&mut index)?).ok()?;
        let head = take_str(&mut index)?;
        let object = json.get(start..end)?;
        if start != next || object.first() != Some(&b'{') || object.last() != Some(&b'}') {
            return None;
        }
        // After the first tool, `start` is one past the previous tool's end.
        if !entries.is_empty() && json[start - 1] != b',' {
            return None;
        }
        if entries
            .last()
            .is_some_and(|last| last.name.as_bytes() >= name.as_bytes())
        {
            return None;
        }
        next = end + 1;
        entries.push(IndexEntry {
            name: Cow::Borrowed(name),
            range: start..end,
            structured,
            head: Cow::Borrowed(head),
        });
    }
    let ends = match entries.last() {
        Some(last) => last.range.end == HEAD.len() + tools.len(),
        None => tools.is_empty(),
    };
    (ends && index.is_empty()).then_some((json, entries))
}

fn take(bytes: &mut &'static [u8], n: usize) -> Option<&'static [u8]> {
    let (taken, rest) = bytes.split_at_checked(n)?;
    *bytes = rest;
    Some(taken)
}

fn take_u32(bytes: &mut &'static [u8]) -> Option<usize> {
    let taken = take(bytes, 4)?;
    usize::try_from(u32::from_le_bytes(taken.try_into().ok()?)).ok()
}

fn take_str(bytes: &mut &'static [u8]) -> Option<&'static [u8]> {
    let n = take_u32(bytes)?;
    take(bytes, n)
}

/// The members of a tool that start-up compares; the schemas are skipped unparsed.
#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    title: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    description: Cow<'a, str>,
    #[serde(rename = "outputSchema", default)]
    output_schema: Option<IgnoredAny>,
    #[serde(default)]
    annotations: Hints,
    #[serde(default, deserialize_with = "present")]
    execution: Option<Value>,
    #[serde(rename = "_meta", default, deserialize_with = "present")]
    meta: Option<Value>,
}

/// A member that is there, even as `null`.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// The hints of a tool's `annotations`; its `title` there, if any, is skipped.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Hints {
    read_only_hint: Option<bool>,
    destructive_hint: Option<bool>,
    idempotent_hint: Option<bool>,
    open_world_hint: Option<bool>,
}

/// Each tool of a manifest's JSON, in its order (by name), or why it cannot be read.
fn read(manifest: &[u8]) -> Result<Vec<IndexEntry>, String> {
    let tools = manifest
        .strip_prefix(HEAD)
        .and_then(|rest| rest.strip_suffix(TAIL))
        .ok_or("it is not a manifest's compact JSON, `{\"tools\":[...]}`")?;
    let mut entries = Vec::new();
    let mut at = 0;
    while at < tools.len() {
        if !entries.is_empty() {
            if tools[at] != b',' {
                return Err(format!("expected `,` at byte {}", at + HEAD.len()));
            }
            at += 1;
        }
        // One pass of the parser per tool: it skips the schemas, and says where the tool ends.
        let mut stream =
            serde_json::Deserializer::from_slice(&tools[at..]).into_iter::<Fields<'_>>();
        let fields = match stream.next() {
            Some(Ok(fields)) => fields,
            Some(Err(error)) => return Err(error.to_string()),
            None => return Err("its tools array ends early".to_owned()),
        };
        let end = at + stream.byte_offset();
        let mut encoded = Vec::new();
        let hints = fields.annotations;
        head(
            &mut encoded,
            fields.title.as_deref(),
            &fields.description,
            &Annotations {
                read_only: hints.read_only_hint,
                destructive: hints.destructive_hint,
                idempotent: hints.idempotent_hint,
                open_world: hints.open_world_hint,
            },
            fields.execution.as_ref(),
            fields.meta.as_ref(),
        );
        entries.push(IndexEntry {
            name: Cow::Owned(fields.name.into_owned()),
            range: at + HEAD.len()..end + HEAD.len(),
            structured: fields.output_schema.is_some(),
            head: Cow::Owned(encoded),
        });
        at = end;
    }
    if !entries
        .windows(2)
        .all(|pair| pair[0].name.as_bytes() < pair[1].name.as_bytes())
    {
        return Err("its tools are not sorted by name".to_owned());
    }
    Ok(entries)
}
