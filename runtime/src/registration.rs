//! The records `#[mcp_tool]`, `#[mcp_prompt]`, `#[mcp_resource]` and
//! [`ui_resource!`](crate::apps::ui_resource) submit to the linker-collected registry: everything known
//! of a tool, a prompt, a resource or a view at compile time.
//!
//! Generated code builds them through `__private`; they are not an API, so that the record can
//! change with the macro without breaking anyone. What a registry makes of them is public:
//! [`Tool`](crate::registry::Tool).

use std::fmt;
use std::time::Duration;

use schemars::{Schema, SchemaGenerator};

use crate::apps::{ToolUi, UiResource};
use crate::handler::Handler;
use crate::prompt::{ArgumentInfo, PromptHandler};
use crate::resource::{ResourceAnnotations, ResourceHandler, VariableInfo};
use crate::state::StateType;
use crate::tasks::TaskSupport;

/// One tool, as `#[mcp_tool]` registers it.
#[derive(Debug)]
pub struct ToolRegistration {
    /// The name on the wire; the macro checked it against SEP-986.
    pub name: &'static str,
    /// A display name for people.
    pub title: Option<&'static str>,
    /// What the tool does, for the model that chooses it.
    pub description: &'static str,
    /// The protocol's behaviour hints.
    pub annotations: Annotations,
    /// Words that group tools for the catalog's search.
    pub tags: &'static [&'static str],
    /// The OAuth scopes a caller's token must grant; the macro checked each.
    pub scopes: &'static [&'static str],
    /// Whether the catalog always lists the tool.
    pub core: bool,
    /// The provider in the canonical name `mcp::<provider>::<tool>`; the macro checked it.
    pub provider: &'static str,
    /// Its MCP Apps view and who may call it.
    pub ui: ToolUi,
    /// Whether it may or must run as a task (`execution.taskSupport`): `Forbidden` unless
    /// `#[mcp_tool(task = "...")]` says otherwise.
    pub task: TaskSupport,
    /// How long a call may run before it is stopped (`#[mcp_tool(timeout = "30s")]`); `None`
    /// for the server's limit, if it has one.
    pub timeout: Option<Duration>,
    /// The input schema: derived from the parameters, or written out by hand.
    pub input_schema: InputSchema,
    /// Derives the output schema, when the return type has one.
    pub output_schema: fn(&mut SchemaGenerator) -> Option<Schema>,
    /// The application state types the tool takes (`State<T>` parameters).
    pub states: &'static [StateType],
    /// Runs the tool.
    pub handler: Handler,
    /// Where the tool is defined, for error messages.
    pub location: Location,
}

inventory::collect!(ToolRegistration);

/// A [`UiResource`] and where it is declared: what [`ui_resource!`](crate::apps::ui_resource)
/// submits.
#[derive(Debug)]
pub struct UiResourceRegistration {
    /// The view.
    pub resource: UiResource,
    /// Where it is declared, for error messages.
    pub location: Location,
}

inventory::collect!(UiResourceRegistration);

/// One prompt, as `#[mcp_prompt]` registers it.
#[derive(Debug)]
pub struct PromptRegistration {
    /// Its name, which `prompts/get` names.
    pub name: &'static str,
    /// A display name for people.
    pub title: Option<&'static str>,
    /// What the prompt is for, for the user who picks it.
    pub description: &'static str,
    /// Its arguments, in the function's order.
    pub arguments: &'static [ArgumentInfo],
    /// The application state types it takes (`State<T>` parameters).
    pub states: &'static [StateType],
    /// Makes its messages.
    pub handler: PromptHandler,
    /// Where it is defined, for error messages.
    pub location: Location,
}

inventory::collect!(PromptRegistration);

/// One resource, or one template of resources, as `#[mcp_resource]` registers it.
#[derive(Debug)]
pub struct ResourceRegistration {
    /// Its URI, or its URI template (RFC 6570), which the macro checked.
    pub uri: &'static str,
    /// Its name, for programs.
    pub name: &'static str,
    /// A display name for people.
    pub title: Option<&'static str>,
    /// What it holds.
    pub description: Option<&'static str>,
    /// The media type of its contents.
    pub mime_type: Option<&'static str>,
    /// Whom it is for, and how much it matters.
    pub annotations: ResourceAnnotations,
    /// The template's variables, in the template's order; none for a fixed URI.
    pub variables: &'static [VariableInfo],
    /// Whether it changes while the server runs, so that clients may subscribe to it.
    pub changes: bool,
    /// The application state types it takes (`State<T>` parameters).
    pub states: &'static [StateType],
    /// Reads it.
    pub handler: ResourceHandler,
    /// Where it is defined, for error messages.
    pub location: Location,
}

inventory::collect!(ResourceRegistration);

/// Where a tool's input schema comes from.
#[derive(Clone, Copy, Debug)]
pub enum InputSchema {
    /// Derived from the parameters' types, then normalised (inlined, closed, no `$schema`).
    Derived(fn(&mut SchemaGenerator) -> Schema),
    /// Written by hand as JSON (`#[mcp_tool(input_schema = "...")]`) and served exactly as
    /// written: `$schema`, `$defs`, `$ref` and `additionalProperties` are kept, nothing is added.
    Literal(&'static str),
}

/// The protocol's tool annotations: hints about a tool's behaviour, each left out when unset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Annotations {
    /// `readOnlyHint`: the tool does not modify its environment.
    pub read_only: Option<bool>,
    /// `destructiveHint`: the tool may destroy or overwrite data.
    pub destructive: Option<bool>,
    /// `idempotentHint`: calling it again with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// `openWorldHint`: the tool reaches entities outside the server (the web, other services).
    pub open_world: Option<bool>,
}

/// Where a tool or a view is defined in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file, as `file!()` gives it.
    pub file: &'static str,
    /// The line of the `#[mcp_tool]` attribute.
    pub line: u32,
    /// The column of the `#[mcp_tool]` attribute.
    pub column: u32,
    /// The module the tool is defined in.
    pub module_path: &'static str,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}
