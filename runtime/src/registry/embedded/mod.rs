//! A registry served from a manifest made at build time ([`crate::build`]): each linked tool is
//! matched with its entry in the embedded manifest, and its JSON is the manifest's own bytes, so
//! start-up derives no schema and parses no JSON.
//!
//! Start-up compares what it can without parsing: each linked tool must be in the manifest under
//! its wire name with the same title, description, annotations, `execution` and `_meta`, and each
//! tool of the manifest must be linked. Debug builds also parse each tool's JSON, derive every
//! tool and compare the two whole.

mod index;
#[cfg(test)]
mod tests;

use std::cmp::Ordering;
use std::sync::OnceLock;

use bytes::Bytes;

use super::conflict::{Conflict, REBUILT_OTHERWISE, RegistryError};
use super::tool::{Serialised, Source, Tool};
use super::{Registry, Resources};
use crate::manifest::Manifest;
use crate::names::CanonicalName;
use crate::registration::{
    PromptRegistration, ResourceRegistration, ToolRegistration, UiResourceRegistration,
};
use crate::schema::check::{ArgumentCheck, OutputCheck};
use index::{IndexEntry, registration_head};

pub(super) use index::indexed;

impl Registry {
    /// The tools linked into the binary, described by `manifest`, the bytes
    /// [`embedded_manifest!`](crate::build::embedded_manifest) includes, rather than derived now.
    pub(crate) fn embedded(
        manifest: &'static [u8],
        namespaced: bool,
    ) -> Result<Registry, RegistryError> {
        let mismatch = |tool: &str, problem: String| Conflict::EmbeddedMismatch {
            tool: tool.to_owned(),
            problem,
        };
        let (json, entries) = index::open(manifest).map_err(|error| {
            RegistryError::new(vec![mismatch(
                "*",
                format!(
                    "the embedded manifest cannot be read: {error}; pass \
                     `toolwright::build::embedded_manifest!()`, the bytes toolwright::build::emit!() \
                     wrote"
                ),
            )])
        })?;
        // Served from the binary's own pages, as they are: no copy on the heap.
        let shared = Bytes::from_static(json);
        let mut conflicts = Vec::new();
        let mut linked: Vec<(String, &'static ToolRegistration, CanonicalName)> = Vec::new();
        for registration in inventory::iter::<ToolRegistration> {
            let canonical = CanonicalName::registered(registration.provider, registration.name);
            let wire = if namespaced {
                match canonical.namespaced() {
                    Ok(name) => name,
                    Err(_) => {
                        conflicts.push(mismatch(
                            registration.name,
                            "its namespaced name is too long".to_owned(),
                        ));
                        continue;
                    }
                }
            } else {
                registration.name.to_owned()
            };
            linked.push((wire, registration, canonical));
        }
        linked.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut tools = Vec::with_capacity(entries.len());
        // Tools of the manifest the binary lacks: one conflict, said first.
        let mut not_linked = Vec::new();
        let mut entries = entries.into_iter().peekable();
        let mut linked = linked.into_iter().peekable();
        // The linked tool's `index::head`, compared with the entry's.
        let mut head = Vec::new();
        loop {
            let order = match (entries.peek(), linked.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some(entry), Some((wire, ..))) => entry.name.as_bytes().cmp(wire.as_bytes()),
            };
            match order {
                Ordering::Less => {
                    let entry = entries.next().expect("peeked");
                    not_linked.push(entry.name.into_owned());
                }
                Ordering::Greater => {
                    let (wire, registration, _) = linked.next().expect("peeked");
                    conflicts.push(mismatch(
                        &wire,
                        format!(
                            "it is linked into the binary (at {}) but not in the embedded \
                             manifest; {REBUILT_OTHERWISE}",
                            registration.location
                        ),
                    ));
                }
                Ordering::Equal => {
                    let entry = entries.next().expect("peeked");
                    let (wire, registration, canonical_name) = linked.next().expect("peeked");
                    head.clear();
                    registration_head(&mut head, registration);
                    if *entry.head != *head {
                        conflicts.push(mismatch(
                            &wire,
                            format!(
                                "its title, description, annotations, `execution` or `_meta` \
                                 differ from the embedded manifest's; {REBUILT_OTHERWISE}"
                            ),
                        ));
                        continue;
                    }
                    match Tool::embedded(registration, wire, canonical_name, &shared, entry) {
                        Ok(tool) => tools.push(tool),
                        Err(conflict) => conflicts.push(conflict),
                    }
                }
            }
        }
        if !not_linked.is_empty() {
            conflicts.insert(0, Conflict::NotLinked { tools: not_linked });
        }
        if cfg!(debug_assertions) && conflicts.is_empty() {
            conflicts.extend(compare_derived(&tools, namespaced));
        }
        let resources = Resources::new(
            inventory::iter::<UiResourceRegistration>,
            [],
            &tools,
            &mut conflicts,
        );
        if !conflicts.is_empty() {
            return Err(RegistryError::new(conflicts));
        }
        // The tools are in the manifest's order, and their JSON lies in its bytes already.
        let ranges = tools
            .iter()
            .map(|tool| (tool.wire_name.clone(), tool.json.range.clone()))
            .collect();
        let manifest = Manifest::from_shared(shared, ranges, Vec::new());
        Registry {
            tools,
            manifest,
            resources,
            prompts: Vec::new(),
            held: Default::default(),
            #[cfg(feature = "gateway")]
            mounted_prompts: Vec::new(),
            #[cfg(feature = "gateway")]
            mounted_resources: Vec::new(),
        }
        .with_prompts(inventory::iter::<PromptRegistration>)?
        .with_resources(inventory::iter::<ResourceRegistration>)
    }
}

