//! Reading a manifest made at build time, without deriving or parsing its schemas.
//!
//! [`build::emit`](crate::build::emit) writes the manifest's JSON followed by an index of its
//! tools ([`indexed`]): where each tool's JSON lies, its name, and what start-up compares with
//! the linked tool ([`head`]). Start-up reads that index, and release builds never parse the
//! JSON. Bytes without an index, a manifest's JSON alone, are read with one pass of the parser
//! that skips the schemas.
//!
//! The same build writes the index and the JSON together. Start-up checks that the index fits the
//! JSON's layout (each tool's object where the index puts it, `,` between them, names in order),
//! not that each entry says what the JSON says; debug builds also parse each tool's JSON, derive
//! every tool and compare the two whole.

use std::borrow::Cow;
use std::ops::Range;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::Registry;
#[cfg(debug_assertions)]
use super::{Conflict, Tool};
use crate::tool::{Annotations, ToolRegistration};

/// What start-up needs of one tool of an embedded manifest.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) name: Cow<'static, str>,
    /// Where the tool's JSON lies in the manifest's bytes.
    pub(crate) range: Range<usize>,
    /// Whether it has an `outputSchema`.
    pub(crate) structured: bool,
    /// Its title, description, annotations and `_meta`, as [`head`] encodes them: a linked tool
    /// is the one described when its [`registration_head`] is the same.
    pub(crate) head: Cow<'static, [u8]>,
}

/// How a manifest's bytes begin and end: [`Manifest`](crate::Manifest)'s compact form.
const HEAD: &[u8] = br#"{"tools":["#;
const TAIL: &[u8] = b"]}";

/// How embedded bytes with an index end. Before it: the JSON's length and the number of tools,
/// each a little-endian `u32`. JSON ends with `}`, so the JSON alone never ends so.
const MAGIC: &[u8] = b"\0toolwright-index-1";

