//! Turn plain Rust functions into [MCP](https://modelcontextprotocol.io) tools.
//!
//! Put [`#[mcp_tool]`](mcp_tool) on a function. Its parameters become the tool's input schema,
//! its doc comments the descriptions a model reads, its return type the output schema, and the
//! tool is registered in a linker-collected registry: a server binary serves every tool linked
//! into it, from any module of any crate, without listing them.
//!
//! ```no_run
//! use toolwright::mcp_tool;
//!
//! /// Add two integers.
//! #[mcp_tool(read_only, idempotent)]
//! fn add(
//!     /// The first term.
//!     a: i64,
//!     /// The second term.
//!     b: i64,
//! ) -> i64 {
//!     a + b
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     toolwright::server!().run_stdio()
//! }
//! ```
//!
//! # What a tool sees and returns
//!
//! - Each named parameter is a property of the input schema, described by its `///` comments.
//!   `Option<T>` is optional and everything else required; [`#[arg(default = ...)]`](mcp_tool)
//!   makes a parameter optional with a default, `#[arg(rename = "...")]` renames it and
//!   `#[arg(flatten)]` lifts a struct's fields to the top level. Borrowed types (`&str`, `&[T]`,
//!   `&Path`, `&T`) are read as their owned forms and lent to the function.
//! - A parameter whose type is named `Context` (`Context` or `&Context`) is the call's
//!   [`Context`]: the runtime supplies it and it never appears in the schema. Any other type named
//!   `Context` is refused at compile time, so the rule has no exceptions to remember.
//! - A parameter whose type is named `State` (`State<T>` or `&State<T>`) is application state:
//!   the one `T` the server was given ([`Server::state`]), never in the schema either; see
//!   [`state`].
//! - Arguments are checked against the input schema before the function runs, with every feature
//!   set: what the schema refuses is refused, naming the argument by its path (`address.city`,
//!   `items[2]`) and the rule it breaks; unknown arguments are refused
//!   (`additionalProperties: false`) with an error that names the expected ones. toolwright's own
//!   validator enforces what schemas commonly say (types, `required`, `enum`, ranges, lengths,
//!   `pattern`, items, `anyOf`/`oneOf`/`allOf`/`not`, local `$ref`s); a schema that asks more
//!   (`if`, `dependentSchemas`, `unevaluatedProperties`, a remote `$ref`) needs the `validate`
//!   feature (jsonschema), and without it the server refuses to start, naming the tool and the
//!   keyword, rather than publish a constraint it would not keep. `format` is an annotation, as
//!   JSON Schema 2020-12 has it, and is not asserted.
//! - A return type that implements `Serialize` and `JsonSchema` with an object at its root
//!   becomes the tool's `outputSchema`, and each call returns it as `structuredContent` plus the
//!   same JSON as text. Any other root (a number, a string, a list) is served as text: a `String`
//!   as itself, anything else as JSON. `()` returns no content, and a [`ToolResult`] returns
//!   exactly the content blocks it holds.
//! - A type named `Result` (`std`'s, `anyhow::Result`, `io::Result`, ...) with an error that
//!   implements `Display` turns `Err` into a result with `isError: true` and the error's text,
//!   which the model reads and can act on. A panicking tool also becomes an `isError` result, and
//!   the server keeps serving.
//!
//! # Linking
//!
//! The registry is collected by the linker ([`inventory`](https://docs.rs/inventory)). A linker
//! drops a library crate that nothing in the binary refers to, and its tools with it: when the
//! tools live in another crate, call something from that crate in `main` (a setup function, a
//! constructor). A server whose registry is empty says so on stderr.
//!
//! # Where things are
//!
//! The root holds what a tool's and a server's author write with; [`#[mcp_prompt]`](mcp_prompt)
//! makes prompts and [`#[mcp_resource]`](mcp_resource) resources as `#[mcp_tool]` makes tools,
//! with their types in [`prompt`], [`resource`] and [`completion`] (what suggests their
//! values); [`context`] holds what a call sees, [`Context`], and its questions to the client;
//! [`ServerHandle`] changes what a running server serves and tells its clients. Tooling has
//! modules of its own: [`registry`] (the tools a server serves, and what stops them),
//! [`manifest`] (the manifest, its hashes, its diff), [`profile`] (a manifest rendered for a
//! client's rules), [`names`] (canonical names), [`search`] (the progressive catalog's ranking,
//! over any manifest), [`catalog`], [`content`], [`state`] (what tools share, what a session keeps),
//! [`testing`] (tools called in-process, as a client calls them), [`apps`] (MCP Apps views),
//! [`build`] (a build script's guard), [`auth`] (who calls: principals, and OAuth behind its
//! feature), and, behind their features, `cli` and `http`.
//!
//! # Features
//!
//! On by default: `cli`, the flags of [`Server::run`] (clap). Off by default: `http`, the
//! Streamable HTTP transport (axum, hyper), which a stdio server does not carry. Without them a
//! server serves the same tools on stdio, and says which feature it lacks when asked for what the
//! feature does (`--http`, say). Also off by default: `validate`, the whole of JSON Schema
//! (jsonschema) for the input schemas that ask more than toolwright's own validator enforces,
//! literal schemas checked against their meta-schema, and results checked against the output
//! schema in debug builds; `oauth`, the server as
//! an OAuth 2.1 resource server over HTTP ([`auth`]; jsonwebtoken, reqwest with rustls), and
//! `semantic`, search ranked by meaning too with a sentence-embedding model run in-process
//! ([`search`]; candle, tokenizers).

