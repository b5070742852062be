//! A tool built at start from its registration: its schemas derived (or read, when literal) and
//! checked, and its `tools/list` JSON written.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use super::conflict::Conflict;
use super::tool::{Serialised, Source, Tool};
use crate::names::CanonicalName;
use crate::registration::{InputSchema, ToolRegistration};
use crate::schema::check::{self, ArgumentCheck, OutputCheck};
use crate::schema::{self, dangling_refs, plain};

impl Tool {
    /// The tool a registration describes, with its schemas derived, or every reason it cannot be
    /// served.
    pub(super) fn derive(registration: &'static ToolRegistration) -> Result<Tool, Vec<Conflict>> {
        let tool = registration.name;
        let location = registration.location;
        let mut conflicts = Vec::new();
        let invalid = |error: String| Conflict::InvalidSchema {
            tool: tool.to_owned(),
            error,
            location,
        };
        let literal = matches!(registration.input_schema, InputSchema::Literal(_));
        let input_schema = match registration.input_schema {
            InputSchema::Derived(derive) => schema::input(derive),
            InputSchema::Literal(text) => match serde_json::from_str::<Value>(text) {
                Ok(schema) => schema,
                Err(error) => {
                    return Err(vec![invalid(format!(
                        "its literal `input_schema` is not JSON: {error}"
                    ))]);
                }
            },
        };
        if input_schema.get("type").and_then(Value::as_str) != Some("object") {
            conflicts.push(Conflict::InputNotObject {
                tool: tool.to_owned(),
                location,
            });
        }
        let (output_schema, unstructured_root) = match schema::output(registration.output_schema) {
            Some(s) if s.get("type").and_then(Value::as_str) == Some("object") => (Some(s), None),
            Some(s) => (None, Some(root_type(&s))),
            None => (None, None),
        };
        // A literal schema is written by hand, so it is checked against its meta-schema at every
        // start. A derived one comes from schemars and is the same on every run of a build:
        // debug builds, which a server's tests run, check it.
        let meta_check = [cfg!(debug_assertions) || literal, cfg!(debug_assertions)];
        for (schema, meta_check) in std::iter::once(&input_schema)
            .chain(&output_schema)
            .zip(meta_check)
        {
            if meta_check && let Err(error) = check::meta_schema(schema) {
                conflicts.push(invalid(error));
            }
            for reference in dangling_refs(schema) {
                conflicts.push(Conflict::DanglingRef {
                    tool: tool.to_owned(),
                    reference,
                    location,
                });
            }
        }
        let output_check = OutputCheck::new(output_schema.as_ref()).unwrap_or_else(|error| {
            conflicts.push(invalid(error));
            OutputCheck::new(None).expect("no schema, nothing to compile")
        });
        // A schema no call could be checked against stops the start. Debug builds, which a
        // server's tests run, and a literal schema compile the check now; a release build looks
        // a derived schema over for what the check would refuse and compiles it at the first
        // call, which costs a 500-tool server 2 ms less at start.
        let check = OnceLock::new();
        if cfg!(debug_assertions) || literal {
            match ArgumentCheck::new(&input_schema) {
                Ok(compiled) => {
                    let _ = check.set(Ok(compiled));
                }
                Err(error) => conflicts.push(Conflict::unchecked_input(tool, location, error)),
            }
        } else if let Some(error) = ArgumentCheck::refusal(&input_schema) {
            conflicts.push(Conflict::unchecked_input(tool, location, error));
        }
        if !conflicts.is_empty() {
            return Err(conflicts);
        }
        let mut notes = Vec::new();
        if let Some(root) = unstructured_root {
            notes.push(format!(
                "tool `{tool}` at {location}: its output's schema root is {root}, not an object, \
                 so it has no `outputSchema` and its results are served as text"
            ));
        }
        let structured = output_schema.is_some();
        let descriptor = descriptor(registration, input_schema, output_schema);
        Ok(Tool {
            source: Source::Registered(registration),
            wire_name: tool.to_owned(),
            canonical_name: CanonicalName::registered(registration.provider, tool),
            json: Serialised::new(
                serde_json::to_vec(&descriptor).expect("a JSON value serialises"),
            ),
            structured,
            descriptor: OnceLock::new(),
            check,
            output_check,
            notes,
            mirrored: OnceLock::new(),
        })
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
    if let Some(schemes) = security_schemes(registration.scopes) {
        tool.insert("securitySchemes".into(), schemes);
    }
    if let Some(execution) = execution(registration) {
        tool.insert("execution".into(), execution);
    }
    if let Some(meta) = meta(registration) {
        tool.insert("_meta".into(), meta);
    }
    Value::Object(tool)
}

/// What a caller needs, for a tool with scopes: OAuth 2 with those scopes, as the OpenAI Apps
/// SDK and SEP-1488 describe it (`[{"type": "oauth2", "scopes": [...]}]`).
fn security_schemes(scopes: &[&str]) -> Option<Value> {
    (!scopes.is_empty()).then(|| json!([{ "type": "oauth2", "scopes": scopes }]))
}

/// The tool's `execution`, for a tool that may run as a task: `{"taskSupport": "optional"}` or
/// `"required"`. A tool that never does has none, which clients read as `forbidden`, so that
/// the manifest of a server without tasks stays as it was.
pub(super) fn execution(registration: &ToolRegistration) -> Option<Value> {
    let task = registration.task;
    task.allows_task()
        .then(|| json!({ "taskSupport": task.as_str() }))
}

/// The tool's `_meta`, if it has anything to say: its MCP Apps view and visibility, and its
/// `securitySchemes` again, for the clients that read only `_meta` (the SDKs' tool types drop a
/// field they do not know).
pub(super) fn meta(registration: &ToolRegistration) -> Option<Value> {
    let mut meta = Map::new();
    if let Some(ui) = registration.ui.meta() {
        meta.insert("ui".into(), ui);
    }
    if let Some(schemes) = security_schemes(registration.scopes) {
        meta.insert("securitySchemes".into(), schemes);
    }
    (!meta.is_empty()).then_some(Value::Object(meta))
}

/// How the manifest's note describes the root of an output schema that is not an object.
fn root_type(schema: &Value) -> String {
    match schema.get("type") {
        Some(t) => format!("`{}`", plain(t)),
        None => "not a single type".to_owned(),
    }
}
