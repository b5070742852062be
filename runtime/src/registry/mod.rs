//! Every tool linked into the binary, checked and sorted by name: what a server serves and a
//! build script guards.
//!
//! A [`Registry`] is made once, at start: [`Registry::collect`] gathers every tool registered
//! with `#[mcp_tool]` and every view declared with [`ui_resource!`](crate::apps::ui_resource), derives
//! their schemas, checks them, and serialises the [`Manifest`] once. What stops it is a
//! [`Conflict`]; every conflict is reported at once in a [`RegistryError`].

mod conflict;
mod derived;
mod embedded;
#[cfg(feature = "gateway")]
mod mounted;
mod prompts;
mod resources;
mod source;
mod tool;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
#[cfg(feature = "gateway")]
use std::sync::Arc;

use serde_json::Value;

use crate::apps::UiResource;
use crate::manifest::Manifest;
use crate::names::NameError;
use crate::registration::{
    PromptRegistration, ResourceRegistration, ToolRegistration, UiResourceRegistration,
};
use crate::search::SearchIndex;
pub(crate) use resources::{Fixed, Found, Resources, Template};
use tool::Serialised;

pub use crate::registration::{Annotations, Location};
pub use conflict::{Conflict, RegistryError};
#[cfg(feature = "gateway")]
pub(crate) use mounted::{
    MountedPrompt, MountedResources, Mounts, PromptLists, ResourceLists, mounted_uri,
    mounted_wire_name, upstream_uri,
};
#[cfg(feature = "gateway")]
pub(crate) use source::Forward;
pub(crate) use tool::Runs;
pub use tool::{Mirrored, Origin, Tool};