#![cfg_attr(docsrs, feature(doc_cfg))]

mod answers;
pub mod apps;
pub mod auth;
pub mod build;
pub mod catalog;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "client")]
pub mod client;
pub mod completion;
pub mod content;
pub mod context;
#[cfg(test)]
mod fixtures;
#[cfg(feature = "gateway")]
pub mod gateway;
mod handler;
#[cfg(feature = "http")]
pub mod http;
mod live;
mod logging;
pub mod manifest;
pub mod names;
pub mod profile;
pub mod prompt;
mod protocol;
mod registration;
pub mod registry;
pub mod resource;
mod schema;
pub mod search;
mod serve;
pub mod server;
mod sink;
pub mod state;
pub mod stdio;
pub mod store;
pub mod tasks;
#[cfg(feature = "otel")]
pub mod telemetry;
pub mod testing;

pub use content::{Content, ToolResult};
pub use context::Context;
pub use live::ServerHandle;
pub use protocol::LogLevel;
pub use server::pipeline;
pub use server::{Error, Server};
pub use state::State;

/// Turns a free function into an MCP tool.
///
/// ```
/// use toolwright::mcp_tool;
///
/// /// Find notes whose title or body contains the query.
/// ///
/// /// Matching ignores case.
/// #[mcp_tool(read_only, tags = ["notes"])]
/// async fn search_notes(
///     /// Words to look for.
///     query: &str,
///     /// How many notes to return at most.
///     #[arg(default = 10)]
///     limit: u32,
/// ) -> Vec<String> {
///     vec![format!("{query} ({limit})")]
/// }
/// ```
///
/// # Where it goes
///
/// On a free `fn` or `async fn` with concrete types. Methods, generic functions, `impl Trait`
/// parameters or return types, destructuring patterns, `const`, `unsafe` and `extern` functions
/// and variadics are compile errors that say what to write instead.
///
/// Every call runs on the server's tokio runtime. An `async fn` runs there; so does a plain
/// `fn`, like an `async fn` that never waits, which suits work that takes microseconds
/// (computing, reading memory). On stdio, a call that completes when first polled is answered
/// by the connection's own task, with no hand-off between threads; one that waits continues as
/// a task of its own, so calls that wait run side by side. A plain `fn` that blocks (files, the network,
/// sleeping, long computations) takes `blocking`, and runs on tokio's blocking thread pool,
/// where it holds up no other call. An `async fn` never blocks; `blocking` on one is a compile
/// error.
///
/// # Options
///
/// | option | meaning |
/// | --- | --- |
/// | `name = "..."` | the tool's name on the wire; default: the function's name (without `r#`). 1 to 128 of `A-Z a-z 0-9 _ - .` (SEP-986), checked at compile time |
/// | `description = "..."` | what the tool does; default: the function's doc comment. A tool with neither does not compile |
/// | `title = "..."` | a display name for people |
/// | `read_only`, `destructive`, `idempotent`, `open_world` | the protocol's annotation hints; bare means `true`, or write `= true`/`= false`. Left out, a hint is not sent and clients assume the protocol's default |
/// | `tags = ["...", ...]` | words that group tools, for the catalog's search |
/// | `core` | a tool the catalog always lists, for servers with many tools |
/// | `blocking` | for a plain `fn` that blocks: run it on tokio's blocking thread pool, not on the runtime (see above) |
/// | `task = "optional"` | whether the tool may (`"optional"`) or must (`"required"`) run as an MCP task: the server answers the call at once with the task's id and the client polls `tasks/get` for its status and result (see [`tasks`]); `"forbidden"`, the default, never. Listed as `execution.taskSupport`, left out when forbidden |
/// | `timeout = "30s"` | how long a call may run before it is stopped and answered with a tool error naming the tool and the limit (a number and a unit: `"500ms"`, `"2m"`, `"1h 30m"`); takes the place of [`Server::call_timeout`] for this tool. A call that runs as a task is bounded by the task's TTL instead |
/// | `provider = "..."` | the middle of the canonical name `mcp::<provider>::<tool>`; default: the package name |
/// | `ui = "ui://..."` | the tool's MCP Apps view: a `ui://` resource declared with [`ui_resource!`](apps::ui_resource), shown by hosts with the extension next to the result (see [`apps`]). Checked at compile time to be a `ui://` URI naming something, and at start to be declared |
/// | `visibility = ["model", "app"]` | whom hosts offer the tool to: the model, the server's views, or both (the default). A tool without `"model"` is listed only to clients that declared MCP Apps, and the progressive catalog never offers it. Hosts enforce it; it is not access control (see [`apps`]). Checked at compile time |
/// | `input_schema = r#"{...}"#` | the input schema as literal JSON, served exactly as written (see below); checked at compile time to be a JSON object with `"type": "object"` |
/// | `crate = path` | where `toolwright` is, when the dependency is renamed |
///
/// # A literal input schema
///
/// `input_schema` is the escape hatch for a schema the parameters cannot express. The JSON is
/// passed through unchanged: `$schema`, `$defs`, `$ref` and `additionalProperties` stay as
/// written, and nothing is added (no `additionalProperties: false`, no `properties`). Arguments
/// are still checked against it before the function runs, in the dialect its `$schema` names
/// (2020-12 when it names none): by toolwright's own validator, or, for a schema that asks more
/// than it enforces (`if`, `dependentSchemas`, ...), by jsonschema with the `validate` feature. At
/// start, a root that is not `type: object`, a schema that could not be enforced (such a keyword
/// without `validate`), a schema that is not valid in its dialect (checked with `validate`) or a
/// `$ref` that resolves to nothing stops the server with a [`Conflict`](registry::Conflict).
///
/// Nothing is derived from the parameters, so the schema alone describes the arguments: the
/// function takes **at most one** argument parameter (besides an optional `Context`), which
/// receives the whole arguments object. Its type is `serde_json::Value`,
/// `serde_json::Map<String, Value>`, or any type that implements `Deserialize` (it needs no
/// `JsonSchema`); `&T` borrows it as usual. That parameter takes no `#[arg]` and no doc comment:
/// descriptions go in the schema. Each of these is a compile error on the offending token.
///
/// ```
/// use toolwright::mcp_tool;
///
/// /// Find where someone lives.
/// #[mcp_tool(input_schema = r##"{
///     "$schema": "https://json-schema.org/draft/2020-12/schema",
///     "type": "object",
///     "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
///     "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
///     "additionalProperties": false
/// }"##)]
/// fn locate(arguments: serde_json::Value) -> String {
///     format!("{}", arguments["address"]["city"])
/// }
/// ```
///
/// # Parameter attributes
///
/// | attribute | meaning |
/// | --- | --- |
/// | `#[arg(default = expr)]` | optional, with this default (shown as `"default"` in the schema); a string literal converts with `Into` |
/// | `#[arg(rename = "...")]` | the property's name in the schema |
/// | `#[arg(flatten)]` | the struct's fields become top-level arguments |
/// | `#[arg(header = "Region")]` | the argument is mirrored in the HTTP header `Mcp-Param-Region` (`x-mcp-header`, SEP-2243): clients of protocol 2026-07-28 send it beside the body, so proxies and load balancers can route on it, and the server refuses a request whose header and argument differ (`400`, -32020). A string, an integer or a boolean; the name is an HTTP token, once per tool whatever its case |
pub use toolwright_macros::mcp_tool;

