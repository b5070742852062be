//! Integration and compile-time tests of toolwright; nothing here is published.
//!
//! The library holds what the test files share: [`stdio::Client`], which drives a server over
//! in-memory pipes as a stdio client would, and [`tool_names`].

use serde_json::Value;

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
