//! Integration and compile-time tests of toolwright; nothing here is published.
//!
//! The library holds what the test files share: [`stdio::Client`], which drives a server over
//! in-memory pipes as a stdio client would, [`redis::Redis`], a Redis server of a test's own,
//! [`node`], the Node.js programs tests start,
//! [`tool_names`], and [`registration`].

use serde_json::Value;
use toolwright::__private::{Annotations, Handler, InputSchema, Output, ToolRegistration};
use toolwright::apps::ToolUi;
use toolwright::registry::Location;
use toolwright::tasks::TaskSupport;

pub mod node;
pub mod redis;
pub mod stdio;

pub use stdio::Client;

/// The tool names of a `tools/list` result or of a `search_tools` result, in order.
///
/// # Panics
///
/// If `found` has no `tools` array, or a tool no string `name`.
pub fn tool_names(found: &Value) -> Vec<&str> {
    found["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .map(|tool| tool["name"].as_str().expect("a tool name"))
        .collect()
}

/// A tool registration made by hand rather than by `#[mcp_tool]`: this name and description, no
/// title, hints, tags or view, never a task, provider `tests`, any object as arguments, no output
/// schema, and a handler that returns nothing. Change fields with struct update syntax.
pub fn registration(name: &'static str, description: &'static str) -> ToolRegistration {
    ToolRegistration {
        name,
        title: None,
        description,
        annotations: Annotations::default(),
        tags: &[],
        scopes: &[],
        core: false,
        provider: "tests",
        ui: ToolUi::NONE,
        task: TaskSupport::Forbidden,
        timeout: None,
        input_schema: InputSchema::Literal(r#"{"type": "object"}"#),
        output_schema: |_| None,
        states: &[],
        handler: Handler::Blocking(|_, _| Output::Empty),
        location: Location {
            file: file!(),
            line: line!(),
            column: column!(),
            module_path: module_path!(),
        },
    }
}

/// The README's examples compile. They are tested here rather than in `toolwright`, whose
/// published crate holds the README but not where this path finds it.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