/// Turns a free function into an MCP prompt: a message template a user picks from the
/// client's menu (`prompts/list`), filled in from a few arguments (`prompts/get`).
///
/// ```
/// use toolwright::mcp_prompt;
/// use toolwright::prompt::PromptMessage;
///
/// /// Review a file for bugs and style.
/// #[mcp_prompt(title = "Code review")]
/// fn review(
///     /// The file's path.
///     path: String,
///     /// What to look at most; everything by default.
///     focus: Option<String>,
/// ) -> Vec<PromptMessage> {
///     let focus = focus.unwrap_or_else(|| "everything".to_owned());
///     vec![
///         PromptMessage::user(format!("Review `{path}`, looking at {focus}.")),
///         PromptMessage::assistant("I will read it and list what I find, most serious first."),
///     ]
/// }
/// ```
///
/// - Each parameter is an argument, described by its `///` comments, named after it
///   (`#[arg(rename = "...")]` renames it). The protocol passes arguments as strings: a
///   parameter is `String` (or `&str`), or any type that implements `FromStr` (numbers, `bool`,
///   your own enums), read from the string; `Option<T>` is optional, everything else required.
///   An argument that does not parse, a missing one and an unknown one are refused with -32602,
///   naming it.
/// - A parameter whose type is named `State` (`State<T>` or `&State<T>`) is application state,
///   as for tools, and is checked at start the same way. A parameter whose type is named
///   `Context` (or `&Context`) is the request's [`Context`], through which an `async` prompt
///   asks the client for what it needs ([`Context::elicit`], [`Context::create_message`],
///   [`Context::list_roots`]): requests to the client in the handshake era, an input-required
///   result under protocol 2026-07-28 (see [`Keyed`](context::Keyed)).
/// - It returns text (`String`, `&str`: one message from the user), a
///   [`PromptMessage`](prompt::PromptMessage), or `Vec<PromptMessage>`; a type named `Result`
///   with an error that implements `Display` too, whose `Err` is answered with -32602 and its
///   text (prompts have no error result). A panic is answered with -32603, and the server keeps
///   serving.
/// - `async fn` and plain `fn` both work; a plain `fn` runs on the runtime and must not block,
///   or says `blocking` and runs on tokio's blocking thread pool, as a tool does. A prompt that
///   is not a plain `fn` on the runtime is cancelled as a tool call is.
///
/// Options: `name = "..."` (the function's name by default; 1 to 128 of `A-Z a-z 0-9 _ - .`,
/// checked at compile time), `title = "..."`, `description = "..."` (the doc comment by
/// default; a prompt needs one), `blocking`, `complete(argument = function, ...)` (what suggests an
/// argument's values as the user types it, `completion/complete`: a
/// `fn(&Completion) -> Vec<String>`, see [`completion::Completion`]), `crate = path`. A server
/// with prompts declares the `prompts` capability in both protocol eras, and `completions`
/// when an argument has a completer.
pub use toolwright_macros::mcp_prompt;

