//! A tool of a mounted server built from the tool object its server lists, under the mount's
//! name (`<mount>__<tool>` on the wire, `mcp::<mount>::<tool>` in the catalog); and a registry
//! that serves such tools beside its own.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::source::{Forward, Mounted, Source};
use super::tool::{Serialised, Tool};
use super::{Registry, RegistryError};
use crate::names::CanonicalName;
use crate::registration::Annotations;
use crate::schema::check::{ArgumentCheck, OutputCheck};

impl Tool {
    /// The tool `listed` (a tool object, as its server's `tools/list` gave it) of the server
    /// mounted as `mount`, whose calls `forward` carries, each within `timeout`. `Err` says why
    /// it cannot be served: a name no client could call.
    pub(crate) fn from_mount(
        mount: &Arc<str>,
        listed: &Value,
        forward: Arc<dyn Forward>,
        timeout: Option<Duration>,
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

impl Registry {
    /// The same registry, serving the mounted `tools` too, all sorted by wire name, and
    /// refusing the `held` ones (by wire name) with why; a wire name taken twice stops it,
    /// naming both.
    pub(crate) fn with_mounted(
        self,
        tools: Vec<Tool>,
        held: Vec<(String, String)>,
    ) -> Result<Registry, RegistryError> {
        let mut all = self.tools;
        all.extend(tools);
        let views: Vec<_> = self.resources.view_registrations().collect();
        let mut registry = Registry::assemble(all, views, Vec::new())?;
        registry.prompts = self.prompts;
        registry.held = self.held.into_iter().chain(held).collect();
        registry.with_resources(self.resources.functions().collect::<Vec<_>>())
    }
}