/// Says what start-up compares of a tool, in one encoding for both sides: the index and the
/// linked registration. Strings are their length (`u32`, little-endian) and UTF-8; an absent
/// title or `_meta` is a 0 byte, a present one a 1 byte and its text; each hint is 0 (absent), 1
/// (false) or 2 (true).
pub(crate) fn head(
    out: &mut Vec<u8>,
    title: Option<&str>,
    description: &str,
    annotations: &Annotations,
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
    match meta {
        None => out.push(0),
        Some(meta) => {
            out.push(1);
            let canonical = serde_json::to_vec(&sorted(meta)).expect("a JSON value serialises");
            put(out, &canonical);
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
pub(crate) fn registration_head(out: &mut Vec<u8>, registration: &ToolRegistration) {
    head(
        out,
        registration.title,
        registration.description,
        &registration.annotations,
        super::meta(registration).as_ref(),
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

/// The bytes a binary embeds: the registry's manifest, then the index of its tools.
pub(crate) fn indexed(registry: &Registry) -> Vec<u8> {
    let manifest = registry.manifest();
    let json = manifest.as_bytes();
    let mut out = Vec::with_capacity(json.len() + registry.len() * 256);
    out.extend_from_slice(json);
    let mut scratch = Vec::new();
    for (tool, range) in registry.tools().iter().zip(manifest.tool_ranges()) {
        put_u32(&mut out, range.start);
        put_u32(&mut out, range.end);
        out.push(u8::from(tool.structured));
        put(&mut out, tool.wire_name().as_bytes());
        scratch.clear();
        registration_head(&mut scratch, tool.registration);
        put(&mut out, &scratch);
    }
    put_u32(&mut out, json.len());
    put_u32(&mut out, registry.len());
    out.extend_from_slice(MAGIC);
    out
}

/// The manifest's JSON in embedded bytes, and each of its tools in order (by name), or why they
/// cannot be read.
pub(crate) fn open(bytes: &'static [u8]) -> Result<(&'static [u8], Vec<Entry>), String> {
    match bytes.strip_suffix(MAGIC) {
        Some(rest) => from_index(rest).ok_or_else(|| DAMAGED.to_owned()),
        // Cut short: a manifest's JSON, but neither its end nor an index's.
        None if bytes.starts_with(HEAD) && !bytes.ends_with(TAIL) => Err(DAMAGED.to_owned()),
        None => read(bytes).map(|entries| (bytes, entries)),
    }
}

/// Why embedded bytes with an index, or cut short, cannot be read.
const DAMAGED: &str = "it is cut short, or its index does not fit its JSON; build the crate again";

/// The JSON and its entries, from the bytes before [`MAGIC`]; `None` when the index does not
/// describe the JSON before it (byte ranges out of place, names out of order).
fn from_index(bytes: &'static [u8]) -> Option<(&'static [u8], Vec<Entry>)> {
    let (rest, mut footer) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    let json_len = take_u32(&mut footer)?;
    let count = take_u32(&mut footer)?;
    let (json, mut index) = rest.split_at_checked(json_len)?;
    let tools = json.strip_prefix(HEAD)?.strip_suffix(TAIL)?;
    // The smallest entry: two offsets, the flag, and two empty strings.
    let mut entries: Vec<Entry> = Vec::with_capacity(count.min(index.len() / (4 + 4 + 1 + 4 + 4)));
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
        entries.push(Entry {
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
fn read(manifest: &[u8]) -> Result<Vec<Entry>, String> {
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
            fields.meta.as_ref(),
        );
        entries.push(Entry {
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

/// Derives every linked tool's schemas, as a server without an embedded manifest does, and
/// names each tool whose JSON differs from the embedded one's: a tools crate built with other
/// features for the build script, for one. Debug builds only: it is the work embedding saves.
#[cfg(debug_assertions)]
pub(crate) fn compare_derived(tools: &[Tool], namespaced: bool) -> Vec<Conflict> {
    let derived = match Registry::collect().and_then(|registry| match namespaced {
        true => registry.namespaced(),
        false => Ok(registry),
    }) {
        Ok(derived) => derived,
        Err(err) => return err.conflicts,
    };
    tools
        .iter()
        .filter(|tool| {
            derived
                .get(tool.wire_name())
                .is_none_or(|d| d.json() != tool.json())
        })
        .map(|tool| Conflict::EmbeddedMismatch {
            tool: tool.wire_name().to_owned(),
            problem: format!(
                "its schemas differ from the embedded manifest's (debug builds derive them to \
                 check); {}",
                super::REBUILT_OTHERWISE
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::apps::{ToolUi, Visibility};

    fn registration(
        name: &'static str,
        title: Option<&'static str>,
        description: &'static str,
        annotations: Annotations,
        ui: ToolUi,
        structured: bool,
    ) -> &'static ToolRegistration {
        Box::leak(Box::new(ToolRegistration {
            title,
            annotations,
            ui,
            output_schema: if structured {
                |_| Some(schemars::json_schema!({"type": "object"}))
            } else {
                |_| None
            },
            ..ToolRegistration::for_tests(name, description)
        }))
    }

    /// Three tools that differ in every member an entry's head holds.
    fn registry() -> Registry {
        Registry::from_registrations([
            registration(
                "sum",
                Some("Sum"),
                "Add \"two\" numbers: a + b.\n",
                Annotations {
                    read_only: Some(true),
                    destructive: Some(false),
                    idempotent: None,
                    open_world: Some(false),
                },
                ToolUi::NONE,
                true,
            ),
            registration(
                "hidden",
                None,
                "Seen by views only, café.",
                Annotations::default(),
                ToolUi {
                    resource_uri: None,
                    visibility: Some(Visibility::APP_ONLY),
                },
                false,
            ),
            registration(
                "plain",
                None,
                "",
                Annotations::default(),
                ToolUi::NONE,
                false,
            ),
        ])
        .expect("valid tools")
    }

    fn leak(bytes: Vec<u8>) -> &'static [u8] {
        Box::leak(bytes.into_boxed_slice())
    }

    #[test]
    fn the_index_says_what_a_parser_reads_in_the_json() {
        let registry = registry();
        let embedded = leak(registry.embedded_bytes());
        let (json, indexed) = open(embedded).unwrap();
        assert_eq!(json, registry.manifest().as_bytes());
        let parsed = open(leak(json.to_vec())).unwrap().1;
        assert_eq!(indexed, parsed);
        let names: Vec<&str> = indexed.iter().map(|entry| &*entry.name).collect();
        assert_eq!(names, ["hidden", "plain", "sum"]);
        assert_eq!(
            indexed.iter().map(|e| e.structured).collect::<Vec<_>>(),
            [false, false, true]
        );
        for (entry, tool) in indexed.iter().zip(registry.tools()) {
            assert_eq!(&json[entry.range.clone()], tool.json());
            let mut linked = Vec::new();
            registration_head(&mut linked, tool.registration);
            assert_eq!(*entry.head, *linked, "{}", tool.name());
        }
        // Each member counts: another description is another head.
        let mut other = Vec::new();
        head(
            &mut other,
            Some("Sum"),
            "Add two numbers.",
            &registry.tools()[2].registration.annotations,
            None,
        );
        assert_ne!(*indexed[2].head, *other);
    }

    /// One entry of an index, as the test writes it: start, end, flag byte, name, head.
    type Raw = (u32, u32, u8, Vec<u8>, Vec<u8>);

    /// Embedded bytes for `json` with these entries, `count` said in the footer: the layout
    /// written out again, independently of [`indexed`].
    fn encode(json: &[u8], entries: &[Raw], count: u32) -> Vec<u8> {
        let mut out = json.to_vec();
        for (start, end, flag, name, head) in entries {
            out.extend_from_slice(&start.to_le_bytes());
            out.extend_from_slice(&end.to_le_bytes());
            out.push(*flag);
            for bytes in [name, head] {
                out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                out.extend_from_slice(bytes);
            }
        }
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(MAGIC);
        out
    }

    /// The registry's manifest and its entries, as the test writes them.
    fn raw() -> (Vec<u8>, Vec<Raw>) {
        let registry = registry();
        let (json, entries) = open(leak(registry.embedded_bytes())).unwrap();
        let raw = entries
            .into_iter()
            .map(|e| {
                let start = u32::try_from(e.range.start).unwrap();
                let end = u32::try_from(e.range.end).unwrap();
                let name = e.name.as_bytes().to_vec();
                (
                    start,
                    end,
                    u8::from(e.structured),
                    name,
                    e.head.into_owned(),
                )
            })
            .collect();
        (json.to_vec(), raw)
    }

    #[test]
    fn the_index_is_laid_out_as_documented() {
        let (json, raw) = raw();
        assert_eq!(encode(&json, &raw, 3), registry().embedded_bytes());
        // No tools at all is a manifest too.
        let empty = encode(br#"{"tools":[]}"#, &[], 0);
        let (json, entries) = open(leak(empty)).unwrap();
        assert_eq!((json, entries.len()), (&br#"{"tools":[]}"#[..], 0));
    }

    #[test]
    fn an_index_that_does_not_fit_its_json_is_refused() {
        let (json, raw) = raw();
        let refused = |what: &str, json: &[u8], entries: &[Raw], count: usize| {
            let bytes = encode(json, entries, u32::try_from(count).unwrap());
            assert_eq!(open(leak(bytes)).unwrap_err(), DAMAGED, "{what}");
        };
        let with = |change: &dyn Fn(&mut Vec<Raw>)| {
            let mut entries = raw.clone();
            change(&mut entries);
            entries
        };
        refused("names out of order", &json, &with(&|e| e.swap(0, 1)), 3);
        refused(
            "a name twice",
            &json,
            &with(&|e| e[1].3 = e[0].3.clone()),
            3,
        );
        refused("a flag neither 0 nor 1", &json, &with(&|e| e[0].2 = 2), 3);
        refused(
            "a name that is not UTF-8",
            &json,
            &with(&|e| e[0].3 = vec![0xff]),
            3,
        );
        refused("a tool starting late", &json, &with(&|e| e[0].0 += 1), 3);
        refused("a tool ending early", &json, &with(&|e| e[1].1 -= 1), 3);
        refused(
            "the last tool short of `]}`",
            &json,
            &with(&|e| e[2].1 -= 1),
            3,
        );
        refused("a tool left out", &json, &with(&|e| drop(e.pop())), 2);
        refused("one tool more than listed", &json, &raw, 4);
        refused("one tool fewer than listed", &json, &raw, 2);
        refused(
            "a range past the JSON",
            &json,
            &with(&|e| e[2].1 = u32::MAX),
            3,
        );
        // The JSON between two tools is not `,`.
        let mut spaced = json.clone();
        spaced[usize::try_from(raw[0].1).unwrap()] = b' ';
        refused("no `,` between tools", &spaced, &raw, 3);
        // Bytes left over after the last entry.
        let mut bytes = encode(&json, &raw, 3);
        let footer = bytes.len() - MAGIC.len() - 8;
        bytes.insert(footer, 0);
        assert_eq!(open(leak(bytes)).unwrap_err(), DAMAGED, "bytes left over");
    }

    #[test]
    fn cut_or_changed_bytes_are_refused_or_read_never_panic() {
        let embedded = registry().embedded_bytes();
        let json_len = registry().manifest().as_bytes().len();
        for len in 0..embedded.len() {
            let opened = open(leak(embedded[..len].to_vec()));
            // Cut at the end of the JSON, the bytes are the JSON alone.
            assert_eq!(opened.is_ok(), len == json_len, "cut to {len} bytes");
        }
        assert_eq!(
            open(leak(embedded[..embedded.len() - 3].to_vec())).unwrap_err(),
            DAMAGED
        );
        for at in 0..embedded.len() {
            for byte in [0x00, 0x01, 0x2c, 0x7b, 0x7d, 0xff] {
                let mut bytes = embedded.clone();
                bytes[at] = byte;
                let _ = open(leak(bytes));
            }
        }
    }

    #[test]
    fn each_member_of_a_head_counts() {
        let heads = [
            (None, "A.", Annotations::default(), None),
            (Some(""), "A.", Annotations::default(), None),
            (None, "A!", Annotations::default(), None),
            (
                None,
                "A.",
                Annotations {
                    read_only: Some(false),
                    ..Annotations::default()
                },
                None,
            ),
            (
                None,
                "A.",
                Annotations {
                    open_world: Some(true),
                    ..Annotations::default()
                },
                None,
            ),
            (None, "A.", Annotations::default(), Some(Value::Null)),
            (None, "A.", Annotations::default(), Some(json!({}))),
        ]
        .map(|(title, description, annotations, meta)| {
            let mut out = Vec::new();
            head(&mut out, title, description, &annotations, meta.as_ref());
            out
        });
        for (i, a) in heads.iter().enumerate() {
            for b in &heads[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn tools_of_the_index_that_are_not_linked_are_named() {
        // This test binary links no `#[mcp_tool]`.
        let embedded = leak(registry().embedded_bytes());
        let err = Registry::embedded(embedded, false).unwrap_err();
        let named: Vec<String> = err.conflicts().iter().map(ToString::to_string).collect();
        let problem = "is in the embedded manifest but not linked into the binary";
        assert_eq!(named.len(), 3, "{named:#?}");
        for (text, tool) in named.iter().zip(["hidden", "plain", "sum"]) {
            assert!(text.contains(tool) && text.contains(problem), "{text}");
        }
    }

    #[test]
    fn a_tool_whose_json_does_not_read_fails_its_calls_not_the_server() {
        // What a release build holds for a tool of a hand-damaged manifest: its JSON unread,
        // its check not compiled yet.
        let registration = registration(
            "broken",
            None,
            "",
            Annotations::default(),
            ToolUi::NONE,
            false,
        );
        let tool = super::super::Tool {
            registration,
            wire_name: "broken".to_owned(),
            canonical_name: crate::CanonicalName::new("test", "broken").unwrap(),
            json: super::super::Json::new(br#"{"name";"broken"}"#.to_vec()),
            structured: false,
            descriptor: std::sync::OnceLock::new(),
            check: std::sync::OnceLock::new(),
            #[cfg(debug_assertions)]
            output_check: None,
            unstructured_root: None,
        };
        let error = tool.check_arguments(&json!({})).unwrap_err();
        assert!(
            error.starts_with(
                "the tool's input schema cannot be compiled, so no call can be checked: the \
                 tool's JSON does not read: "
            ),
            "{error}"
        );
    }

    #[test]
    fn the_json_alone_reads_as_its_tools_in_order() {
        let manifest = br#"{"tools":[{"description":"A.","name":"a","outputSchema":{}},{"name":"b","title":"B"}]}"#;
        let (json, entries) = open(manifest).unwrap();
        assert_eq!(json, manifest);
        assert_eq!(entries.len(), 2);
        assert_eq!(
            &manifest[entries[1].range.clone()],
            br#"{"name":"b","title":"B"}"#
        );
        assert!(entries[0].structured && !entries[1].structured);
        let mut b = Vec::new();
        head(&mut b, Some("B"), "", &Annotations::default(), None);
        assert_eq!(*entries[1].head, *b);
        let unsorted = br#"{"tools":[{"name":"b"},{"name":"a"}]}"#;
        assert_eq!(
            open(unsorted).unwrap_err(),
            "its tools are not sorted by name"
        );
    }
}
