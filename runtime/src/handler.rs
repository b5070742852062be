//! The type-erased tool function `#[mcp_tool]` generates, and the traits that convert what a
//! tool takes and returns: the one place where a tool's Rust types meet JSON.

use std::any::Any;
use std::fmt::{self, Display};
use std::future::Future;
use std::pin::Pin;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::content::ToolResult;
use crate::context::Context;
use crate::state::FromState;

/// A boxed, sendable future: what an asynchronous tool's handler returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// A type-erased tool function: arguments (checked against the input schema) and the call's
/// context in, the tool's output out.
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
pub enum Output {
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
    /// A tool error with the error's text; the model reads it and may try again.
    pub fn error<E: ToolError>(error: E) -> Output {
        Output::Error(error.message())
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
pub trait IntoOutput {
    /// The schema of the output, or `None` when the output has no fixed shape.
    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema>;

    /// Converts the value returned by the tool.
    fn into_output(self) -> Output;
}

impl<T: Serialize + JsonSchema> IntoOutput for T {
    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        Some(generator.root_schema_for::<T>())
    }

    fn into_output(self) -> Output {
        match serde_json::to_value(&self) {
            Ok(value) => Output::Value(value),
            Err(err) => Output::Error(format!("the tool's output could not be serialised: {err}")),
        }
    }
}

impl IntoOutput for ToolResult {
    fn output_schema(_: &mut SchemaGenerator) -> Option<Schema> {
        None
    }

    fn into_output(self) -> Output {
        Output::Result(self)
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

/// A type an argument mirrored in an HTTP header (`#[arg(header = "...")]`) may have: the
/// protocol mirrors strings, integers and booleans only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be mirrored in a header",
    label = "`#[arg(header = ...)]` mirrors strings, integers and booleans",
    note = "take a `String` (or `&str`), an integer type or `bool`, or `Option` of one; remove \
            `header` for other types"
)]
pub trait HeaderArgument {}

macro_rules! header_arguments {
    ($($ty:ty),*) => { $(impl HeaderArgument for $ty {})* };
}

header_arguments!(
    String,
    bool,
    i8,
    i16,
    i32,
    i64,
    isize,
    u8,
    u16,
    u32,
    u64,
    usize,
    std::borrow::Cow<'_, str>
);

impl<T: HeaderArgument> HeaderArgument for Option<T> {}

impl IsContext for Context {
    fn from_context(context: Context) -> Context {
        context
    }

