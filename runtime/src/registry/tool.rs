//! One tool as a registry holds it: where it comes from (its registration, or the server it is
//! mounted from), its names, and its `tools/list` JSON, ready to list and call.

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;

#[cfg(feature = "gateway")]
use super::source::Mounted;
pub(crate) use super::source::Source;
use crate::apps::ToolUi;
use crate::content::ToolResult;
use crate::handler::Handler;
use crate::names::CanonicalName;
use crate::registration::{Annotations, Location, ToolRegistration};
use crate::schema::check::{ArgumentCheck, OutputCheck};
use crate::search::Described;
use crate::state::StateType;
use crate::tasks::TaskSupport;
use toolwright_rules as rules;

/// One tool, ready to list and call.
pub struct Tool {
    pub(super) source: Source,
    /// The name `tools/list` shows and `tools/call` takes: the tool's name, or
    /// `<provider>__<tool>` on a namespaced registry.
    pub(super) wire_name: String,
    pub(super) canonical_name: CanonicalName,
    /// The tool object `tools/list` sends, as canonical JSON (compact, keys sorted): the one
    /// copy of its schemas a running server keeps, inside the manifest's bytes once the
    /// registry is assembled.
    pub(super) json: Serialised,
    /// Whether the tool has an `outputSchema`.
    pub(super) structured: bool,
    /// The tool object as a JSON value, read back from `json` the first time it is asked for.
    pub(super) descriptor: OnceLock<Value>,
    /// The argument check, compiled at the tool's first call (at start in debug builds and for
    /// literal schemas, so that a schema the validator refuses stops the server there).
    pub(super) check: OnceLock<Result<ArgumentCheck, String>>,
    /// Checks results against the output schema, in debug builds.
    pub(super) output_check: OutputCheck,
    /// What the manifest says of this tool at start: why it is served as text only, say.
    pub(super) notes: Vec<String>,
    /// The arguments its input schema mirrors in HTTP headers, read the first time they are
    /// asked for.
    pub(super) mirrored: OnceLock<Vec<Mirrored>>,
}

/// Where a tool is defined: in the binary, at a place in its source, or by a mounted server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Linked into the binary, defined here.
    Linked(Location),
    /// Defined by the server mounted under this name.
    Mounted(Arc<str>),
}

impl Origin {
    /// A key that orders origins the same way on every run: by place, mounted ones last.
    pub(super) fn sort_key(&self) -> (u8, &str, u32, u32) {
        match self {
            Origin::Linked(l) => (0, l.file, l.line, l.column),
            Origin::Mounted(mount) => (1, mount, 0, 0),
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Linked(location) => location.fmt(f),
            Origin::Mounted(mount) => write!(f, "the server mounted as `{mount}`"),
        }
    }
}

/// What a call of a tool runs.
pub(crate) enum Runs {
    /// The function `#[mcp_tool]` registered.
    Function(Handler),
    /// A mounted tool's call, forwarded to its server.
    #[cfg(feature = "gateway")]
    Forwarded(Arc<Mounted>),
}

/// An argument the input schema mirrors in an HTTP header (`x-mcp-header`, SEP-2243): a client
/// of protocol 2026-07-28 sends its value in `Mcp-Param-<header>` too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mirrored {
    /// The top-level property of the arguments.
    pub property: String,
    /// The header's name, after `Mcp-Param-`.
    pub header: String,
}

/// Bytes of JSON, in a buffer that may hold others' too.
pub(super) struct Serialised {
    pub(super) bytes: Bytes,
    pub(super) range: Range<usize>,
}

impl Serialised {
    pub(super) fn new(bytes: Vec<u8>) -> Serialised {
        let range = 0..bytes.len();
        Serialised {
            bytes: bytes.into(),
            range,
        }
    }
}

impl Tool {
    /// Its MCP Apps view and who may call it.
    pub fn ui(&self) -> ToolUi {
        match &self.source {
            Source::Registered(registration) => registration.ui,
            #[cfg(feature = "gateway")]
            Source::Mounted(_) => ToolUi::NONE,
        }
    }

    /// Whether only the server's views may call it: its visibility leaves out the model.
    pub fn is_app_only(&self) -> bool {
        !self.ui().visibility().model
    }

    /// The tool's own name, as `#[mcp_tool]` gave it, or as its own server calls it.
    pub fn name(&self) -> &str {
        match &self.source {
            Source::Registered(registration) => registration.name,
            #[cfg(feature = "gateway")]
            Source::Mounted(mounted) => &mounted.name,
        }
    }