/// What a resource URI here names ([`Registry::resolve_resource`]).
pub(crate) enum Resolved<'a> {
    /// One of the server's own resources or templates.
    Own(Found<'a>),
    /// A mounted server's resource: its server, and the URI on it.
    #[cfg(feature = "gateway")]
    Mounted(&'a MountedResources, String),
}

/// What to do about a registry without tools: usually a crate of tools the linker dropped.
pub(crate) const NOT_LINKED: &str = "no MCP tool is registered in this binary. The linker keeps \
    a crate of tools only when something refers to it: name each one in the server, as in \
    `toolwright::server!(notes_tools)`, or refer to it with `use notes_tools as _;`";

/// How many tools it takes for start-up to derive their schemas on several threads.
const PARALLEL_FROM: usize = 64;

/// The tools a server serves: every registration, with its schemas derived and checked, sorted
/// by name in byte order.
pub struct Registry {
    tools: Vec<Tool>,
    manifest: Manifest,
    /// The MCP Apps views and the resources of `#[mcp_resource]`.
    resources: Resources,
    /// The prompts, sorted by name.
    prompts: Vec<&'static PromptRegistration>,
    /// Tools of mounted servers that are not served, by wire name, with why: a change since
    /// they were approved, say.
    held: BTreeMap<String, String>,
    /// The prompts of mounted servers, by mount name.
    #[cfg(feature = "gateway")]
    mounted_prompts: Vec<Arc<PromptLists>>,
    /// The resources of mounted servers, by mount name.
    #[cfg(feature = "gateway")]
    mounted_resources: Vec<MountedResources>,
}

impl Registry {
    /// Every tool registered with `#[mcp_tool]` in the binary, every prompt registered with
    /// `#[mcp_prompt]`, every resource registered with `#[mcp_resource]`, and every MCP Apps
    /// view declared with [`ui_resource!`](crate::apps::ui_resource).
    pub fn collect() -> Result<Registry, RegistryError> {
        Registry::collect_where(|_| true)
    }

    /// The tools linked into the binary whose names `keep` accepts, and every prompt, resource
    /// and view; the other tools' schemas are not derived. For a server that serves part of what it links (by
    /// configuration, by licence), or a benchmark.
    ///
    /// ```no_run
    /// use toolwright::registry::Registry;
    ///
    /// let read_only = Registry::collect_where(|name| name.starts_with("get_"))?;
    /// # Ok::<(), toolwright::registry::RegistryError>(())
    /// ```
    pub fn collect_where(mut keep: impl FnMut(&str) -> bool) -> Result<Registry, RegistryError> {
        Registry::from_parts(
            inventory::iter::<ToolRegistration>
                .into_iter()
                .filter(|r| keep(r.name)),
            inventory::iter::<UiResourceRegistration>,
        )?
        .with_prompts(inventory::iter::<PromptRegistration>)?
        .with_resources(inventory::iter::<ResourceRegistration>)
    }

    /// The same registry, serving these prompts too.
    #[doc(hidden)]
    pub fn with_prompts(
        mut self,
        prompts: impl IntoIterator<Item = &'static PromptRegistration>,
    ) -> Result<Registry, RegistryError> {
        let mut conflicts = Vec::new();
        self.prompts = prompts::sorted(self.prompts.into_iter().chain(prompts), &mut conflicts);
        if conflicts.is_empty() {
            self.describe_beside();
            Ok(self)
        } else {
            Err(RegistryError::new(conflicts))
        }
    }

    /// The same registry, serving these resources too.
    #[doc(hidden)]
    pub fn with_resources(
        mut self,
        resources: impl IntoIterator<Item = &'static ResourceRegistration>,
    ) -> Result<Registry, RegistryError> {
        let mut conflicts = Vec::new();
        let old = std::mem::take(&mut self.resources);
        let functions = old.functions().chain(resources);
        self.resources = Resources::new(
            old.view_registrations(),
            functions,
            &self.tools,
            &mut conflicts,
        );
        if conflicts.is_empty() {
            self.describe_beside();
            Ok(self)
        } else {
            Err(RegistryError::new(conflicts))
        }
    }

    /// A registry of the given registrations only, without UI resources: generated code and
    /// tests make them; they are not an API.
    #[doc(hidden)]
    pub fn from_registrations(
        registrations: impl IntoIterator<Item = &'static ToolRegistration>,
    ) -> Result<Registry, RegistryError> {
        Registry::from_parts(registrations, [])
    }

    /// A registry of the given tools and UI resources only. Deriving schemas is most of a
    /// server's start-up work; with many tools it is shared among the machine's cores.
    #[doc(hidden)]
    pub fn from_parts(
        registrations: impl IntoIterator<Item = &'static ToolRegistration>,
        resources: impl IntoIterator<Item = &'static UiResourceRegistration>,
    ) -> Result<Registry, RegistryError> {
        let registrations: Vec<&'static ToolRegistration> = registrations.into_iter().collect();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let built: Vec<Result<Tool, Vec<Conflict>>> =
            if threads > 1 && registrations.len() >= PARALLEL_FROM {
                let share = registrations.len().div_ceil(threads);
                std::thread::scope(|scope| {
                    let workers: Vec<_> = registrations
                        .chunks(share)
                        .map(|chunk| {
                            scope.spawn(move || {
                                chunk.iter().map(|r| Tool::derive(r)).collect::<Vec<_>>()
                            })
                        })
                        .collect();
                    workers
                        .into_iter()
                        .flat_map(|worker| match worker.join() {
                            Ok(built) => built,
                            Err(panic) => std::panic::resume_unwind(panic),
                        })
                        .collect()
                })
            } else {
                registrations.iter().map(|r| Tool::derive(r)).collect()
            };
        let mut conflicts = Vec::new();
        let mut tools = Vec::with_capacity(built.len());
        for result in built {
            match result {
                Ok(tool) => tools.push(tool),
                Err(mut found) => conflicts.append(&mut found),
            }
        }
        Registry::assemble(tools, resources, conflicts)
    }

    /// The same tools, each on the wire as `<provider>__<tool>`, for a server that serves the
    /// tools of several providers side by side. See
    /// [`CanonicalName`](crate::names::CanonicalName) for why two tools can never share a
    /// namespaced name.
    pub fn namespaced(self) -> Result<Registry, RegistryError> {
        let mut conflicts = Vec::new();
        let mut tools = Vec::with_capacity(self.tools.len());
        for mut tool in self.tools {
            match tool.canonical_name.namespaced() {
                Ok(name) => {
                    let mut descriptor = tool.descriptor.take().unwrap_or_else(|| tool.read_json());
                    descriptor["name"] = Value::String(name.clone());
                    tool.json = Serialised::new(
                        serde_json::to_vec(&descriptor).expect("a JSON value serialises"),
                    );
                    tool.wire_name = name;
                    tools.push(tool);
                }
                Err(NameError::TooLong(name)) => conflicts.push(Conflict::NamespacedNameTooLong {
                    name,
                    location: tool.origin(),
                }),
                Err(other) => unreachable!("a valid canonical name namespaces: {other}"),
            }
        }
        let views: Vec<_> = self.resources.view_registrations().collect();
        let mut registry = Registry::assemble(tools, views, conflicts)?;
        registry.prompts = self.prompts;
        // Describes the prompts and resources in the new manifest too.
        registry.with_resources(self.resources.functions().collect::<Vec<_>>())
    }

    /// [`namespaced`](Registry::namespaced) when `namespaced` says so, this registry otherwise.
    pub(crate) fn namespaced_if(self, namespaced: bool) -> Result<Registry, RegistryError> {
        if namespaced {
            self.namespaced()
        } else {
            Ok(self)
        }
    }

    /// The bytes [`Server::embedded_manifest`](crate::Server::embedded_manifest) starts from
    /// fastest, as [`build::emit`](crate::build::emit) writes them for
    /// [`embedded_manifest!`](crate::build::embedded_manifest): the tools' compact JSON
    /// ([`Manifest::tools_list_bytes`]), then an index of its tools (where each tool's JSON lies, its
    /// name, and its title, description, annotations, `execution` and `_meta`), which start-up
    /// reads instead of parsing the JSON. The index's layout is this version's own.
    pub fn embedded_bytes(&self) -> Vec<u8> {
        embedded::indexed(self)
    }

    /// Puts the prompts, resources and templates in the manifest beside the tools, as their
    /// lists describe them.
    fn describe_beside(&mut self) {
        let prompts = self.prompt_descriptors(&BTreeSet::new());
        let resources: Vec<Value> = self
            .resources
            .fixed()
            .iter()
            .map(Fixed::descriptor)
            .collect();
        let templates: Vec<Value> = self
            .resources
            .templates_by_uri()
            .map(Template::descriptor)
            .collect();
        self.manifest.set_beside(&prompts, &resources, &templates);
    }

    /// Sorts the tools by wire name, refuses duplicates (naming every definition) and serialises
    /// the manifest, which then holds the one copy of each tool's JSON.
    fn assemble(
        mut tools: Vec<Tool>,
        resources: impl IntoIterator<Item = &'static UiResourceRegistration>,
        mut conflicts: Vec<Conflict>,
    ) -> Result<Registry, RegistryError> {
        // Link order varies between builds; the name (then the place) does not.
        tools.sort_by(|a, b| {
            a.wire_name
                .as_bytes()
                .cmp(b.wire_name.as_bytes())
                .then_with(|| a.origin().sort_key().cmp(&b.origin().sort_key()))
        });
        for pair in tools.windows(2) {
            if pair[0].wire_name == pair[1].wire_name {
                conflicts.push(Conflict::DuplicateName {
                    name: pair[0].wire_name.clone(),
                    first: pair[0].origin(),
                    second: pair[1].origin(),
                });
            }
        }
        let resources = Resources::new(resources, [], &tools, &mut conflicts);
        if !conflicts.is_empty() {
            return Err(RegistryError::new(conflicts));
        }
        let notes = tools
            .iter()
            .flat_map(|t| t.notes().iter().cloned())
            .collect();
        let manifest = Manifest::new(tools.iter().map(|t| (t.wire_name(), t.json())), notes);
        // Each tool's JSON is now in the manifest too: keep that copy only.
        let shared = manifest.shared_bytes();
        for (tool, range) in tools.iter_mut().zip(manifest.tool_ranges()) {
            tool.json = Serialised {
                bytes: shared.clone(),
                range,
            };
        }
        let mut registry = Registry {
            tools,
            manifest,
            resources,
            prompts: Vec::new(),
            held: BTreeMap::new(),
            #[cfg(feature = "gateway")]
            mounted_prompts: Vec::new(),
            #[cfg(feature = "gateway")]
            mounted_resources: Vec::new(),
        };
        registry.describe_beside();
        Ok(registry)
    }

    /// The tools, sorted by name.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools
            .binary_search_by(|t| t.wire_name.as_bytes().cmp(name.as_bytes()))
            .ok()
            .map(|i| &self.tools[i])
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none: usually a crate of tools that the linker dropped.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The manifest: what `tools/list` serves.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// A search index of the tools, in their order (by name, the order of the manifest), with
    /// the tags each was registered with, which the manifest does not carry.
    pub fn search_index(&self) -> SearchIndex {
        SearchIndex::from_described(self.tools.iter().map(Tool::described))
    }

    /// The MCP Apps views, sorted by URI.
    pub fn ui_resources(&self) -> impl Iterator<Item = &'static UiResource> + '_ {
        self.resources.views()
    }

    /// The view with this URI.
    pub fn ui_resource(&self, uri: &str) -> Option<&'static UiResource> {
        self.resources.view(uri)
    }

    /// The resources: the views and those of `#[mcp_resource]`.
    pub(crate) fn resources(&self) -> &Resources {
        &self.resources
    }

    /// The prompts linked into the binary, sorted by name.
    pub(crate) fn prompts(&self) -> &[&'static PromptRegistration] {
        &self.prompts
    }

    /// Whether it serves prompts: its own, or a mounted server's (which may list none now, and
    /// some later).
    pub(crate) fn has_prompts(&self) -> bool {
        #[cfg(feature = "gateway")]
        if !self.mounted_prompts.is_empty() {
            return true;
        }
        !self.prompts.is_empty()
    }

    /// Every prompt but the `disabled`, as `prompts/list` describes it, sorted by name.
    pub(crate) fn prompt_descriptors(&self, disabled: &BTreeSet<String>) -> Vec<Value> {
        #[allow(unused_mut, reason = "mounted prompts join them with the gateway")]
        let mut listed: Vec<(&str, Value)> = self
            .prompts
            .iter()
            .map(|p| (p.name, prompts::descriptor(p)))
            .collect();
        #[cfg(feature = "gateway")]
        let mounted: Vec<Arc<MountedPrompt>> = self.mounted_prompts().collect();
        #[cfg(feature = "gateway")]
        listed.extend(
            mounted
                .iter()
                .map(|p| (p.wire.as_str(), p.descriptor.clone())),
        );
        listed.retain(|(name, _)| !disabled.contains(*name));
        listed.sort_by(|a, b| a.0.cmp(b.0));
        listed
            .into_iter()
            .map(|(_, descriptor)| descriptor)
            .collect()
    }

    /// The prompts of mounted servers, as they list them now, but those one of the server's own
    /// shadows.
    #[cfg(feature = "gateway")]
    pub(crate) fn mounted_prompts(&self) -> impl Iterator<Item = Arc<MountedPrompt>> {
        self.mounted_prompts
            .iter()
            .flat_map(|lists| lists.listed())
            .filter(|prompt| !self.shadows(prompt))
    }

    /// Whether one of the server's own prompts has this mounted prompt's name: the server's
    /// own wins.
    #[cfg(feature = "gateway")]
    fn shadows(&self, mounted: &MountedPrompt) -> bool {
        self.prompt(&mounted.wire).is_some()
    }

    /// Whether a mounted server whose prompts are served completes their arguments.
    #[cfg(feature = "gateway")]
    pub(crate) fn completes_mounted_prompts(&self) -> bool {
        self.mounted_prompts.iter().any(|lists| lists.completes())
    }

    /// The mounted server's prompt with this wire name, unless one of the server's own has it.
    #[cfg(feature = "gateway")]
    pub(crate) fn mounted_prompt(&self, name: &str) -> Option<Arc<MountedPrompt>> {
        self.mounted_prompts
            .iter()
            .find_map(|lists| lists.find(name))
            .filter(|prompt| !self.shadows(prompt))
    }

    /// The resources of mounted servers, by mount name.
    #[cfg(feature = "gateway")]
    pub(crate) fn mounted_resources(&self) -> &[MountedResources] {
        &self.mounted_resources
    }

    /// What the resource `uri` (here) names: one of the server's own resources or templates,
    /// else a mounted server's resource. The server's own come first: a URI of its own is never
    /// forwarded.
    pub(crate) fn resolve_resource(&self, uri: &str) -> Option<Resolved<'_>> {
        if let Some(found) = self.resources.find(uri) {
            return Some(Resolved::Own(found));
        }
        #[cfg(feature = "gateway")]
        if let Some((mounted, upstream)) = self.mounted_resource(uri) {
            return Some(Resolved::Mounted(mounted, upstream));
        }
        None
    }

    /// The mounted server whose resource `uri` (here) names, and the URI on that server.
    #[cfg(feature = "gateway")]
    pub(crate) fn mounted_resource(&self, uri: &str) -> Option<(&MountedResources, String)> {
        let (mount, upstream) = upstream_uri(uri)?;
        let i = self
            .mounted_resources
            .binary_search_by(|r| (*r.mount).cmp(mount))
            .ok()?;
        Some((&self.mounted_resources[i], upstream))
    }

    /// Whether it serves a resource or a template, of its own or of a mounted server.
    pub(crate) fn has_resources(&self) -> bool {
        #[cfg(feature = "gateway")]
        if !self.mounted_resources.is_empty() {
            return true;
        }
        !self.resources.is_empty()
    }

    /// Whether a client may subscribe to one of its resources: one of its own changes, or a
    /// mounted server tells of changes.
    pub(crate) fn has_subscriptions(&self) -> bool {
        #[cfg(feature = "gateway")]
        if self.mounted_resources.iter().any(|r| r.subscribes) {
            return true;
        }
        self.resources.functions().any(|r| r.changes)
    }

    /// How many tools of mounted servers are held back.
    #[cfg(feature = "cli")]
    pub(crate) fn held_count(&self) -> usize {
        self.held.len()
    }

    /// Why the tool `name` of a mounted server is held back, if it is.
    pub(crate) fn held_back(&self, name: &str) -> Option<&str> {
        self.held.get(name).map(String::as_str)
    }

    /// The prompt with this name.
    pub(crate) fn prompt(&self, name: &str) -> Option<&'static PromptRegistration> {
        prompts::find(&self.prompts, name)
    }

    /// The names of the prompts, of its own and of mounted servers, sorted.
    pub fn prompt_names(&self) -> Vec<String> {
        #[allow(unused_mut, reason = "mounted prompts join them with the gateway")]
        let mut names: Vec<String> = self.prompts.iter().map(|p| p.name.to_owned()).collect();
        #[cfg(feature = "gateway")]
        names.extend(self.mounted_prompts().map(|p| p.wire.clone()));
        names.sort_unstable();
        names
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(Tool::name))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registration::ToolRegistration;

    #[test]
    fn a_registry_is_indexed_with_its_tags() {
        fn registration(
            name: &'static str,
            tags: &'static [&'static str],
        ) -> &'static ToolRegistration {
            Box::leak(Box::new(ToolRegistration {
                tags,
                ..crate::fixtures::tool(name, "A tool.")
            }))
        }
        let registry = Registry::from_registrations([
            registration("zeta", &["billing"]),
            registration("alpha", &["weather"]),
        ])
        .expect("valid tools");
        let index = registry.search_index();
        let found: Vec<&str> = index
            .search("billing")
            .iter()
            .map(|hit| registry.tools()[hit.index].name())
            .collect();
        assert_eq!(found, ["zeta"]);
        // The manifest carries no tags, but names and descriptions are searched all the same.
        let index = SearchIndex::from_manifest(registry.manifest());
        assert!(index.search("billing").is_empty());
        assert_eq!(index.search("alpha")[0].index, 0);
        assert_eq!(index.len(), 2);
    }

    #[test]
    fn a_schema_no_call_could_be_checked_against_stops_the_start() {
        let registration: &'static ToolRegistration = Box::leak(Box::new(ToolRegistration {
            input_schema: crate::registration::InputSchema::Literal(
                r#"{"type": "object", "properties": {"size": {"type": "integer"}},
                    "if": {"required": ["kind"]}, "then": {"required": ["size"]}}"#,
            ),
            ..crate::fixtures::tool("pack", "Packs a box.")
        }));
        let refused = Registry::from_registrations([registration]);
        if cfg!(feature = "validate") {
            assert!(refused.is_ok());
            return;
        }
        let text = refused.expect_err("refused").to_string();
        let location = registration.location;
        assert_eq!(
            text,
            format!(
                "the tools cannot be served:\n  - tool `pack` at {location}: its input schema \
                 cannot be enforced: at `/if`, `if` is checked only with toolwright's `validate` \
                 feature; turn the feature on (`toolwright = {{ version = \"0.1\", features = \
                 [\"validate\"] }}`) or state the constraint otherwise"
            )
        );
    }
}
