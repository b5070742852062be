//! Every tool linked into the binary, checked and sorted by name.

use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

use bytes::Bytes;

use serde_json::{Map, Value, json};

#[cfg(debug_assertions)]
use crate::ToolResult;
use crate::apps::{ToolUi, UiResource, UiResourceRegistration};
use crate::manifest::Manifest;
use crate::names::{CanonicalName, MAX_WIRE_NAME_LEN, NameError, is_wire_name};
#[cfg(debug_assertions)]
use crate::schema::OutputCheck;
use crate::schema::{self, ArgumentCheck};
use crate::tool::{Annotations, Handler, InputSchema, Location, ToolRegistration};

/// The tools a server serves: every registration, with its schemas derived and checked, sorted
/// by name in byte order.
pub struct Registry {
    tools: Vec<Tool>,
    manifest: Manifest,
    /// The MCP Apps views, sorted by URI.
    resources: Vec<&'static UiResourceRegistration>,
}

/// One tool, ready to list and call.
pub struct Tool {
    registration: &'static ToolRegistration,
    /// The name `tools/list` shows and `tools/call` takes: the tool's name, or
    /// `<provider>__<tool>` on a namespaced registry.
    wire_name: String,
    canonical_name: CanonicalName,
    /// The tool object `tools/list` sends, as canonical JSON (compact, keys sorted): the one
    /// copy of its schemas a running server keeps, inside the manifest's bytes once the
    /// registry is assembled.
    json: Json,
    /// Whether the tool has an `outputSchema`.
    structured: bool,
    /// The tool object as a JSON value, read back from `json` the first time it is asked for.
    descriptor: OnceLock<Value>,
    /// The argument check, compiled at the tool's first call (at start in debug builds and for
    /// literal schemas, so that a schema the validator refuses stops the server there).
    check: OnceLock<Result<ArgumentCheck, String>>,
    /// Checks results against the output schema; debug builds only.
    #[cfg(debug_assertions)]
    output_check: Option<OutputCheck>,
    /// The root type of an output schema that is not an object, for the manifest's note.
    unstructured_root: Option<String>,
}

mod embedded;

/// What to do when the embedded manifest describes other tools than the ones linked in.
const REBUILT_OTHERWISE: &str = "the manifest embedded at build time was made from other tools \
    than the ones linked in: build the tools crate with the same features under \
    [build-dependencies] as under [dependencies], and make the build script and the server agree \
    on namespacing (Guard::namespaced, Server::namespaced)";

/// How many tools it takes for start-up to derive their schemas on several threads.
const PARALLEL_FROM: usize = 64;

/// Bytes of JSON, in a buffer that may hold others' too.
struct Json {
    bytes: Bytes,
    range: Range<usize>,
}

impl Json {
    fn new(bytes: Vec<u8>) -> Json {
        let range = 0..bytes.len();
        Json {
            bytes: bytes.into(),
            range,
        }
    }
}

/// Why the registry cannot serve: every conflict found, so one run shows them all.
#[derive(Debug)]
pub struct RegistryError {
    conflicts: Vec<Conflict>,
}