    /// The name clients list and call: [`name`](Tool::name), or `<provider>__<tool>` in a
    /// [namespaced](super::Registry::namespaced) registry.
    pub fn wire_name(&self) -> &str {
        &self.wire_name
    }

    /// The tool's identity across servers, `mcp::<provider>::<tool>`; never a wire name.
    pub fn canonical_name(&self) -> &CanonicalName {
        &self.canonical_name
    }

    /// The display name, if any.
    pub fn title(&self) -> Option<&str> {
        match &self.source {
            Source::Registered(registration) => registration.title,
            #[cfg(feature = "gateway")]
            Source::Mounted(mounted) => mounted.title.as_deref(),
        }
    }

    /// What the tool does.
    pub fn description(&self) -> &str {
        match &self.source {
            Source::Registered(registration) => registration.description,
            #[cfg(feature = "gateway")]
            Source::Mounted(mounted) => &mounted.description,
        }
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
        match &self.source {
            Source::Registered(registration) => registration.annotations,
            #[cfg(feature = "gateway")]
            Source::Mounted(mounted) => mounted.annotations,
        }
    }

    /// The tags. A mounted tool has none: [`provider`](Tool::provider) names its server.
    pub fn tags(&self) -> &'static [&'static str] {
        match &self.source {
            Source::Registered(registration) => registration.tags,
            #[cfg(feature = "gateway")]
            Source::Mounted(_) => &[],
        }
    }

    /// The OAuth scopes a caller's access token must grant (`#[mcp_tool(scopes = [...])]`).
    pub fn scopes(&self) -> &'static [&'static str] {
        match &self.source {
            Source::Registered(registration) => registration.scopes,
            #[cfg(feature = "gateway")]
            Source::Mounted(mounted) => mounted.scopes,
        }
    }

    /// Whether the catalog always lists the tool.
    pub fn is_core(&self) -> bool {
        match &self.source {
            Source::Registered(registration) => registration.core,
            #[cfg(feature = "gateway")]
            Source::Mounted(_) => false,
        }
    }

    /// The provider in the canonical name: the crate's, or the mount's for a mounted tool.
    pub fn provider(&self) -> &str {
        match &self.source {
            Source::Registered(registration) => registration.provider,
            #[cfg(feature = "gateway")]
            Source::Mounted(mounted) => &mounted.mount,
        }
    }

    /// Whether the tool may run as a task, or only as one (`#[mcp_tool(task = "...")]`): what
    /// its `execution.taskSupport` tells clients, which a tool that is never a task leaves out.
    pub fn task_support(&self) -> TaskSupport {
        match &self.source {
            Source::Registered(registration) => registration.task,
            #[cfg(feature = "gateway")]
            Source::Mounted(_) => TaskSupport::Forbidden,
        }
    }

    /// How long a call may run before it is stopped, as `#[mcp_tool(timeout = "...")]` says;
    /// `None` for the server's limit ([`Server::call_timeout`](crate::Server::call_timeout)).
    pub fn timeout(&self) -> Option<Duration> {
        match &self.source {
            Source::Registered(registration) => registration.timeout,
            #[cfg(feature = "gateway")]
            Source::Mounted(mounted) => mounted.timeout,
        }
    }

    /// The application state types it takes (`State<T>` parameters).
    pub(crate) fn states(&self) -> &'static [StateType] {
        match &self.source {
            Source::Registered(registration) => registration.states,
            #[cfg(feature = "gateway")]
            Source::Mounted(_) => &[],
        }
    }

    /// Where the tool is defined; `None` for a mounted tool, which its server defines.
    pub fn location(&self) -> Option<Location> {
        match &self.source {
            Source::Registered(registration) => Some(registration.location),
            #[cfg(feature = "gateway")]
            Source::Mounted(_) => None,
        }
    }

    /// Where the tool is defined: its place in the source, or the server it is mounted from.
    pub fn origin(&self) -> Origin {
        match &self.source {
            Source::Registered(registration) => Origin::Linked(registration.location),
            #[cfg(feature = "gateway")]
            Source::Mounted(mounted) => Origin::Mounted(Arc::clone(&mounted.mount)),
        }
    }

    /// The registration `#[mcp_tool]` made, for a tool linked into the binary.
    pub(crate) fn registration(&self) -> Option<&'static ToolRegistration> {
        match &self.source {
            Source::Registered(registration) => Some(registration),
            #[cfg(feature = "gateway")]
            Source::Mounted(_) => None,
        }
    }

    /// The tool as `tools/list` describes it.
    pub fn descriptor(&self) -> &Value {
        self.descriptor.get_or_init(|| self.read_json())
    }

    /// The tool object read back from its JSON.
    pub(super) fn read_json(&self) -> Value {
        serde_json::from_slice(self.json()).expect("a tool's own JSON reads back")
    }

    /// The arguments its input schema mirrors in HTTP headers (`x-mcp-header` on a top-level
    /// property whose name is a token), in the schema's order.
    pub fn mirrored(&self) -> &[Mirrored] {
        self.mirrored.get_or_init(|| {
            const KEY: &[u8] = b"\"x-mcp-header\"";
            // Most tools mirror nothing: their JSON is not read for it.
            if !self.json().windows(KEY.len()).any(|w| w == KEY) {
                return Vec::new();
            }
            let Some(Value::Object(properties)) = self.input_schema().get("properties") else {
                return Vec::new();
            };
            properties
                .iter()
                .filter_map(|(property, schema)| {
                    let header = schema.get("x-mcp-header")?.as_str()?;
                    rules::header_name(header).ok()?;
                    Some(Mirrored {
                        property: property.clone(),
                        header: header.to_owned(),
                    })
                })
                .collect()
        })
    }

    /// The tool as `tools/list` sends it: compact JSON, keys sorted.
    /// The tool as search indexes it: its descriptor and its tags.
    pub(crate) fn described(&self) -> Described<'_> {
        Described {
            json: self.json(),
            tags: self.tags(),
        }
    }

    pub(crate) fn json(&self) -> &[u8] {
        &self.json.bytes[self.json.range.clone()]
    }

    /// What a call runs: a registered tool's function, or a mounted tool's forwarding.
    pub(crate) fn runs(&self) -> Runs {
        match &self.source {
            Source::Registered(registration) => Runs::Function(registration.handler),
            #[cfg(feature = "gateway")]
            Source::Mounted(mounted) => Runs::Forwarded(Arc::clone(mounted)),
        }
    }

    /// Checks arguments against the input schema; the error lists every problem, a line each.
    pub(crate) fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        let check = self.check.get_or_init(|| {
            let compiled = match self.descriptor.get() {
                Some(descriptor) => {
                    ArgumentCheck::new(&descriptor["inputSchema"]).map_err(|e| e.to_string())
                }
                // Release builds take an embedded manifest's JSON as the build wrote it: read
                // it here without trusting it, so a damaged tool fails its calls, not the server.
                None => match serde_json::from_slice::<Value>(self.json()) {
                    Ok(tool) => ArgumentCheck::new(&tool["inputSchema"]).map_err(|e| e.to_string()),
                    Err(error) => Err(format!("the tool's JSON does not read: {error}")),
                },
            };
            #[cfg(feature = "gateway")]
            let compiled = match (compiled, &self.source) {
                (Err(error), Source::Mounted(mounted)) => mounted.unchecked(&error),
                (compiled, _) => compiled,
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

    /// Checks a result against the output schema (debug builds with `validate`): `Ok` for a
    /// tool without one and for tool errors; otherwise every problem, a line each.
    pub(crate) fn check_output(&self, result: &ToolResult) -> Result<(), String> {
        self.output_check.check(result)
    }

    /// What the manifest notes of the tool: why it is served as text only, say.
    pub(crate) fn notes(&self) -> &[String] {
        &self.notes
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name())
            .field("provider", &self.provider())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_tool_whose_json_does_not_read_fails_its_calls_not_the_server() {
        // What a release build holds for a tool of a hand-damaged manifest: its JSON unread,
        // its check not compiled yet.
        let registration = Box::leak(Box::new(crate::fixtures::tool("broken", "")));
        let tool = Tool {
            source: Source::Registered(registration),
            wire_name: "broken".to_owned(),
            canonical_name: CanonicalName::new("test", "broken").unwrap(),
            json: Serialised::new(br#"{"name";"broken"}"#.to_vec()),
            structured: false,
            descriptor: OnceLock::new(),
            check: OnceLock::new(),
            output_check: OutputCheck::new(None).unwrap(),
            notes: Vec::new(),
            mirrored: OnceLock::new(),
        };
        let error = tool.check_arguments(&json!({})).unwrap_err();
        assert!(
            error.starts_with(
                "the tool's input schema cannot be compiled, so no call can be checked: the \
                 tool's JSON does not read: "
            ),
            "{error}"
        );
    }
}
