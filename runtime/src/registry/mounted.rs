//! What a mounted server gives the registry, under the mount's name: its tools, built from the
//! tool objects its server lists (`<mount>__<tool>` on the wire, `mcp::<mount>::<tool>` in the
//! catalog), its prompts (`<mount>__<prompt>`) and its resources (a URI `s://rest` of its server
//! is `s://<mount>/rest` here); and a registry that serves them beside its own.

use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::source::{Forward, Mounted, Source};
use super::tool::{Serialised, Tool};
use super::{Conflict, Registry, RegistryError};
use crate::names::{CanonicalName, NameError};
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
        // Its MCP Apps view is a resource of its server: read here under its URI here.
        if let Some(Value::Object(meta)) = descriptor.get_mut("_meta") {
            view_here(mount, meta);
        }
        descriptor.insert("inputSchema".into(), input_schema);
        let descriptor = Value::Object(descriptor);
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
            // Compiled at the tool's first call, as a native tool's is: a compiled schema holds
            // some 5 KiB, and most of a large server's tools may never be called.
            check: OnceLock::new(),
            // The server answers for its results: they are passed on as they come.
            output_check: OutputCheck::new(None).expect("no schema, nothing to compile"),
            notes: Vec::new(),
            mirrored: OnceLock::new(),
        })
    }
}

impl Mounted {
    /// The check of a tool's arguments whose schema this server cannot compile (`error` says
    /// why): any object's. The server checks its own arguments, and leaving that to it is
    /// better than refusing calls it would take.
    pub(super) fn unchecked(&self, error: &str) -> Result<ArgumentCheck, String> {
        tracing::warn!(
            mount = &*self.mount,
            tool = self.name,
            error,
            "arguments are passed on unchecked: the server checks them"
        );
        ArgumentCheck::new(&json!({"type": "object"})).map_err(|error| error.to_string())
    }
}