/// A problem that stops a server from starting.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Conflict {
    /// Two tools have one name.
    DuplicateName {
        /// The name.
        name: String,
        /// Where the first definition is.
        first: Location,
        /// Where the second definition is.
        second: Location,
    },
    /// A provider that cannot be part of a canonical name (see [`CanonicalName`]).
    InvalidProvider {
        /// The tool.
        tool: String,
        /// The provider.
        provider: String,
        /// Where the tool is defined.
        location: Location,
    },
    /// A namespaced name longer than the protocol allows.
    NamespacedNameTooLong {
        /// The namespaced name.
        name: String,
        /// Where the tool is defined.
        location: Location,
    },
    /// A name outside SEP-986.
    InvalidName {
        /// The name.
        name: String,
        /// Where the tool is defined.
        location: Location,
    },
    /// An input schema whose root is not `type: object`.
    InputNotObject {
        /// The tool.
        tool: String,
        /// Where the tool is defined.
        location: Location,
    },
    /// A `$ref` that resolves to nothing inside the schema.
    DanglingRef {
        /// The tool.
        tool: String,
        /// The reference.
        reference: String,
        /// Where the tool is defined.
        location: Location,
    },
    /// A tool named like a meta-tool of the progressive catalog (`search_tools`, `call_tool`),
    /// served in that mode.
    ReservedName {
        /// The name.
        name: String,
        /// Where the tool is defined.
        location: Location,
    },
    /// The manifest embedded at build time (see [`crate::build`]) does not describe a tool as the
    /// binary has it: the build script linked other tools, or the same tools built otherwise.
    EmbeddedMismatch {
        /// The tool.
        tool: String,
        /// How it differs.
        problem: String,
    },
    /// A tool's `ui` names a view that no [`ui_resource!`](crate::ui_resource) declares.
    MissingUiResource {
        /// The tool.
        tool: String,
        /// The `ui://` URI it names.
        uri: String,
        /// Where the tool is defined.
        location: Location,
        /// The URIs that are declared, for a typo.
        declared: Vec<String>,
    },
    /// Two UI resources have one URI.
    DuplicateUiResource {
        /// The URI.
        uri: String,
        /// Where the first is declared.
        first: Location,
        /// Where the second is declared.
        second: Location,
    },
    /// A schema that is not valid JSON Schema 2020-12.
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What the validator said.
        error: String,
        /// Where the tool is defined.
        location: Location,
    },
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Conflict::DuplicateName {
                name,
                first,
                second,
            } => write!(
                f,
                "two tools are named `{name}`: one at {first}, one at {second}; rename one with \
                 `#[mcp_tool(name = \"...\")]`"
            ),
            Conflict::InvalidProvider {
                tool,
                provider,
                location,
            } => write!(
                f,
                "tool `{tool}` at {location}: `{provider}` cannot be a provider: a provider is 1 \
                 to 64 of `A-Z a-z 0-9 _ -`, with no `__` and no trailing `_`; set one with \
                 `#[mcp_tool(provider = \"...\")]`"
            ),
            Conflict::NamespacedNameTooLong { name, location } => write!(
                f,
                "tool at {location}: its namespaced name `{name}` is longer than \
                 {MAX_WIRE_NAME_LEN} characters; shorten the tool's name or its provider"
            ),
            Conflict::InvalidName { name, location } => write!(
                f,
                "tool `{name}` at {location}: a tool name is 1 to {MAX_WIRE_NAME_LEN} of \
                 `A-Z a-z 0-9 _ - .` (SEP-986)"
            ),
            Conflict::InputNotObject { tool, location } => write!(
                f,
                "tool `{tool}` at {location}: its input schema is not `type: object` at the root"
            ),
            Conflict::DanglingRef {
                tool,
                reference,
                location,
            } => write!(
                f,
                "tool `{tool}` at {location}: `$ref` `{reference}` points to no definition in \
                 the schema"
            ),
            Conflict::ReservedName { name, location } => write!(
                f,
                "tool `{name}` at {location}: the progressive catalog has a tool of its own by \
                 that name; rename this one with `#[mcp_tool(name = \"...\")]`, or serve the full \
                 catalog"
            ),
            Conflict::MissingUiResource {
                tool,
                uri,
                location,
                declared,
            } => {
                write!(
                    f,
                    "tool `{tool}` at {location}: its view `{uri}` is not a declared UI \
                     resource; declare it with `toolwright::ui_resource!(UiResource::new(\"{uri}\", \
                     ...))` in a crate the server links, or fix the tool's `ui`"
                )?;
                match declared.as_slice() {
                    [] => write!(f, " (no UI resource is declared)"),
                    declared => write!(f, " (declared: {})", declared.join(", ")),
                }
            }
            Conflict::DuplicateUiResource { uri, first, second } => write!(
                f,
                "two UI resources have the URI `{uri}`: one at {first}, one at {second}; keep one"
            ),
            Conflict::EmbeddedMismatch { tool, problem } => {
                write!(f, "tool `{tool}`: {problem}")
            }
            Conflict::InvalidSchema {
                tool,
                error,
                location,
            } => write!(
                f,
                "tool `{tool}` at {location}: its schema is not valid JSON Schema 2020-12: {error}"
            ),
        }
    }
}

