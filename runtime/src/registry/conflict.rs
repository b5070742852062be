//! Why a registry cannot serve: each problem found at start, with where the tool is.

use std::fmt;

use super::tool::Origin;
use crate::registration::Location;
use crate::schema::check::CheckError;
use crate::schema::validator::Unsupported;
use toolwright_rules::MAX_TOOL_NAME_LEN;

/// What to do when the embedded manifest describes other tools than the ones linked in, besides
/// naming a tools crate the server does not name.
pub(crate) const REBUILT_OTHERWISE: &str = "the manifest embedded at build time was made from other tools \
    than the ones linked in: build the tools crate with the same features under \
    [build-dependencies] as under [dependencies], and make the build script and the server agree \
    on namespacing (Guard::namespaced, Server::namespaced)";

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
        first: Origin,
        /// Where the second definition is.
        second: Origin,
    },
    /// A namespaced name longer than the protocol allows.
    NamespacedNameTooLong {
        /// The namespaced name.
        name: String,
        /// Where the tool is defined.
        location: Origin,
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
        location: Origin,
    },
    /// Tools of the manifest embedded at build time that the binary does not link: most likely
    /// the server names no tools crate (`toolwright::server!()` where the build script names
    /// one), so the linker dropped it.
    NotLinked {
        /// The tools, in the manifest's order.
        tools: Vec<String>,
    },
    /// An input schema that asks what toolwright's own validator does not enforce (`if`,
    /// `dependentSchemas`, a remote `$ref`...), in a server built without the `validate` feature:
    /// it would publish a constraint it does not keep.
    UnenforceableSchema {
        /// The tool.
        tool: String,
        /// Where in the schema, as a JSON pointer.
        at: String,
        /// What is asked.
        reason: String,
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
    /// A tool's `ui` names a view that no [`ui_resource!`](crate::apps::ui_resource) declares.
    MissingUiResource {
        /// The tool.
        tool: String,
        /// The `ui://` URI it names.
        uri: String,
        /// Where the tool is defined.
        location: Origin,
        /// The URIs that are declared, for a typo.
        declared: Vec<String>,
    },
    /// Two resources (views, or resources of `#[mcp_resource]`) have one URI, or two templates
    /// are written alike.
    DuplicateResource {
        /// The URI.
        uri: String,
        /// Where the first is declared.
        first: Location,
        /// Where the second is declared.
        second: Location,
    },
    /// A tool takes application state (`State<T>`) of a type the server was not given.
    MissingState {
        /// The tool.
        tool: String,
        /// The state's type.
        state: &'static str,
        /// Where the tool is defined.
        location: Origin,
    },
    /// Two prompts have one name.
    DuplicatePrompt {
        /// The name.
        name: String,
        /// Where the first is defined.
        first: Location,
        /// Where the second is defined.
        second: Location,
    },
    /// A prompt of a mounted server, under its mounted name, has the name of another prompt:
    /// one of the server's own, or another of the mounted server's.
    MountedPromptNameTaken {
        /// The mounted name.
        name: String,
    },
    /// A prompt takes application state (`State<T>`) of a type the server was not given.
    MissingPromptState {
        /// The prompt.
        prompt: String,
        /// The state's type.
        state: &'static str,
        /// Where the prompt is defined.
        location: Location,
    },
    /// Two templates differ only in the names of their variables, so that they match the same
    /// URIs and one would never be read.
    OverlappingTemplates {
        /// The first template, and where it is declared.
        first: (&'static str, Location),
        /// The second.
        second: (&'static str, Location),
    },
    /// A resource takes application state (`State<T>`) of a type the server was not given.
    MissingResourceState {
        /// The resource's URI or URI template.
        resource: String,
        /// The state's type.
        state: &'static str,
        /// Where the resource is defined.
        location: Location,
    },
    /// A tool, prompt or resource disabled before the server served, which it does not have.
    UnknownDisabled {
        /// `tool`, `prompt` or `resource`.
        kind: &'static str,
        /// The name, or the resource's URI, as given.
        name: String,
    },
    /// A layer given for a tool ([`Select::tools`](crate::pipeline::Select::tools)) that the
    /// server does not have.
    UnknownLayerTool {
        /// The name, as given.
        name: String,
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
            Conflict::NamespacedNameTooLong { name, location } => write!(
                f,
                "tool at {location}: its namespaced name `{name}` is longer than \
                 {MAX_TOOL_NAME_LEN} characters; shorten the tool's name or its provider"
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
                     resource; declare it with `toolwright::apps::ui_resource!(UiResource::new(\"{uri}\", \
                     ...))` in a crate the server links, or fix the tool's `ui`"
                )?;
                match declared.as_slice() {
                    [] => write!(f, " (no UI resource is declared)"),
                    declared => write!(f, " (declared: {})", declared.join(", ")),
                }
            }
            Conflict::DuplicateResource { uri, first, second } => write!(
                f,
                "two resources have the URI `{uri}`: one at {first}, one at {second}; keep one"
            ),
            Conflict::MissingState {
                tool,
                state,
                location,
            } => write!(
                f,
                "tool `{tool}` at {location} takes `State<{state}>`, but the server was given no \
                 `{state}`: give it one before serving, with `.state(value)`, or \
                 `.state_from(future)` to build it at start"
            ),
            Conflict::DuplicatePrompt {
                name,
                first,
                second,
            } => write!(
                f,
                "two prompts are named `{name}`: one at {first}, one at {second}; rename one with \
                 `#[mcp_prompt(name = \"...\")]`"
            ),
            Conflict::MountedPromptNameTaken { name } => write!(
                f,
                "two prompts are named `{name}`: a mounted server's, and another; rename the \
                 server's own prompt, or mount the server under another name"
            ),
            Conflict::MissingPromptState {
                prompt,
                state,
                location,
            } => write!(
                f,
                "prompt `{prompt}` at {location} takes `State<{state}>`, but the server was given \
                 no `{state}`: give it one before serving, with `.state(value)`, or \
                 `.state_from(future)` to build it at start"
            ),
            Conflict::OverlappingTemplates { first, second } => write!(
                f,
                "the resource templates `{}` at {} and `{}` at {} match the same URIs, so one \
                 would never be read; keep one",
                first.0, first.1, second.0, second.1
            ),
            Conflict::MissingResourceState {
                resource,
                state,
                location,
            } => write!(
                f,
                "resource `{resource}` at {location} takes `State<{state}>`, but the server was \
                 given no `{state}`: give it one before serving, with `.state(value)`, or \
                 `.state_from(future)` to build it at start"
            ),
            Conflict::UnknownDisabled { kind, name } => write!(
                f,
                "the server was asked to disable the {kind} `{name}`, which it does not have"
            ),
            Conflict::UnknownLayerTool { name } => write!(
                f,
                "a layer is given for the tool `{name}` (`Select::tools`), which the server does \
                 not have"
            ),
            Conflict::NotLinked { tools } => {
                const SHOWN: usize = 5;
                let mut names: Vec<String> =
                    tools.iter().take(SHOWN).map(|t| format!("`{t}`")).collect();
                if tools.len() > SHOWN {
                    names.push(format!("{} more", tools.len() - SHOWN));
                }
                write!(
                    f,
                    "the server names no tools crate: write `toolwright::server!(your_tools)` with \
                     the crate its build script names, or refer to it with `use your_tools as _;`. \
                     The linker drops a crate nothing refers to, and {} of the embedded manifest \
                     {} not linked into the binary: {}. If the server names it, \
                     {REBUILT_OTHERWISE}",
                    if tools.len() == 1 { "a tool" } else { "tools" },
                    if tools.len() == 1 { "is" } else { "are" },
                    names.join(", ")
                )
            }
            Conflict::UnenforceableSchema {
                tool,
                at,
                reason,
                location,
            } => {
                write!(
                    f,
                    "tool `{tool}` at {location}: its input schema cannot be enforced: "
                )?;
                if !at.is_empty() {
                    write!(f, "at `{at}`, ")?;
                }
                write!(
                    f,
                    "{reason}; turn the feature on (`toolwright = {{ version = \"0.1\", \
                     features = [\"validate\"] }}`) or state the constraint otherwise"
                )
            }
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

impl Conflict {
    /// Why tool `tool`'s input schema cannot check its calls.
    pub(crate) fn unchecked_input(tool: &str, location: Location, error: CheckError) -> Conflict {
        match error {
            CheckError::Unenforceable(Unsupported { at, reason }) => {
                Conflict::UnenforceableSchema {
                    tool: tool.to_owned(),
                    at,
                    reason,
                    location,
                }
            }
            CheckError::Invalid(error) => Conflict::InvalidSchema {
                tool: tool.to_owned(),
                error,
                location,
            },
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

    /// Every conflict found, owned.
    pub(crate) fn into_conflicts(self) -> Vec<Conflict> {
        self.conflicts
    }
}

impl fmt::Display for RegistryError {
    /// Every conflict, a line each; the likely cause of the others (a tools crate the server
    /// does not name) first, on the first line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cause = self
            .conflicts
            .iter()
            .find(|c| matches!(c, Conflict::NotLinked { .. }));
        match cause {
            Some(cause) => write!(f, "the tools cannot be served: {cause}")?,
            None => write!(f, "the tools cannot be served:")?,
        }
        for conflict in self
            .conflicts
            .iter()
            .filter(|c| !matches!(c, Conflict::NotLinked { .. }))
        {
            write!(f, "\n  - {conflict}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RegistryError {}
