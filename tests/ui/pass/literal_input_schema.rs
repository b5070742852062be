//! A tool may give its input schema as literal JSON: it is served as written, arguments are
//! checked against it, and one parameter receives the whole arguments object.

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolwright::registry::Registry;
use toolwright::{Context, mcp_tool};

const ADDRESS: &str = r##"{
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": false
}"##;

/// Read the whole arguments object as JSON.
#[mcp_tool(input_schema = r##"{
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": false
}"##)]
fn as_value(arguments: Value, ctx: &Context) -> String {
    format!("{} {}", ctx.tool_name(), arguments)
}

/// Count the arguments.
#[mcp_tool(input_schema = r#"{"type": "object"}"#)]
fn as_map(arguments: &Map<String, Value>) -> usize {
    arguments.len()
}

#[derive(Deserialize)]
struct Person {
    name: String,
}

/// Greet someone, read into a struct that has no `JsonSchema`.
#[mcp_tool(input_schema = r#"{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}"#)]
async fn as_struct(person: Person) -> String {
    format!("hello {}", person.name)
}

/// Take nothing.
#[mcp_tool(input_schema = r#"{"type": "object", "properties": {}}"#)]
fn no_parameter() {}

fn main() {
    let registry = Registry::collect().unwrap();
    let schema = |name: &str| registry.get(name).unwrap().input_schema().clone();
    assert_eq!(schema("as_value"), serde_json::from_str::<Value>(ADDRESS).unwrap());
    // Nothing is added: no `properties`, no `additionalProperties`.
    assert_eq!(schema("as_map"), json!({"type": "object"}));
    assert_eq!(schema("as_struct")["required"], json!(["name"]));
    assert_eq!(schema("no_parameter"), json!({"type": "object", "properties": {}}));

    assert_eq!(as_value(json!({"name": "x"}), &Context::detached("t")), r#"t {"name":"x"}"#);
    assert_eq!(as_map(&Map::new()), 0);
    no_parameter();
}