impl RegistryError {
    pub(crate) fn new(conflicts: Vec<Conflict>) -> RegistryError {
        RegistryError { conflicts }
    }

    /// Every conflict found.
    pub fn conflicts(&self) -> &[Conflict] {
        &self.conflicts
    }
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the tools cannot be served:")?;
        for conflict in &self.conflicts {
            write!(f, "\n  - {conflict}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RegistryError {}

impl Registry {
    /// Every tool registered with `#[mcp_tool]` in the binary, and every MCP Apps view declared
    /// with [`ui_resource!`](crate::ui_resource).
    pub fn collect() -> Result<Registry, RegistryError> {
        Registry::from_parts(
            inventory::iter::<ToolRegistration>,
            inventory::iter::<UiResourceRegistration>,
        )
    }

    /// A registry of the given registrations only, without UI resources: a tool whose `ui`
    /// names a view is then [`Conflict::MissingUiResource`]; [`Registry::from_parts`] takes the
    /// views too.
    pub fn from_registrations(
        registrations: impl IntoIterator<Item = &'static ToolRegistration>,
    ) -> Result<Registry, RegistryError> {
        Registry::from_parts(registrations, [])
    }

    /// A registry of the given tools and UI resources only.
    ///
    /// Deriving schemas is most of a server's start-up work; with many tools it is shared among
    /// the machine's cores.
    pub fn from_parts(
        registrations: impl IntoIterator<Item = &'static ToolRegistration>,
        resources: impl IntoIterator<Item = &'static UiResourceRegistration>,
    ) -> Result<Registry, RegistryError> {
        let registrations: Vec<&'static ToolRegistration> = registrations.into_iter().collect();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let built: Vec<Result<Tool, Vec<Conflict>>> = if threads > 1
            && registrations.len() >= PARALLEL_FROM
        {
            let share = registrations.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let workers: Vec<_> = registrations
                    .chunks(share)
                    .map(|chunk| {
                        scope.spawn(move || chunk.iter().map(|r| Tool::new(r)).collect::<Vec<_>>())
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
            registrations.iter().map(|r| Tool::new(r)).collect()
        };
        let mut conflicts = Vec::new();
        let mut tools = Vec::with_capacity(built.len());
        for result in built {
            match result {
                Ok(tool) => tools.push(tool),
                Err(mut found) => conflicts.append(&mut found),
            }
        }
        Registry::assemble(tools, resources.into_iter().collect(), conflicts)
    }

    /// The same tools, each on the wire as `<provider>__<tool>`, for a server that serves the
    /// tools of several providers side by side. See [`CanonicalName`] for why two tools can
    /// never share a namespaced name.
    pub fn namespaced(self) -> Result<Registry, RegistryError> {
        let mut conflicts = Vec::new();
        let mut tools = Vec::with_capacity(self.tools.len());
        for mut tool in self.tools {
            match tool.canonical_name.namespaced() {
                Ok(name) => {
                    let mut descriptor = tool.descriptor.take().unwrap_or_else(|| tool.read_json());
                    descriptor["name"] = Value::String(name.clone());
                    tool.json = Json::new(
                        serde_json::to_vec(&descriptor).expect("a JSON value serialises"),
                    );
                    tool.wire_name = name;
                    tools.push(tool);
                }
                Err(NameError::TooLong(name)) => conflicts.push(Conflict::NamespacedNameTooLong {
                    name,
                    location: tool.location(),
                }),
                Err(other) => unreachable!("a valid canonical name namespaces: {other}"),
            }
        }
        Registry::assemble(tools, self.resources, conflicts)
    }

    /// The tools linked into the binary, described by a manifest made at build time
    /// ([`crate::build`]) rather than derived now: start-up derives no schema. Each linked tool
    /// must be in the manifest under its wire name (namespaced if asked) with the same title,
    /// description, annotations and `_meta`, and each tool of the manifest must be linked; debug
    /// builds also derive every schema and compare the whole manifest.
    pub(crate) fn embedded(
        manifest: &'static [u8],
        namespaced: bool,
    ) -> Result<Registry, RegistryError> {
        let mismatch = |tool: &str, problem: String| Conflict::EmbeddedMismatch {
            tool: tool.to_owned(),
            problem,
        };
        let (json, entries) = match embedded::open(manifest) {
            Ok(opened) => opened,
            Err(error) => {
                return Err(RegistryError::new(vec![mismatch(
                    "*",
                    format!(
                        "the embedded manifest cannot be read: {error}; pass \
                         `toolwright::embedded_manifest!()`, the bytes toolwright::build::emit() \
                         wrote"
                    ),
                )]));
            }
        };
        // Served from the binary's own pages, as they are: no copy on the heap.
        let shared = Bytes::from_static(json);
        let mut conflicts = Vec::new();
        let mut linked: Vec<(String, &'static ToolRegistration, CanonicalName)> = Vec::new();
        for registration in inventory::iter::<ToolRegistration> {
            let canonical =
                match CanonicalName::registered(registration.provider, registration.name) {
                    Ok(canonical) => canonical,
                    Err(_) => {
                        conflicts.push(mismatch(
                            registration.name,
                            "its provider cannot be part of a canonical name".to_owned(),
                        ));
                        continue;
                    }
                };
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
        let mut entries = entries.into_iter().peekable();
        let mut linked = linked.into_iter().peekable();
        // The linked tool's `embedded::head`, compared with the entry's.
        let mut head = Vec::new();
        loop {
            let order = match (entries.peek(), linked.peek()) {
                (None, None) => break,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(entry), Some((wire, ..))) => entry.name.as_bytes().cmp(wire.as_bytes()),
            };
            match order {
                std::cmp::Ordering::Less => {
                    let entry = entries.next().expect("peeked");
                    conflicts.push(mismatch(
                        &entry.name,
                        format!("it is in the embedded manifest but not linked into the binary; {REBUILT_OTHERWISE}"),
                    ));
                }
                std::cmp::Ordering::Greater => {
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
                std::cmp::Ordering::Equal => {
                    let entry = entries.next().expect("peeked");
                    let (wire, registration, canonical_name) = linked.next().expect("peeked");
                    head.clear();
                    embedded::registration_head(&mut head, registration);
                    if *entry.head != *head {
                        conflicts.push(mismatch(
                            &wire,
                            format!(
                                "its title, description, annotations or `_meta` differ \
                                 from the embedded manifest's; {REBUILT_OTHERWISE}"
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
        #[cfg(debug_assertions)]
        if conflicts.is_empty() {
            conflicts.extend(embedded::compare_derived(&tools, namespaced));
        }
        let resources = sorted_resources(
            inventory::iter::<UiResourceRegistration>,
            &tools,
            &mut conflicts,
        );
        if !conflicts.is_empty() {
            return Err(RegistryError { conflicts });
        }
        // The tools are in the manifest's order, and their JSON lies in its bytes already.
        let ranges = tools
            .iter()
            .map(|tool| (tool.wire_name.clone(), tool.json.range.clone()))
            .collect();
        let manifest = Manifest::from_shared(shared, ranges);
        Ok(Registry {
            tools,
            manifest,
            resources,
        })
    }

    /// The bytes [`Server::embedded_manifest`](crate::Server::embedded_manifest) starts from
    /// fastest, as [`build::emit`](crate::build::emit) writes them for
    /// [`embedded_manifest!`](crate::embedded_manifest): the manifest's compact JSON
    /// ([`Manifest::as_bytes`]), then an index of its tools (where each tool's JSON lies, its
    /// name, and its title, description, annotations and `_meta`), which start-up reads instead
    /// of parsing the JSON. The index's layout is this version's own.
    pub fn embedded_bytes(&self) -> Vec<u8> {
        embedded::indexed(self)
    }

    /// Sorts the tools by wire name and refuses duplicates, naming every definition.
    fn assemble(
        mut tools: Vec<Tool>,
        resources: Vec<&'static UiResourceRegistration>,
        mut conflicts: Vec<Conflict>,
    ) -> Result<Registry, RegistryError> {
        // Link order varies between builds; the name (then the place) does not.
        tools.sort_by(|a, b| {
            let place = |t: &Tool| {
                let l = t.location();
                (l.file, l.line, l.column)
            };
            a.wire_name
                .as_bytes()
                .cmp(b.wire_name.as_bytes())
                .then_with(|| place(a).cmp(&place(b)))
        });
        for pair in tools.windows(2) {
            if pair[0].wire_name == pair[1].wire_name {
                conflicts.push(Conflict::DuplicateName {
                    name: pair[0].wire_name.clone(),
                    first: pair[0].location(),
                    second: pair[1].location(),
                });
            }
        }
        let resources = sorted_resources(resources, &tools, &mut conflicts);
        if !conflicts.is_empty() {
            return Err(RegistryError { conflicts });
        }
        let manifest = Manifest::new(&tools);
        // Each tool's JSON is now in the manifest too: keep that copy only.
        let shared = manifest.shared_bytes();
        for (tool, range) in tools.iter_mut().zip(manifest.tool_ranges()) {
            tool.json = Json {
                bytes: shared.clone(),
                range,
            };
        }
        Ok(Registry {
            tools,
            manifest,
            resources,
        })
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

    /// The MCP Apps views, sorted by URI.
    pub fn ui_resources(&self) -> impl ExactSizeIterator<Item = &'static UiResource> + '_ {
        self.resources.iter().map(|r| &r.resource)
    }

    /// The view with this URI.
    pub fn ui_resource(&self, uri: &str) -> Option<&'static UiResource> {
        find_resource(&self.resources, uri).map(|r| &r.resource)
    }
}

/// The resource with this URI among resources sorted by URI.
fn find_resource(
    resources: &[&'static UiResourceRegistration],
    uri: &str,
) -> Option<&'static UiResourceRegistration> {
    resources
        .binary_search_by(|r| r.resource.uri().cmp(uri))
        .ok()
        .map(|i| resources[i])
}

/// The UI resources sorted by URI, after a conflict for each duplicate and for each tool whose
/// view is not among them.
fn sorted_resources(
    resources: impl IntoIterator<Item = &'static UiResourceRegistration>,
    tools: &[Tool],
    conflicts: &mut Vec<Conflict>,
) -> Vec<&'static UiResourceRegistration> {
    let mut resources: Vec<_> = resources.into_iter().collect();
    // Link order varies between builds; the URI (then the place) does not.
    resources.sort_by_key(|r| {
        let l = r.location;
        (r.resource.uri(), l.file, l.line, l.column)
    });
    for pair in resources.windows(2) {
        if pair[0].resource.uri() == pair[1].resource.uri() {
            conflicts.push(Conflict::DuplicateUiResource {
                uri: pair[0].resource.uri().to_owned(),
                first: pair[0].location,
                second: pair[1].location,
            });
        }
    }
    for tool in tools {
        let Some(uri) = tool.ui().resource_uri else {
            continue;
        };
        if find_resource(&resources, uri).is_none() {
            conflicts.push(Conflict::MissingUiResource {
                tool: tool.wire_name().to_owned(),
                uri: uri.to_owned(),
                location: tool.location(),
                declared: resources
                    .iter()
                    .map(|r| r.resource.uri().to_owned())
                    .collect(),
            });
        }
    }
    resources
}

impl Tool {
    fn new(registration: &'static ToolRegistration) -> Result<Tool, Vec<Conflict>> {
        let tool = registration.name.to_owned();
        let location = registration.location;
        let mut conflicts = Vec::new();
        if !is_wire_name(registration.name) {
            conflicts.push(Conflict::InvalidName {
                name: tool.clone(),
                location,
            });
        }
        let canonical_name = CanonicalName::registered(registration.provider, registration.name);
        if let Err(NameError::Provider(provider)) = &canonical_name {
            conflicts.push(Conflict::InvalidProvider {
                tool: tool.clone(),
                provider: provider.clone(),
                location,
            });
        }
        let literal = matches!(registration.input_schema, InputSchema::Literal(_));
        let input_schema = match registration.input_schema {
            InputSchema::Derived(derive) => schema::input(derive),
            InputSchema::Literal(text) => match serde_json::from_str::<Value>(text) {
                Ok(schema) => schema,
                Err(error) => {
                    conflicts.push(Conflict::InvalidSchema {
                        tool,
                        error: format!("its literal `input_schema` is not JSON: {error}"),
                        location,
                    });
                    return Err(conflicts);
                }
            },
        };
        if input_schema.get("type").and_then(Value::as_str) != Some("object") {
            conflicts.push(Conflict::InputNotObject {
                tool: tool.clone(),
                location,
            });
        }
        let (output_schema, unstructured_root) = match schema::output(registration.output_schema) {
            Some(s) if s.get("type").and_then(Value::as_str) == Some("object") => (Some(s), None),
            Some(s) => (None, Some(root_type(&s))),
            None => (None, None),
        };
        // A literal schema is written by hand, so it is checked against the 2020-12
        // meta-schema at every start. A derived one comes from schemars and is the same on
        // every run of a build: debug builds, which a server's tests run, check it.
        let meta_check = [cfg!(debug_assertions) || literal, cfg!(debug_assertions)];
        for (schema, meta_check) in std::iter::once(&input_schema)
            .chain(&output_schema)
            .zip(meta_check)
        {
            if meta_check && let Err(error) = jsonschema::meta::validate(schema) {
                conflicts.push(Conflict::InvalidSchema {
                    tool: tool.clone(),
                    error: error.to_string(),
                    location,
                });
            }
            for reference in schema::dangling_refs(schema) {
                conflicts.push(Conflict::DanglingRef {
                    tool: tool.clone(),
                    reference,
                    location,
                });
            }
        }
        #[cfg(debug_assertions)]
        let output_check = match output_schema.as_ref().map(OutputCheck::new).transpose() {
            Ok(check) => check,
            Err(error) => {
                conflicts.push(Conflict::InvalidSchema {
                    tool: tool.clone(),
                    error,
                    location,
                });
                None
            }
        };
        let check = OnceLock::new();
        if cfg!(debug_assertions) || literal {
            match ArgumentCheck::new(&input_schema) {
                Ok(compiled) => {
                    let _ = check.set(Ok(compiled));
                }
                Err(error) => {
                    conflicts.push(Conflict::InvalidSchema {
                        tool,
                        error,
                        location,
                    });
                    return Err(conflicts);
                }
            }
        }
        let canonical_name = match canonical_name {
            Ok(name) if conflicts.is_empty() => name,
            _ => return Err(conflicts),
        };
        let structured = output_schema.is_some();
        let descriptor = descriptor(registration, input_schema, output_schema);
        Ok(Tool {
            registration,
            wire_name: registration.name.to_owned(),
            canonical_name,
            json: Json::new(serde_json::to_vec(&descriptor).expect("a JSON value serialises")),
            structured,
            descriptor: OnceLock::new(),
            check,
            #[cfg(debug_assertions)]
            output_check,
            unstructured_root,
        })
    }

    /// A tool whose JSON is a manifest's, made at build time: `entry` says where it lies.
    fn embedded(
        registration: &'static ToolRegistration,
        wire_name: String,
        canonical_name: CanonicalName,
        manifest: &Bytes,
        entry: embedded::Entry,
    ) -> Result<Tool, Conflict> {
        let tool = Tool {
            registration,
            wire_name,
            canonical_name,
            json: Json {
                bytes: manifest.clone(),
                range: entry.range,
            },
            structured: entry.structured,
            descriptor: OnceLock::new(),
            check: OnceLock::new(),
            #[cfg(debug_assertions)]
            output_check: None,
            unstructured_root: None,
        };
        // Debug builds check arguments and results from the start, as with derived schemas.
        #[cfg(debug_assertions)]
        let tool = {
            let mut tool = tool;
            // Release builds trust the JSON the build wrote; debug builds read it first.
            if let Err(error) = serde_json::from_slice::<Value>(tool.json()) {
                return Err(Conflict::EmbeddedMismatch {
                    tool: tool.wire_name,
                    problem: format!(
                        "its JSON in the embedded manifest does not read ({error}); build the \
                         crate again"
                    ),
                });
            }
            let problem = |error: String| Conflict::InvalidSchema {
                tool: tool.wire_name.clone(),
                error,
                location: registration.location,
            };
            let check = ArgumentCheck::new(tool.input_schema()).map_err(problem)?;
            let output_check = match tool.output_schema() {
                Some(schema) => Some(OutputCheck::new(schema).map_err(problem)?),
                None => None,
            };
            let _ = tool.check.set(Ok(check));
            tool.output_check = output_check;
            tool
        };
        Ok(tool)
    }

    /// The tool object read back from its JSON.
    fn read_json(&self) -> Value {
        serde_json::from_slice(self.json()).expect("a tool's own JSON reads back")
    }

    /// Its MCP Apps view and who may call it.
    pub fn ui(&self) -> ToolUi {
        self.registration.ui
    }

    /// Whether only the server's views may call it: its visibility leaves out the model.
    pub fn is_app_only(&self) -> bool {
        !self.registration.ui.visibility().model
    }

    /// The tool's own name, as `#[mcp_tool]` gave it.
    pub fn name(&self) -> &'static str {
        self.registration.name
    }

    /// The name clients list and call: [`name`](Tool::name), or `<provider>__<tool>` in a
    /// [namespaced](Registry::namespaced) registry.
    pub fn wire_name(&self) -> &str {
        &self.wire_name
    }

    /// The tool's identity across servers, `mcp::<provider>::<tool>`; never a wire name.
    pub fn canonical_name(&self) -> &CanonicalName {
        &self.canonical_name
    }

    /// The display name, if any.
    pub fn title(&self) -> Option<&'static str> {
        self.registration.title
    }

    /// What the tool does.
    pub fn description(&self) -> &'static str {
        self.registration.description
    }

    /// The input schema as clients receive it.
    pub fn input_schema(&self) -> &Value {
        &self.descriptor()["inputSchema"]
    }

    /// The output schema, when the tool returns structured content.
    pub fn output_schema(&self) -> Option<&Value> {
        self.descriptor().get("outputSchema")
    }

    /// Whether calls return `structuredContent`.
    pub fn is_structured(&self) -> bool {
        self.structured
    }

    /// The behaviour hints.
    pub fn annotations(&self) -> Annotations {
        self.registration.annotations
    }

    /// The tags.
    pub fn tags(&self) -> &'static [&'static str] {
        self.registration.tags
    }

    /// Whether the catalog always lists the tool.
    pub fn is_core(&self) -> bool {
        self.registration.core
    }

    /// The provider in the canonical name.
    pub fn provider(&self) -> &'static str {
        self.registration.provider
    }

    /// Where the tool is defined.
    pub fn location(&self) -> Location {
        self.registration.location
    }

    /// The tool as `tools/list` describes it.
    pub fn descriptor(&self) -> &Value {
        self.descriptor.get_or_init(|| self.read_json())
    }

    /// The tool as `tools/list` sends it: compact JSON, keys sorted.
    pub(crate) fn json(&self) -> &[u8] {
        &self.json.bytes[self.json.range.clone()]
    }

    pub(crate) fn handler(&self) -> Handler {
        self.registration.handler
    }

    /// Checks arguments against the input schema; the error lists every problem, a line each.
    pub(crate) fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        let check = self.check.get_or_init(|| {
            let compiled = match self.descriptor.get() {
                Some(descriptor) => ArgumentCheck::new(&descriptor["inputSchema"]),
                // Release builds take an embedded manifest's JSON as the build wrote it: read
                // it here without trusting it, so a damaged tool fails its calls, not the server.
                None => match serde_json::from_slice::<Value>(self.json()) {
                    Ok(tool) => ArgumentCheck::new(&tool["inputSchema"]),
                    Err(error) => Err(format!("the tool's JSON does not read: {error}")),
                },
            };
            if let Err(error) = &compiled {
                tracing::error!(
                    tool = self.name(),
                    error,
                    "the input schema cannot be compiled"
                );
            }
            compiled
        });
        match check {
            Ok(check) => check.check(arguments),
            Err(error) => Err(format!(
                "the tool's input schema cannot be compiled, so no call can be checked: {error}"
            )),
        }
    }

    /// Checks a successful result against the output schema (debug builds only): `Ok` for a
    /// tool without one and for tool errors; otherwise every problem, a line each.
    #[cfg(debug_assertions)]
    pub(crate) fn check_output(&self, result: &ToolResult) -> Result<(), String> {
        let Some(check) = &self.output_check else {
            return Ok(());
        };
        if result.is_error() {
            return Ok(());
        }
        match result.structured_content() {
            Some(value) => check.check(value),
            None => Err("the result has no `structuredContent`".to_owned()),
        }
    }

    /// Why the tool is served as text only, if it is: a note for the manifest's author.
    pub(crate) fn unstructured_note(&self) -> Option<String> {
        let root = self.unstructured_root.as_ref()?;
        Some(format!(
            "tool `{}` at {}: its output's schema root is {root}, not an object, so it has no \
             `outputSchema` and its results are served as text",
            self.name(),
            self.location()
        ))
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name())
            .field("location", &self.location())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(Tool::name))
            .finish()
    }
}

/// The tool object of the protocol: only its fields, each only when set.
fn descriptor(
    registration: &ToolRegistration,
    input_schema: Value,
    output_schema: Option<Value>,
) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), json!(registration.name));
    if let Some(title) = registration.title {
        tool.insert("title".into(), json!(title));
    }
    tool.insert("description".into(), json!(registration.description));
    tool.insert("inputSchema".into(), input_schema);
    if let Some(output) = output_schema {
        tool.insert("outputSchema".into(), output);
    }
    let a = registration.annotations;
    let mut annotations = Map::new();
    for (key, value) in [
        ("readOnlyHint", a.read_only),
        ("destructiveHint", a.destructive),
        ("idempotentHint", a.idempotent),
        ("openWorldHint", a.open_world),
    ] {
        if let Some(value) = value {
            annotations.insert(key.into(), json!(value));
        }
    }
    if !annotations.is_empty() {
        tool.insert("annotations".into(), Value::Object(annotations));
    }
    if let Some(meta) = meta(registration) {
        tool.insert("_meta".into(), meta);
    }
    Value::Object(tool)
}

/// The tool's `_meta`, if it has anything to say: its MCP Apps view and visibility.
fn meta(registration: &ToolRegistration) -> Option<Value> {
    registration.ui.meta().map(|ui| json!({ "ui": ui }))
}

/// How the manifest's note describes the root of an output schema that is not an object.
fn root_type(schema: &Value) -> String {
    match schema.get("type") {
        Some(Value::String(t)) => format!("`{t}`"),
        Some(other) => format!("`{other}`"),
        None => "not a single type".to_owned(),
    }
}