/// Turns a free function into an MCP resource (a fixed URI) or a template of resources (a URI
/// template whose variables are the function's parameters), read with `resources/read`.
///
/// ```
/// use toolwright::mcp_resource;
/// use toolwright::resource::Json;
///
/// /// The tags in use, most used first.
/// #[mcp_resource(uri = "notes://tags", mime_type = "application/json")]
/// fn tags() -> Json<Vec<&'static str>> {
///     Json(vec!["home", "work"])
/// }
///
/// /// One note, as Markdown.
/// #[mcp_resource(uri = "notes://{id}", mime_type = "text/markdown", changes)]
/// fn note(
///     /// The note's id.
///     id: u64,
/// ) -> Option<String> {
///     (id == 1).then(|| "# Groceries\n- tea".to_owned())
/// }
/// ```
///
/// - `uri` is a URI (`notes://tags`, listed by `resources/list`) or an RFC 6570 URI template
///   (`notes://{id}`, listed by `resources/templates/list`). A variable `{name}` matches text
///   without `/`, `?`, `#` or the other reserved characters, and its value holds no `/` even
///   percent-encoded (`%2F`): one segment, which cannot walk up a path. `{+name}` matches any
///   text, slashes and `..` included (`file:///{+path}`): a resource that maps it to a file
///   checks where it leads. Each value is percent-decoded. Checked at compile time: a
///   malformed template, a variable no parameter takes or a parameter that is no variable is an
///   error on the offending token.
/// - Each parameter is a variable, named after it (`#[arg(rename = "...")]` renames it), read
///   from its text as `String` (or `&str`) or any type that implements `FromStr`. A value that
///   does not parse means the URI names no resource: `notes://abc` is not a note. `State<T>`
///   (or `&State<T>`) is application state, as for tools, checked at start.
/// - It returns text (`String`, `&str`), bytes (`Vec<u8>`, sent base64-encoded),
///   [`Json`](resource::Json), [`ResourceContents`](content::ResourceContents) or a `Vec` of them,
///   or `Option` of any of these: `None` is "resource not found" (-32002, or -32602 in
///   2026-07-28, with the URI in `data`). A type named `Result` with an error that implements
///   `Display` too, whose `Err` is answered as an internal error (-32603) with its text. A panic
///   is answered the same way, and the server keeps serving.
/// - `async fn` and plain `fn` both work; a plain `fn` runs on the runtime and must not block,
///   or says `blocking` and runs on tokio's blocking thread pool (a file, a database).
///
/// Options: `name = "..."` (the function's name by default), `title = "..."`, `description =
/// "..."` (the doc comment by default), `mime_type = "..."` (applied to contents that set none),
/// `blocking`,
/// `audience = ["user", "assistant"]` and `priority = 0.0..=1.0` (the protocol's annotations),
/// `changes` (the resource changes while the server runs: clients may subscribe to it, and
/// under 2026-07-28 its contents are cached for no time; without it, a resource promises not to
/// change while the server runs), `complete(variable = function, ...)` (suggests a variable's
/// values as the user types it, see [`completion::Completion`]), `crate = path`. A server with
/// resources declares the `resources` capability in both protocol eras, with `subscribe` when
/// one changes.
pub use toolwright_macros::mcp_resource;