/// Points the MCP Apps view a tool's `_meta` names (`ui.resourceUri`, and the older
/// `ui/resourceUri`), a resource of the server mounted as `mount`, at its URI here.
fn view_here(mount: &str, meta: &mut Map<String, Value>) {
    let here = |uri: &mut Value| {
        if let Some(moved) = uri.as_str().and_then(|uri| mounted_uri(mount, uri)) {
            *uri = Value::String(moved);
        }
    };
    if let Some(uri) = meta.get_mut("ui").and_then(|ui| ui.get_mut("resourceUri")) {
        here(uri);
    }
    if let Some(uri) = meta.get_mut("ui/resourceUri") {
        here(uri);
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
        let wire = mounted_wire_name(mount, name).map_err(|error| error.to_string())?;
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

/// The prompts a mounted server lists, under their names here: listed again when it says its
/// list changed.
pub(crate) struct PromptLists {
    mount: Arc<str>,
    /// Whether its server completes arguments (its `completions` capability).
    completes: bool,
    /// Gets them from its server.
    forward: Arc<dyn Forward>,
    /// Sorted by name here.
    now: RwLock<Vec<Arc<MountedPrompt>>>,
}

impl PromptLists {
    /// The prompts `listed` (as its server's `prompts/list` gave them) of the server mounted as
    /// `mount`, which `forward` gets them from. One whose name no client could ask for is left
    /// out, and said in the log.
    pub(crate) fn new(
        mount: &Arc<str>,
        listed: &[Value],
        completes: bool,
        forward: Arc<dyn Forward>,
    ) -> PromptLists {
        let lists = PromptLists {
            mount: Arc::clone(mount),
            completes,
            forward,
            now: RwLock::new(Vec::new()),
        };
        let _ = lists.set(listed);
        lists
    }

    /// Replaces the prompts with what the server lists now: whether they changed.
    pub(crate) fn set(&self, listed: &[Value]) -> bool {
        let mount = &*self.mount;
        let mut now: Vec<Arc<MountedPrompt>> = listed
            .iter()
            .filter_map(|prompt| {
                let made =
                    MountedPrompt::new(mount, prompt, self.completes, Arc::clone(&self.forward));
                made.map_err(|reason| {
                    tracing::warn!(
                        mount,
                        prompt = prompt["name"].as_str().unwrap_or_default(),
                        "a prompt not served, since no client could ask for it by its mounted \
                         name: {reason}"
                    );
                })
                .ok()
                .map(Arc::new)
            })
            .collect();
        now.sort_by(|a, b| a.wire.cmp(&b.wire));
        now.dedup_by(|later, first| {
            let twice = later.wire == first.wire;
            if twice {
                tracing::warn!(
                    mount,
                    prompt = later.wire,
                    "a prompt listed twice, served once"
                );
            }
            twice
        });
        let mut prompts = self.now.write().unwrap_or_else(|e| e.into_inner());
        let changed = prompts.len() != now.len()
            || prompts
                .iter()
                .zip(&now)
                .any(|(was, is)| was.descriptor != is.descriptor);
        *prompts = now;
        changed
    }

    /// The prompts, sorted by name here.
    pub(crate) fn listed(&self) -> Vec<Arc<MountedPrompt>> {
        self.now.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The prompt named `wire` here.
    pub(crate) fn find(&self, wire: &str) -> Option<Arc<MountedPrompt>> {
        let now = self.now.read().unwrap_or_else(|e| e.into_inner());
        let i = now.binary_search_by(|p| p.wire.as_str().cmp(wire)).ok()?;
        Some(Arc::clone(&now[i]))
    }

    /// Whether its server completes arguments.
    pub(crate) fn completes(&self) -> bool {
        self.completes
    }
}

/// The resources and resource templates of a mounted server, listed as its server describes
/// them, under their URIs here.
pub(crate) struct MountedResources {
    /// The mount's name: the first segment of each URI here.
    pub(crate) mount: Arc<str>,
    /// What its server lists now, under the URIs here: listed again when it says its list
    /// changed.
    pub(crate) listed: Arc<ResourceLists>,
    /// Whether its server tells of changes to a resource (its `resources.subscribe`
    /// capability).
    pub(crate) subscribes: bool,
    /// Whether its server completes template variables (its `completions` capability).
    pub(crate) completes: bool,
    /// Reads them from its server.
    pub(crate) forward: Arc<dyn Forward>,
}

/// The resources and templates a mounted server lists, as `resources/list` and
/// `resources/templates/list` say them here: its server's descriptions, with their URIs and
/// names here.
pub(crate) struct ResourceLists {
    mount: Arc<str>,
    now: RwLock<(Vec<Value>, Vec<Value>)>,
}

impl ResourceLists {
    /// The resources `listed` and the templates `templates` (as their server's lists gave
    /// them) of the server mounted as `mount`. One whose URI has no place for the mount's name
    /// (`urn:x`, no `://`) is left out, and said in the log.
    pub(crate) fn new(mount: &Arc<str>, listed: &[Value], templates: &[Value]) -> ResourceLists {
        let lists = ResourceLists {
            mount: Arc::clone(mount),
            now: RwLock::new((Vec::new(), Vec::new())),
        };
        let _ = lists.set(listed, templates);
        lists
    }

    /// Replaces the lists with what the server lists now: whether they changed.
    pub(crate) fn set(&self, listed: &[Value], templates: &[Value]) -> bool {
        let now = (
            self.here("uri", listed),
            self.here("uriTemplate", templates),
        );
        let mut lists = self.now.write().unwrap_or_else(|e| e.into_inner());
        let changed = *lists != now;
        *lists = now;
        changed
    }

    /// The resources, as listed here.
    pub(crate) fn resources(&self) -> Vec<Value> {
        self.now.read().unwrap_or_else(|e| e.into_inner()).0.clone()
    }

    /// The templates, as listed here.
    pub(crate) fn templates(&self) -> Vec<Value> {
        self.now.read().unwrap_or_else(|e| e.into_inner()).1.clone()
    }

    /// How many resources and templates there are.
    pub(crate) fn len(&self) -> usize {
        let now = self.now.read().unwrap_or_else(|e| e.into_inner());
        now.0.len() + now.1.len()
    }

    /// The descriptors of `listed` under their URIs (at `key`) and names here.
    fn here(&self, key: &str, listed: &[Value]) -> Vec<Value> {
        let mount = &*self.mount;
        listed
            .iter()
            .filter_map(|resource| {
                let uri = resource[key].as_str().unwrap_or_default();
                let Some(uri_here) = mounted_uri(mount, uri) else {
                    tracing::warn!(
                        mount,
                        uri,
                        "a resource not served: its URI has no `scheme://` to put the mount's \
                         name after"
                    );
                    return None;
                };
                let mut descriptor = resource.clone();
                descriptor[key] = json!(uri_here);
                if let Some(name) = resource["name"].as_str() {
                    descriptor["name"] = json!(mounted_name(mount, name));
                }
                Some(descriptor)
            })
            .collect()
    }
}

/// The name here of `name`, of the server mounted as `mount`: its canonical wire name
/// (`<mount>__<name>`), or, for a name that is no identifier (a resource's `name` may be any
/// text), the two joined the same way.
fn mounted_name(mount: &str, name: &str) -> String {
    mounted_wire_name(mount, name).unwrap_or_else(|_| format!("{mount}__{name}"))
}

/// The wire name of `name` (a tool's, a prompt's) of the server mounted as `mount`:
/// `<mount>__<name>`, or why no client could use it.
pub(crate) fn mounted_wire_name(mount: &str, name: &str) -> Result<String, NameError> {
    CanonicalName::new(mount, name).and_then(|canonical| canonical.namespaced())
}

/// The URI here of `uri`, of the server mounted as `mount`: `s://<mount>/rest` for `s://rest`
/// (a URI template too); `None` for a URI without `scheme://`, which has no place for it.
pub(crate) fn mounted_uri(mount: &str, uri: &str) -> Option<String> {
    let (scheme, rest) = uri.split_once("://")?;
    let mut chars = scheme.chars();
    let scheme_like = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    scheme_like.then(|| format!("{scheme}://{mount}/{rest}"))
}

/// The mount `uri` here names, and the URI on its server: `("m", "s://rest")` for
/// `s://m/rest`.
pub(crate) fn upstream_uri(uri: &str) -> Option<(&str, String)> {
    let (scheme, rest) = uri.split_once("://")?;
    let (mount, rest) = rest.split_once('/')?;
    Some((mount, format!("{scheme}://{rest}")))
}

/// What mounted servers give a registry to serve beside its own.
#[derive(Default)]
pub(crate) struct Mounts {
    pub(crate) tools: Vec<Tool>,
    /// The tools held back, by wire name, with why.
    pub(crate) held: Vec<(String, String)>,
    /// By server.
    pub(crate) prompts: Vec<Arc<PromptLists>>,
    /// By server.
    pub(crate) resources: Vec<MountedResources>,
}

impl Registry {
    /// The same registry, serving what `mounts` gives too: the tools, sorted by wire name,
    /// the prompts and the resources, and refusing the held tools (by wire name) with why; a
    /// wire name taken twice stops it, naming both. (A prompt a mounted server lists later
    /// under a name of the server's own is not served: the server's own answers to it.)
    pub(crate) fn with_mounted(self, mounts: Mounts) -> Result<Registry, RegistryError> {
        let Mounts {
            tools,
            held,
            mut prompts,
            mut resources,
        } = mounts;
        let mut all = self.tools;
        all.extend(tools);
        let views: Vec<_> = self.resources.view_registrations().collect();
        let mut registry = Registry::assemble(all, views, Vec::new())?;
        let mut names: Vec<String> = prompts
            .iter()
            .flat_map(|lists| lists.listed())
            .map(|prompt| prompt.wire.clone())
            .collect();
        names.sort_unstable();
        let mut conflicts = Vec::new();
        for pair in names.windows(2) {
            if pair[0] == pair[1] {
                conflicts.push(Conflict::MountedPromptNameTaken {
                    name: pair[0].clone(),
                });
            }
        }
        for name in &names {
            if self.prompts.iter().any(|own| own.name == name) {
                conflicts.push(Conflict::MountedPromptNameTaken { name: name.clone() });
            }
        }
        if !conflicts.is_empty() {
            return Err(RegistryError::new(conflicts));
        }
        prompts.sort_by(|a, b| a.mount.cmp(&b.mount));
        registry.prompts = self.prompts;
        registry.mounted_prompts = prompts;
        resources.sort_by(|a, b| a.mount.cmp(&b.mount));
        registry.mounted_resources = resources;
        registry.held = self.held.into_iter().chain(held).collect();
        registry.with_resources(self.resources.functions().collect::<Vec<_>>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_of_a_mounted_server_has_the_mounts_name_after_its_scheme_and_back() {
        for (theirs, here) in [
            ("notes://{id}", "notes://notes/{id}"),
            ("file:///tmp/a.txt", "file://notes//tmp/a.txt"),
            ("ui://notes/board.html", "ui://notes/notes/board.html"),
            ("demo+x.y://a/b?c=d", "demo+x.y://notes/a/b?c=d"),
        ] {
            assert_eq!(mounted_uri("notes", theirs).as_deref(), Some(here));
            assert_eq!(upstream_uri(here), Some(("notes", theirs.to_owned())));
        }
    }

    /// A server no call reaches: these tests check arguments, which happens before a call.
    struct NoServer;

    impl Forward for NoServer {
        fn call(
            &self,
            _: &str,
            _: Value,
            _: crate::context::Context,
        ) -> crate::handler::BoxFuture<crate::handler::Output> {
            unreachable!("arguments are checked before a call is forwarded")
        }

        fn get_prompt(
            &self,
            _: &str,
            _: Value,
            _: crate::context::Context,
        ) -> crate::handler::BoxFuture<Result<Value, crate::answers::RpcError>> {
            unreachable!("no prompt is got here")
        }

        fn complete(
            &self,
            _: Value,
        ) -> crate::handler::BoxFuture<Result<Value, crate::answers::RpcError>> {
            unreachable!("nothing is completed here")
        }

        fn read_resource(
            &self,
            _: &str,
            _: crate::context::Context,
        ) -> crate::handler::BoxFuture<Result<Value, crate::answers::RpcError>> {
            unreachable!("no resource is read here")
        }

        fn follow(
            &self,
            _: &str,
        ) -> crate::handler::BoxFuture<Result<(), crate::answers::RpcError>> {
            unreachable!("no resource is followed here")
        }
    }

    fn mounted(listed: &Value) -> Tool {
        Tool::from_mount(&Arc::from("files"), listed, Arc::new(NoServer), None, &[]).unwrap()
    }

    #[test]
    fn a_mounted_tools_arguments_are_checked_by_a_schema_compiled_at_its_first_call() {
        let tool = mounted(&json!({
            "name": "read",
            "inputSchema": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        }));
        assert!(tool.check.get().is_none(), "compiled as it was mounted");
        assert_eq!(
            tool.check_arguments(&json!({})).unwrap_err(),
            "missing required argument `path`"
        );
        assert!(tool.check.get().is_some());
        assert_eq!(tool.check_arguments(&json!({"path": "a.txt"})), Ok(()));
    }

    #[test]
    fn a_mounted_tools_schema_that_cannot_be_compiled_leaves_the_check_to_its_server() {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string", "pattern": "("}},
        });
        assert!(ArgumentCheck::new(&schema).is_err(), "the schema compiles");
        let tool = mounted(&json!({"name": "read", "inputSchema": schema}));
        assert_eq!(tool.check_arguments(&json!({"path": 7})), Ok(()));
        // Without a schema, any object is passed on.
        let tool = mounted(&json!({"name": "list"}));
        assert_eq!(tool.check_arguments(&json!({"deep": true})), Ok(()));
    }

    #[test]
    fn a_uri_without_scheme_and_slashes_has_no_place_for_the_mount() {
        assert_eq!(mounted_uri("notes", "urn:isbn:0451450523"), None);
        assert_eq!(mounted_uri("notes", "://x"), None);
        assert_eq!(mounted_uri("notes", "1abc://x"), None);
        assert_eq!(upstream_uri("notes://"), None);
    }
}
