//! Reading a manifest made at build time, without deriving or parsing its schemas.

use std::borrow::Cow;
use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

#[cfg(debug_assertions)]
use super::{Conflict, Registry, Tool};

/// What start-up needs of one tool of an embedded manifest.
pub(crate) struct Head {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    /// Where the tool's JSON lies in the manifest's bytes.
    pub(crate) range: Range<usize>,
    /// Whether it has an `outputSchema`.
    pub(crate) structured: bool,
}

#[derive(Deserialize)]
struct Document<'a> {
    #[serde(borrow)]
    tools: Vec<&'a RawValue>,
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
    #[serde(rename = "outputSchema", borrow, default)]
    output_schema: Option<&'a RawValue>,
}

/// Each tool of the manifest, in its order (by name), or why it cannot be read.
pub(crate) fn read(manifest: &[u8]) -> Result<Vec<Head>, String> {
    let document: Document<'_> = serde_json::from_slice(manifest).map_err(|e| e.to_string())?;
    let start = manifest.as_ptr() as usize;
    let mut heads = Vec::with_capacity(document.tools.len());
    for raw in document.tools {
        let json = raw.get();
        // The raw value borrows from `manifest`: its address says where it lies.
        let offset = json.as_ptr() as usize - start;
        let fields: Fields<'_> = serde_json::from_str(json).map_err(|e| e.to_string())?;
        heads.push(Head {
            name: fields.name.into_owned(),
            title: fields.title.map(Cow::into_owned),
            description: fields.description.into_owned(),
            range: offset..offset + json.len(),
            structured: fields.output_schema.is_some(),
        });
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
            problem: "its schemas or annotations differ from the embedded manifest's (debug \
                      builds derive them to check)"
                .to_owned(),
        })
        .collect()
}
