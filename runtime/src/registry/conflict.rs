//! Why a registry cannot serve: each problem found at start, with where the tool is.

use std::fmt;

use crate::registration::Location;
use toolwright_rules::MAX_TOOL_NAME_LEN;

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
    /// A namespaced name longer than the protocol allows.
    NamespacedNameTooLong {
        /// The namespaced name.
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
    /// A tool's `ui` names a view that no [`ui_resource!`](crate::apps::ui_resource) declares.
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
        location: Location,
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

    /// Every conflict found, owned.
    pub(crate) fn into_conflicts(self) -> Vec<Conflict> {
        self.conflicts
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
