//! The registration record `#[mcp_tool]` submits, and the traits that convert what a tool takes
//! and returns.

use std::fmt::{self, Display};
use std::future::Future;
use std::pin::Pin;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::apps::ToolUi;
use crate::{Context, ToolResult};

/// A boxed, sendable future: what an asynchronous tool's handler returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// One tool, as `#[mcp_tool]` registers it: everything known at compile time.
///
/// The runtime turns each registration into a [`Tool`](crate::Tool) once, at start, deriving its
/// schemas. Generated code builds these; building one by hand is possible but not the intended
/// use.
#[derive(Debug)]
pub struct ToolRegistration {
    /// The name on the wire.
    pub name: &'static str,
    /// A display name for people.
    pub title: Option<&'static str>,
    /// What the tool does, for the model that chooses it.
    pub description: &'static str,
    /// The protocol's behaviour hints.
    pub annotations: Annotations,
    /// Words that group tools for the catalog's search.
    pub tags: &'static [&'static str],
    /// Whether the catalog always lists the tool.
    pub core: bool,
    /// The provider in the canonical name `mcp::<provider>::<tool>`.
    pub provider: &'static str,
    /// Its MCP Apps view and who may call it.
    pub ui: ToolUi,
    /// The input schema: derived from the parameters, or written out by hand.
    pub input_schema: InputSchema,
    /// Derives the output schema, when the return type has one.
    pub output_schema: fn(&mut SchemaGenerator) -> Option<Schema>,
    /// Runs the tool.
    pub handler: Handler,
    /// Where the tool is defined, for error messages.
    pub location: Location,
}

inventory::collect!(ToolRegistration);

#[cfg(test)]
impl ToolRegistration {
    /// A registration as the library's tests make them by hand: this name and description, no
    /// title, hints, tags or view, provider `test`, any object as arguments, no output schema,
    /// and a handler that returns nothing. Change fields with struct update syntax.
    pub(crate) fn for_tests(name: &'static str, description: &'static str) -> ToolRegistration {
        ToolRegistration {
            name,
            title: None,
            description,
            annotations: Annotations::default(),
            tags: &[],
            core: false,
            provider: "test",
            ui: ToolUi::NONE,
            input_schema: InputSchema::Literal(r#"{"type": "object"}"#),
            output_schema: |_| None,
            handler: Handler::Blocking(|_, _| Output::empty()),
            location: Location {
                file: file!(),
                line: line!(),
                column: column!(),
                module_path: module_path!(),
            },
        }
    }
}

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

/// Where a tool is defined in the source.
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

impl Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A type-erased tool function: arguments (already checked against the input schema) and the
/// call's context in, the tool's output out.
#[derive(Clone, Copy)]
pub enum Handler {
    /// An `async fn`, run on the server's runtime.
    Async(fn(Value, Context) -> BoxFuture<Output>),
    /// A plain `fn`, run on the server's runtime like an `async fn` that never waits: for work
    /// that takes microseconds, not for work that blocks.
    Sync(fn(Value, Context) -> Output),
    /// A plain `fn` marked `#[mcp_tool(blocking)]`, run on tokio's blocking thread pool, where
    /// it may block (files, the network, long computations) without holding up other calls.
    Blocking(fn(Value, Context) -> Output),
}

impl fmt::Debug for Handler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Handler::Async(_) => "Handler::Async",
            Handler::Sync(_) => "Handler::Sync",
            Handler::Blocking(_) => "Handler::Blocking",
        })
    }
}

/// What a tool produced, before the runtime shapes it into a `CallToolResult` for its tool.
#[derive(Debug)]
pub struct Output(pub(crate) Produced);

#[derive(Debug)]
pub(crate) enum Produced {
    /// A serialised return value; structured when the tool has an output schema.
    Value(Value),
    /// A result the tool built itself.
    Result(ToolResult),
    /// `()`: no content.
    Empty,
    /// An `Err`, or arguments that could not be read: `isError` with this text.
    Error(String),
}

impl Output {
    /// No content: what `()` returns.
    pub fn empty() -> Output {
        Output(Produced::Empty)
    }

    /// A tool error with the error's text; the model reads it and may try again.
    pub fn error<E: ToolError>(error: E) -> Output {
        Output(Produced::Error(error.message()))
    }
}

impl From<ToolResult> for Output {
    fn from(result: ToolResult) -> Output {
        Output(Produced::Result(result))
    }
}