    fn from_ref(context: &Context) -> &Context {
        context
    }
}

/// The application state a `State<T>` parameter takes, or the tool error that says why the call
/// has none (the server's start checks every tool's, so only a registry served without that check
/// gets here).
pub fn take_state<S: FromState>(ctx: &Context) -> Result<S, Output> {
    S::from_states(ctx.states()).map_err(Output::Error)
}

/// Reads the arguments struct of tool `tool`; arguments have been checked against the schema
/// already, so an error here is one the schema cannot express (a value a type's own
/// `Deserialize` refuses, say).
pub fn parse_arguments<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, Output> {
    read_arguments(tool, arguments)
}

/// Reads the whole arguments object of tool `tool`, which has a literal input schema.
pub fn parse_literal_arguments<T: LiteralArgument>(
    tool: &str,
    arguments: Value,
) -> Result<T, Output> {
    read_arguments(tool, arguments)
}

/// The arguments as `T`, or a tool error naming the tool and the argument serde refused, worded
/// as the schema check words its own: ``invalid arguments for tool `greet`: argument `name`:
/// invalid type: integer `7`, expected a string``.
fn read_arguments<T: DeserializeOwned>(tool: &str, mut arguments: Value) -> Result<T, Output> {
    integral_floats_as_integers(&mut arguments);
    // Read from a reference, so that a refusal can still look at what was sent.
    match serde_path_to_error::deserialize(&arguments) {
        Ok(value) => Ok(value),
        Err(err) => Err(Output::Error(refusal(
            tool,
            &arguments,
            err,
            &|arguments| serde_path_to_error::deserialize::<_, T>(arguments).map(drop),
        ))),
    }
}

/// What a client reads of arguments serde refused: the tool, the argument's path, serde's words.
/// `read` reads arguments as the tool does, for [`culprit`]; the rest is the same for every
/// tool, so it is compiled once.
fn refusal(
    tool: &str,
    arguments: &Value,
    err: serde_path_to_error::Error<serde_json::Error>,
    read: &dyn Fn(&Value) -> Result<(), serde_path_to_error::Error<serde_json::Error>>,
) -> String {
    let prefix = format!("invalid arguments for tool `{tool}`");
    let mut path = err.path().to_string();
    let inner = err.into_inner();
    let message = inner.to_string();
    if path == "."
        && let Some(name) = culprit(arguments, &message, read)
    {
        path = name;
    }
    // An unknown top-level argument's path is its own name.
    let unknown_here =
        !path.contains(['.', '[']) && message.starts_with(&format!("unknown field `{path}`"));
    if path == "." || unknown_here {
        format!("{prefix}: {}", top_level(&message))
    } else {
        format!("{prefix}: argument `{path}`: {inner}")
    }
}

/// The top-level argument serde refused where its path stops at the root: inside a flattened
/// struct, an untagged or internally tagged enum, whose members serde reads from a buffer the
/// path cannot follow. It is the one argument that is read from that buffer (set to `null`, it
/// is refused at the root too, where a member of the struct itself would be refused at its own
/// path) and without which the refusal goes away. Only on the error path, for an object of at
/// most 64 arguments; `None` when no one argument is at fault (a missing or unknown one is named
/// by serde's own words).
fn culprit(
    arguments: &Value,
    message: &str,
    read: &dyn Fn(&Value) -> Result<(), serde_path_to_error::Error<serde_json::Error>>,
) -> Option<String> {
    const MOST: usize = 64;
    let Value::Object(members) = arguments else {
        return None;
    };
    if members.len() > MOST
        || message.starts_with("missing field")
        || message.starts_with("unknown field")
    {
        return None;
    }
    let changed = |change: &dyn Fn(&mut serde_json::Map<String, Value>)| {
        let mut members = members.clone();
        change(&mut members);
        read(&Value::Object(members))
    };
    let mut found = members.keys().filter(|name| {
        let buffered = match changed(&|members| {
            members.insert((*name).clone(), Value::Null);
        }) {
            Ok(()) => true,
            Err(error) => error.path().to_string() == ".",
        };
        buffered
            && match changed(&|members| {
                members.remove(name.as_str());
            }) {
                Ok(()) => true,
                Err(error) => error.into_inner().to_string() != message,
            }
    });
    match (found.next(), found.next()) {
        (Some(name), None) => Some(name.clone()),
        _ => None,
    }
}

/// serde's words for an argument missing or unknown at the top level, in the schema check's:
/// ``missing field `item` `` becomes ``missing required argument `item` ``, and ``unknown
/// field `colour`, expected `id` or `tags` `` becomes ``unknown argument `colour`; expected one
/// of `id`, `tags` ``, so that a message does not depend on the `validate` feature.
fn top_level(message: &str) -> String {
    if let Some(name) = message.strip_prefix("missing field ").and_then(unquoted) {
        return format!("missing required argument `{name}`");
    }
    let Some((name, expected)) = message
        .strip_prefix("unknown field ")
        .and_then(|rest| rest.split_once(", "))
        .and_then(|(name, expected)| Some((unquoted(name)?, expected)))
    else {
        return message.to_owned();
    };
    let expected = expected.strip_prefix("expected ").unwrap_or(expected);
    let expected = expected.strip_prefix("one of ").unwrap_or(expected);
    let names: Vec<&str> = if expected == "there are no fields" {
        Vec::new()
    } else {
        expected
            .split(", ")
            .flat_map(|part| part.split(" or "))
            .map(|part| unquoted(part).unwrap_or(part))
            .collect()
    };
    crate::schema::check::unknown("argument", name, &names)
}

/// The name in `text` when it is one name in backquotes, as serde quotes a field.
fn unquoted(text: &str) -> Option<&str> {
    text.strip_prefix('`')?
        .strip_suffix('`')
        .filter(|name| !name.contains('`'))
}

/// Writes every number without a fractional part (`1.0`, `2e3`) as an integer. JSON Schema counts
/// them as integers, so the schema check accepts them for an integer argument, and serde would
/// refuse them there ("invalid type: floating point"). A float argument reads the integer as the
/// same number; a `serde_json::Value` argument sees `1` where the client wrote `1.0`, which JSON
/// does not tell apart. A number beyond 64 bits stays as it is, for the schema or serde to refuse.
fn integral_floats_as_integers(value: &mut Value) {
    /// 2^64, the first float above `u64::MAX`.
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.fract() != 0.0 {
                return;
            }
            if (0.0..TWO_64).contains(&f) {
                *value = Value::from(f as u64);
            } else if (-TWO_64 / 2.0..0.0).contains(&f) {
                *value = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(members) => members.values_mut().for_each(integral_floats_as_integers),
        _ => {}
    }
}

/// What a panic said: its message, when it has one.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Args {
        name: String,
        tags: Vec<String>,
        limit: u8,
    }

    fn refused(arguments: Value) -> String {
        match read_arguments::<Args>("greet", arguments) {
            Err(Output::Error(message)) => message,
            Ok(args) => panic!("read {args:?}"),
            Err(_) => panic!("not a tool error"),
        }
    }

    #[test]
    fn a_refused_argument_is_named_with_its_tool() {
        assert_eq!(
            refused(json!({"name": 7, "tags": [], "limit": 1})),
            "invalid arguments for tool `greet`: argument `name`: invalid type: integer `7`, \
             expected a string"
        );
        assert_eq!(
            refused(json!({"name": "a", "tags": ["x", 2], "limit": 1})),
            "invalid arguments for tool `greet`: argument `tags[1]`: invalid type: integer `2`, \
             expected a string"
        );
        // What a schema cannot say: the number is an integer, but too large for the type.
        assert_eq!(
            refused(json!({"name": "a", "tags": [], "limit": 300})),
            "invalid arguments for tool `greet`: argument `limit`: invalid value: integer `300`, \
             expected u8"
        );
    }

    #[test]
    fn an_argument_serde_reads_from_a_buffer_is_named_too() {
        // A flattened struct and an untagged enum: serde reads their members from a buffer
        // its path does not follow.
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Page {
            limit: u32,
            host: std::net::IpAddr,
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Search {
            query: String,
            #[serde(flatten)]
            page: Page,
        }
        let message = |arguments: Value| match read_arguments::<Search>("search-items", arguments) {
            Err(Output::Error(message)) => message,
            _ => panic!("not a tool error"),
        };
        assert_eq!(
            message(json!({"query": "a", "limit": "two", "host": "::1"})),
            "invalid arguments for tool `search-items`: argument `limit`: invalid type: string \
             \"two\", expected u32"
        );
        assert_eq!(
            message(json!({"query": "a", "limit": 2, "host": "localhost"})),
            "invalid arguments for tool `search-items`: argument `host`: invalid IP address \
             syntax"
        );
        // A missing one is named by serde's own words.
        assert_eq!(
            message(json!({"query": "a", "host": "::1"})),
            "invalid arguments for tool `search-items`: missing required argument `limit`"
        );
    }

    #[test]
    fn a_refused_whole_object_names_only_the_tool() {
        assert_eq!(
            refused(json!({"name": "a", "tags": []})),
            "invalid arguments for tool `greet`: missing required argument `limit`"
        );
        assert_eq!(
            refused(json!("Ada")),
            "invalid arguments for tool `greet`: invalid type: string \"Ada\", expected struct Args"
        );
    }

    #[test]
    fn unknown_arguments_are_worded_as_the_schema_check_words_them() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Closed {
            id: u32,
            tags: Option<Vec<String>>,
        }
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Nothing {}
        let closed = read_arguments::<Closed>("tag", json!({"id": 1, "colour": "red"}));
        let nothing = read_arguments::<Nothing>("ping", json!({"x": 1}));
        let message = |output: Output| match output {
            Output::Error(message) => message,
            _ => panic!("not a tool error"),
        };
        assert_eq!(
            message(closed.unwrap_err()),
            "invalid arguments for tool `tag`: unknown argument `colour`; expected one of `id`, \
             `tags`"
        );
        assert_eq!(
            message(nothing.unwrap_err()),
            "invalid arguments for tool `ping`: unknown argument `x`: this tool takes no arguments"
        );
        assert_eq!(
            top_level("unknown field `a`, expected `b`"),
            "unknown argument `a`; expected one of `b`"
        );
        assert_eq!(
            top_level("unknown field `a`, expected one of `b`, `c`, `d`"),
            "unknown argument `a`; expected one of `b`, `c`, `d`"
        );
    }

    #[test]
    fn integral_floats_read_as_integers() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct Numbers {
            count: u32,
            offset: i64,
            ratio: f64,
            any: Value,
        }
        let read = |arguments: Value| read_arguments::<Numbers>("t", arguments);
        let numbers = read(json!({"count": 3.0, "offset": -2e3, "ratio": 1.0, "any": [1.0, 1.5]}));
        assert_eq!(
            numbers.ok(),
            Some(Numbers {
                count: 3,
                offset: -2000,
                ratio: 1.0,
                any: json!([1, 1.5]),
            })
        );
        let message = |arguments| match read(arguments) {
            Err(Output::Error(message)) => message,
            _ => panic!("not refused"),
        };
        assert_eq!(
            message(json!({"count": 2.5, "offset": 0, "ratio": 0, "any": null})),
            "invalid arguments for tool `t`: argument `count`: invalid type: floating point \
             `2.5`, expected u32"
        );
        assert_eq!(
            message(json!({"count": 1e20, "offset": 0, "ratio": 0, "any": null})),
            "invalid arguments for tool `t`: argument `count`: invalid type: floating point \
             `1e+20`, expected u32"
        );
    }
}
