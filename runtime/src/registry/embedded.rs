//! Reading a manifest made at build time, without deriving or parsing its schemas.

use std::borrow::Cow;
use std::ops::Range;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

#[cfg(debug_assertions)]
use super::{Conflict, Registry, Tool};
use crate::tool::Annotations;

/// What start-up needs of one tool of an embedded manifest.
#[derive(Debug)]
pub(crate) struct Head {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    /// Where the tool's JSON lies in the manifest's bytes.
    pub(crate) range: Range<usize>,
    /// Whether it has an `outputSchema`.
    pub(crate) structured: bool,
    /// Its behaviour hints.
    pub(crate) annotations: Annotations,
    /// Its `_meta` as written, `Some(Value::Null)` for `null`: the binary's must be the same,
    /// since the manifest's bytes are what clients get.
    pub(crate) meta: Option<Value>,
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

/// How a manifest's bytes begin and end: [`Manifest`](crate::Manifest)'s compact form.
const HEAD: &[u8] = br#"{"tools":["#;
const TAIL: &[u8] = b"]}";

/// Each tool of the manifest, in its order (by name), or why it cannot be read.
pub(crate) fn read(manifest: &[u8]) -> Result<Vec<Head>, String> {
    let tools = manifest
        .strip_prefix(HEAD)
        .and_then(|rest| rest.strip_suffix(TAIL))
        .ok_or("it is not a manifest's compact JSON, `{\"tools\":[...]}`")?;
    let mut heads = Vec::new();
    let mut at = 0;
    while at < tools.len() {
        if !heads.is_empty() {
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
        heads.push(Head {
            name: fields.name.into_owned(),
            title: fields.title.map(Cow::into_owned),
            description: fields.description.into_owned(),
            range: at + HEAD.len()..end + HEAD.len(),
            structured: fields.output_schema.is_some(),
            annotations: Annotations {
                read_only: fields.annotations.read_only_hint,
                destructive: fields.annotations.destructive_hint,
                idempotent: fields.annotations.idempotent_hint,
                open_world: fields.annotations.open_world_hint,
            },
            meta: fields.meta,
        });
        at = end;
    }
    if !heads
        .windows(2)
        .all(|pair| pair[0].name.as_bytes() < pair[1].name.as_bytes())
    {
        return Err("its tools are not sorted by name".to_owned());
    }
    Ok(heads)
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
    use super::*;

    #[test]
    fn a_manifest_reads_as_its_tools_in_order() {
        let manifest = br#"{"tools":[{"description":"A.","name":"a","outputSchema":{}},{"name":"b","title":"B"}]}"#;
        let heads = read(manifest).unwrap();
        assert_eq!(heads.len(), 2);
        assert_eq!(
            &manifest[heads[1].range.clone()],
            br#"{"name":"b","title":"B"}"#
        );
        assert!(heads[0].structured && !heads[1].structured);
        assert_eq!(heads[1].title.as_deref(), Some("B"));
        let unsorted = br#"{"tools":[{"name":"b"},{"name":"a"}]}"#;
        assert_eq!(
            read(unsorted).unwrap_err(),
            "its tools are not sorted by name"
        );
    }
}