/// A type a tool can return.
///
/// Implemented for every type that implements `Serialize` and `JsonSchema`, and for
/// [`ToolResult`]. `()` and `Result` are recognised by `#[mcp_tool]` itself.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a tool",
    label = "derive `Serialize` and `JsonSchema` for this type, or return a `ToolResult`",
    note = "a tool returns a type that implements `Serialize` and `JsonSchema`, `()`, a \
            `toolwright::ToolResult`, or a `Result` of one of these whose error implements `Display`"
)]
pub trait ToolOutput {
    /// The schema of the output, or `None` when the output has no fixed shape.
    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema>;

    /// Converts the value returned by the tool.
    fn into_output(self) -> Output;
}

impl<T: Serialize + JsonSchema> ToolOutput for T {
    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        Some(generator.root_schema_for::<T>())
    }

    fn into_output(self) -> Output {
        match serde_json::to_value(&self) {
            Ok(value) => Output(Produced::Value(value)),
            Err(err) => Output(Produced::Error(format!(
                "the tool's output could not be serialised: {err}"
            ))),
        }
    }
}

impl ToolOutput for ToolResult {
    fn output_schema(_: &mut SchemaGenerator) -> Option<Schema> {
        None
    }

    fn into_output(self) -> Output {
        Output(Produced::Result(self))
    }
}

/// An error a tool can return in `Err`: anything that implements `Display`.
///
/// The text is the alternate form (`{:#}`), so an `anyhow::Error` shows its chain of causes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error",
    label = "implement `Display` for this type",
    note = "an `Err` is shown to the model as its `Display` text"
)]
pub trait ToolError {
    /// The text the model reads.
    fn message(&self) -> String;
}

impl<E: Display + ?Sized> ToolError for E {
    fn message(&self) -> String {
        format!("{self:#}")
    }
}

/// A type a tool can take as an argument: read from JSON, described in the input schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument",
    label = "derive `Deserialize` and `JsonSchema` for this type",
    note = "a tool argument is read from the call's JSON and described in the tool's input \
            schema: add `#[derive(serde::Deserialize, schemars::JsonSchema)]` to the type"
)]
pub trait ToolArgument: DeserializeOwned + JsonSchema {}

impl<T: DeserializeOwned + JsonSchema> ToolArgument for T {}

/// A type that can take a tool's arguments when the tool gives its input schema as literal JSON:
/// the whole arguments object is read into it, and the schema describes it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot take a tool's arguments",
    label = "the whole arguments object is read into this type",
    note = "with `input_schema = \"...\"`, the tool's one argument parameter is a \
            `serde_json::Value`, a `serde_json::Map<String, Value>` or a type that derives \
            `Deserialize`"
)]
pub trait LiteralArgument: DeserializeOwned {}

impl<T: DeserializeOwned> LiteralArgument for T {}

/// Hands toolwright's [`Context`] to a parameter whose type is named `Context`. Generated code
/// converts through this trait instead of passing the context directly, so that another type
/// named `Context` fails here, once, at the user's type, instead of also as a mismatched argument.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `toolwright::Context`",
    label = "a parameter whose type is named `Context` is the tool's context",
    note = "to take your own type as an argument, import it under another name: \
            `use my_crate::Context as MyContext;`"
)]
pub trait IsContext {
    /// The context, for a parameter that takes it by value.
    fn from_context(context: Context) -> Self;

    /// The context, for a parameter that borrows it.
    fn from_ref(context: &Context) -> &Self;
}

impl IsContext for Context {
    fn from_context(context: Context) -> Context {
        context
    }

    fn from_ref(context: &Context) -> &Context {
        context
    }
}

/// Reads the arguments struct; arguments have been checked against the schema already, so an
/// error here is one the schema cannot express (a number too large for its type, say).
pub fn parse_arguments<T: DeserializeOwned>(arguments: Value) -> Result<T, Output> {
    read_arguments(arguments)
}

/// Reads the whole arguments object of a tool with a literal input schema.
pub fn parse_literal_arguments<T: LiteralArgument>(arguments: Value) -> Result<T, Output> {
    read_arguments(arguments)
}

fn read_arguments<T: DeserializeOwned>(arguments: Value) -> Result<T, Output> {
    serde_json::from_value(arguments)
        .map_err(|err| Output(Produced::Error(format!("invalid arguments: {err}"))))
}
