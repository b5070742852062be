//! A tool of a mounted server built from the tool object its server lists, under the mount's
//! name (`<mount>__<tool>` on the wire, `mcp::<mount>::<tool>` in the catalog); and a registry
//! that serves such tools beside its own.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::source::{Forward, Mounted, Source};
use super::tool::{Serialised, Tool};
use super::{Conflict, Registry, RegistryError};
use crate::names::CanonicalName;
use crate::registration::Annotations;
use crate::schema::check::{ArgumentCheck, OutputCheck};

impl Tool {
    /// The tool `listed` (a tool object, as its server's `tools/list` gave it) of the server
    /// mounted as `mount`, whose calls `forward` carries, each within `timeout` and with
    /// `scopes`. `Err` says why it cannot be served: a name no client could call.
    pub(crate) fn from_mount(
        mount: &Arc<str>,
        listed: &Value,
        forward: Arc<dyn Forward>,
        timeout: Option<Duration>,
        scopes: &'static [&'static str],
    ) -> Result<Tool, String> {
        let name = listed["name"]
            .as_str()
            .ok_or_else(|| format!("a tool without a name: {listed}"))?;
        let canonical_name = CanonicalName::new(mount, name).map_err(|error| error.to_string())?;
        let wire_name = canonical_name
            .namespaced()
            .map_err(|error| error.to_string())?;
        let input_schema = match listed.get("inputSchema") {
            Some(schema @ Value::Object(_)) => schema.clone(),
            _ => json!({"type": "object"}),
        };
        let mut descriptor = Map::new();
        descriptor.insert("name".into(), json!(wire_name));
        // What the server said of its tool, but `execution`: its calls are forwarded whole,
        // never as tasks of this server.
        for key in [
            "title",
            "description",
            "outputSchema",
            "annotations",
            "icons",
            "_meta",
        ] {
            if let Some(value) = listed.get(key) {
                descriptor.insert(key.into(), value.clone());
            }
        }
        descriptor.insert("inputSchema".into(), input_schema.clone());
        let descriptor = Value::Object(descriptor);
        // The server checks its own arguments; a schema this one cannot enforce leaves that to
        // it, rather than refusing calls the server would take.
        let check = ArgumentCheck::new(&input_schema).or_else(|error| {
            tracing::warn!(
                mount = &**mount,
                tool = name,
                %error,
                "arguments are passed on unchecked: the server checks them"
            );
            ArgumentCheck::new(&json!({"type": "object"}))
        });
        let hint = |key: &str| listed["annotations"][key].as_bool();
        let mounted = Mounted {
            mount: Arc::clone(mount),
            name: name.to_owned(),
            title: listed["title"].as_str().map(str::to_owned),
            description: listed["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            annotations: Annotations {
                read_only: hint("readOnlyHint"),
                destructive: hint("destructiveHint"),
                idempotent: hint("idempotentHint"),
                open_world: hint("openWorldHint"),
            },
            timeout,
            scopes,
            forward,
        };
        Ok(Tool {
            source: Source::Mounted(Arc::new(mounted)),
            wire_name,
            canonical_name,
            structured: descriptor.get("outputSchema").is_some(),
            json: Serialised::new(serde_json::to_vec(&descriptor).expect("JSON serialises")),
            descriptor: OnceLock::new(),
            check: OnceLock::from(check.map_err(|error| error.to_string())),
            // The server answers for its results: they are passed on as they come.
            output_check: OutputCheck::new(None).expect("no schema, nothing to compile"),
            notes: Vec::new(),
            mirrored: OnceLock::new(),
        })
    }
}

/// A prompt of a mounted server, under the mount's name (`<mount>__<prompt>`), listed as its
/// server describes it.
pub(crate) struct MountedPrompt {
    /// Its name here.
    pub(crate) wire: String,
    /// Its name on its server.
    pub(crate) name: String,
    /// What `prompts/list` says of it here: its server's description, under its name here.
    pub(crate) descriptor: Value,
    /// The names of the arguments it takes.
    pub(crate) arguments: Vec<String>,
    /// Whether its server completes arguments (its `completions` capability).
    pub(crate) completes: bool,
    /// Gets it from its server.
    pub(crate) forward: Arc<dyn Forward>,
}

impl MountedPrompt {
    /// The prompt `listed` (a prompt object, as its server's `prompts/list` gave it) of the
    /// server mounted as `mount`, which `forward` gets it from. `Err` says why it cannot be
    /// served: a name no client could ask for.
    pub(crate) fn new(
        mount: &str,
        listed: &Value,
        completes: bool,
        forward: Arc<dyn Forward>,
    ) -> Result<MountedPrompt, String> {
        let name = listed["name"]
            .as_str()
            .ok_or_else(|| format!("a prompt without a name: {listed}"))?;
        let wire = CanonicalName::new(mount, name)
            .and_then(|canonical| canonical.namespaced())
            .map_err(|error| error.to_string())?;
        let mut descriptor = listed.clone();
        descriptor["name"] = json!(wire);
        let arguments = listed["arguments"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|argument| argument["name"].as_str().map(str::to_owned))
            .collect();
        Ok(MountedPrompt {
            wire,
            name: name.to_owned(),
            descriptor,
            arguments,
            completes,
            forward,
        })
    }
}

impl Registry {
    /// The same registry, serving the mounted `tools` and `prompts` too, each sorted by wire
    /// name, and refusing the `held` tools (by wire name) with why; a wire name taken twice
    /// stops it, naming both.
    pub(crate) fn with_mounted(
        self,
        tools: Vec<Tool>,
        held: Vec<(String, String)>,
        mut prompts: Vec<MountedPrompt>,
    ) -> Result<Registry, RegistryError> {
        let mut all = self.tools;
        all.extend(tools);
        let views: Vec<_> = self.resources.view_registrations().collect();
        let mut registry = Registry::assemble(all, views, Vec::new())?;
        prompts.sort_by(|a, b| a.wire.cmp(&b.wire));
        let mut conflicts = Vec::new();
        for pair in prompts.windows(2) {
            if pair[0].wire == pair[1].wire {
                conflicts.push(Conflict::MountedPromptNameTaken {
                    name: pair[0].wire.clone(),
                });
            }
        }
        for prompt in &prompts {
            if self.prompts.iter().any(|own| own.name == prompt.wire) {
                conflicts.push(Conflict::MountedPromptNameTaken {
                    name: prompt.wire.clone(),
                });
            }
        }
        if !conflicts.is_empty() {
            return Err(RegistryError::new(conflicts));
        }
        registry.prompts = self.prompts;
        registry.mounted_prompts = prompts;
        registry.held = self.held.into_iter().chain(held).collect();
        registry.with_resources(self.resources.functions().collect::<Vec<_>>())
    }
}
