//! A tool as a server lists it: the JSON the server sent, whole, and its members read on demand.

use serde_json::Value;

/// A tool as the server lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool(pub(crate) Value);

impl Tool {
    /// Its name, as it is called.
    pub fn name(&self) -> &str {
        self.0["name"].as_str().unwrap_or_default()
    }

    /// Its description, if it has one.
    pub fn description(&self) -> Option<&str> {
        self.0["description"].as_str()
    }

    /// The JSON Schema of its arguments.
    pub fn input_schema(&self) -> &Value {
        &self.0["inputSchema"]
    }

    /// The JSON Schema of its structured output, if it declares one.
    pub fn output_schema(&self) -> Option<&Value> {
        self.0.get("outputSchema")
    }

    /// The tool as the server sent it.
    pub fn json(&self) -> &Value {
        &self.0
    }

    /// The tool as the server sent it, owned.
    pub fn into_json(self) -> Value {
        self.0
    }
}