impl Tool {
    /// A tool whose JSON is a manifest's, made at build time: `entry` says where it lies.
    /// Release builds trust the JSON the build wrote; debug builds read it first, and check
    /// arguments and results from the start, as with derived schemas.
    fn embedded(
        registration: &'static ToolRegistration,
        wire_name: String,
        canonical_name: CanonicalName,
        manifest: &Bytes,
        entry: IndexEntry,
    ) -> Result<Tool, Conflict> {
        let mut tool = Tool {
            source: Source::Registered(registration),
            wire_name,
            canonical_name,
            json: Serialised {
                bytes: manifest.clone(),
                range: entry.range,
            },
            structured: entry.structured,
            descriptor: OnceLock::new(),
            check: OnceLock::new(),
            output_check: OutputCheck::new(None).expect("no schema, nothing to compile"),
            notes: Vec::new(),
            mirrored: OnceLock::new(),
        };
        if !cfg!(debug_assertions) {
            return Ok(tool);
        }
        if let Err(error) = serde_json::from_slice::<serde_json::Value>(tool.json()) {
            return Err(Conflict::EmbeddedMismatch {
                tool: tool.wire_name,
                problem: format!(
                    "its JSON in the embedded manifest does not read ({error}); build the crate \
                     again"
                ),
            });
        }
        let problem = |error: String| Conflict::InvalidSchema {
            tool: tool.wire_name.clone(),
            error,
            location: registration.location,
        };
        let check = ArgumentCheck::new(tool.input_schema()).map_err(|error| {
            Conflict::unchecked_input(&tool.wire_name, registration.location, error)
        })?;
        tool.output_check = OutputCheck::new(tool.output_schema()).map_err(problem)?;
        let _ = tool.check.set(Ok(check));
        Ok(tool)
    }
}

/// Derives every linked tool's schemas, as a server without an embedded manifest does, and
/// names each tool whose JSON differs from the embedded one's: a tools crate built with other
/// features for the build script, for one. Debug builds only: it is the work embedding saves.
fn compare_derived(tools: &[Tool], namespaced: bool) -> Vec<Conflict> {
    let derived = match Registry::collect().and_then(|registry| registry.namespaced_if(namespaced))
    {
        Ok(derived) => derived,
        Err(err) => return err.into_conflicts(),
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
                 check); {REBUILT_OTHERWISE}"
            ),
        })
        .collect()
}