/// `serde`, re-exported for the code `#[mcp_tool]` generates and for users who prefer not to
/// depend on it directly (derive with `#[serde(crate = "toolwright::serde")]`).
pub use serde;

/// `schemars`, re-exported for the code `#[mcp_tool]` generates and for users who prefer not to
/// depend on it directly (derive with `#[schemars(crate = "toolwright::schemars")]`).
pub use schemars;

/// A [`Server`] named and versioned after the package that calls it, from `CARGO_PKG_NAME` and
/// `CARGO_PKG_VERSION`, serving the tools of this crate and of the crates it names.
///
/// Name every crate whose tools the server serves: `server!(notes_tools, calendar_tools)`. The
/// linker keeps a crate in the binary only when something refers to it, and a crate it leaves
/// out takes its tools with it, silently; naming the crates here is that reference. Tools
/// defined in the calling crate itself need no name.
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     toolwright::server!().run()
/// }
/// ```
///
/// ```ignore
/// // The tools live in the crate `notes_tools`, a dependency of this one.
/// fn main() -> std::process::ExitCode {
///     toolwright::server!(notes_tools).run()
/// }
/// ```
#[macro_export]
macro_rules! server {
    ($($tools:ident),* $(,)?) => {{
        $(
            // Refers to the crate, so that the linker keeps it and the tools it registers.
            #[allow(unused_imports)]
            use $tools as _;
        )*
        $crate::Server::new(
            ::core::env!("CARGO_PKG_NAME"),
            ::core::env!("CARGO_PKG_VERSION"),
        )
    }};
}

/// Submits a registration to the linker-collected registry. The choice of `inventory` lives here,
/// in `registration.rs` and in `registry/` only.
#[doc(hidden)]
#[macro_export]
macro_rules! __register_tool {
    ($registration:expr) => {
        $crate::__private::inventory::submit! { $registration }
    };
}

/// Items the code generated by `#[mcp_tool]` and the macros of this crate refer to, and the
/// registration records hand-made registries are built from in tests. Not a public API: it
/// changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::apps::{ToolUi, Visibility};
    pub use crate::completion::Completer;
    pub use crate::content::ToolResult;
    pub use crate::context::Context;
    pub use crate::handler::{
        BoxFuture, Handler, HeaderArgument, IntoOutput, IsContext, LiteralArgument, Output,
        ToolArgument, ToolError, parse_arguments, parse_literal_arguments, take_state,
    };
    pub use crate::prompt::{
        ArgumentInfo, IntoPrompt, PromptArgument, PromptArguments, PromptError, PromptHandler,
        PromptMessage, Role, prompt_failed, read_argument, read_optional_argument,
        take_prompt_state,
    };
    pub use crate::registration::{
        Annotations, InputSchema, Location, PromptRegistration, ResourceRegistration,
        ToolRegistration, UiResourceRegistration,
    };
    pub use crate::resource::{
        IntoContents, Read, ResourceAnnotations, ResourceError, ResourceHandler, ResourceRequest,
        VariableInfo, read_variable, resource_failed, take_resource_state,
    };
    pub use crate::state::{FromState, StateType};
    pub use crate::tasks::TaskSupport;
    pub use inventory;
    pub use schemars::{self, Schema, SchemaGenerator};
    pub use serde;
    pub use serde_json::Value;
}
