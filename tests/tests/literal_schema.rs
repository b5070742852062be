//! The escape hatch: a tool that gives its input schema as literal JSON is served that schema as
//! written, its arguments are still checked against it, and a literal that cannot be served is a
//! conflict at start.

use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt;
use toolwright::__private::{InputSchema, ToolRegistration};
use toolwright::registry::{Conflict, Registry};
use toolwright::{Server, mcp_tool};

/// The schema of `locate`, as written in its attribute: compact, keys in byte order, as the
/// manifest writes every object.
const LOCATE_SCHEMA: &str = r##"{"$defs":{"address":{"properties":{"city":{"type":"string"},"street":{"type":"string"}},"required":["city"],"type":"object"}},"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"address":{"$ref":"#/$defs/address"},"name":{"type":"string"}},"type":"object"}"##;

/// Find where someone lives.
#[mcp_tool(
    input_schema = r##"{"$defs":{"address":{"properties":{"city":{"type":"string"},"street":{"type":"string"}},"required":["city"],"type":"object"}},"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"address":{"$ref":"#/$defs/address"},"name":{"type":"string"}},"type":"object"}"##
)]
fn locate(arguments: Map<String, Value>) -> String {
    let city = arguments
        .get("address")
        .and_then(|a| a.get("city"))
        .and_then(Value::as_str);
    format!("in {}", city.unwrap_or("nowhere"))
}

/// Echo the arguments, which the schema leaves open.
#[mcp_tool(input_schema = r#"{"type": "object", "properties": {"n": {"type": "integer"}}}"#)]
fn echo(arguments: Value) -> String {
    arguments.to_string()
}

#[test]
fn a_literal_schema_is_listed_byte_for_byte_as_written() {
    let registry = Registry::collect().unwrap();
    let tool = registry.get("locate").unwrap();
    assert_eq!(
        serde_json::to_string(tool.input_schema()).unwrap(),
        LOCATE_SCHEMA
    );
    let listed = String::from_utf8(registry.manifest().as_bytes().to_vec()).unwrap();
    let expected = format!(r#""inputSchema":{LOCATE_SCHEMA}"#);
    assert!(listed.contains(&expected), "{listed}");
}

#[test]
fn nothing_is_added_to_an_open_literal_schema() {
    let registry = Registry::collect().unwrap();
    assert_eq!(
        registry.get("echo").unwrap().input_schema(),
        &json!({"type": "object", "properties": {"n": {"type": "integer"}}})
    );
}

/// Runs one stdio session and returns each call's result, in order.
async fn call(calls: &[(&str, Value)]) -> Vec<Value> {
    let mut input = String::new();
    let mut line = |message: Value| {
        input.push_str(&message.to_string());
        input.push('\n');
    };
    line(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "literal", "version": "0"},
        }}),
    );
    line(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for (id, (name, arguments)) in calls.iter().enumerate() {
        line(
            json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}),
        );
    }
    let (server_output, mut output) = tokio::io::duplex(1 << 20);
    Server::new("literal", "0")
        .serve(input.as_bytes(), server_output)
        .await
        .unwrap();
    let mut text = String::new();
    output.read_to_string(&mut text).await.unwrap();
    let mut results = vec![Value::Null; calls.len()];
    for message in text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
    {
        if let Some(id) = message["id"].as_u64().filter(|&id| id > 0) {
            results[id as usize - 1] = message.get("result").cloned().unwrap_or(message);
        }
    }
    results
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn arguments_are_checked_against_the_literal_schema() {
    let results = call(&[
        (
            "locate",
            json!({"name": "Ada", "address": {"city": "London"}}),
        ),
        ("locate", json!({"name": "Ada", "age": 36})),
        ("locate", json!({"address": {"street": "Main St"}})),
        ("echo", json!({"n": 1, "more": true})),
        ("echo", json!({"n": "one"})),
    ])
    .await;
    assert_eq!(text(&results[0]), "in London", "{}", results[0]);
    assert_eq!(results[0].get("isError"), None);

    // `additionalProperties: false`, as written, refuses what the schema does not name.
    assert_eq!(results[1]["isError"], true, "{}", results[1]);
    assert!(text(&results[1]).contains("`age`"), "{}", results[1]);

    // The `$ref` is followed into `$defs`.
    assert_eq!(results[2]["isError"], true, "{}", results[2]);
    assert!(
        text(&results[2]).contains("argument `address`: missing required field `city`"),
        "{}",
        results[2]
    );

    // An open schema lets unnamed arguments through, to the function.
    assert_eq!(
        text(&results[3]),
        r#"{"more":true,"n":1}"#,
        "{}",
        results[3]
    );
    assert_eq!(results[4]["isError"], true, "{}", results[4]);
    assert!(text(&results[4]).contains("argument `n`"), "{}", results[4]);
}

fn literal(schema: &'static str) -> &'static ToolRegistration {
    Box::leak(Box::new(ToolRegistration {
        input_schema: InputSchema::Literal(schema),
        ..toolwright_tests::registration("literal", "A hand-written schema.")
    }))
}

fn conflicts(schema: &'static str) -> Vec<Conflict> {
    Registry::from_registrations([literal(schema)])
        .expect_err("the schema cannot be served")
        .conflicts()
        .to_vec()
}

#[test]
fn a_literal_schema_that_cannot_be_served_is_a_conflict() {
    let [Conflict::InvalidSchema { error, .. }] = &conflicts(r#"{"type": "object""#)[..] else {
        panic!("{:?}", conflicts(r#"{"type": "object""#));
    };
    assert!(
        error.starts_with("its literal `input_schema` is not JSON"),
        "{error}"
    );

    assert!(matches!(
        &conflicts(r#"{"type": "array"}"#)[..],
        [Conflict::InputNotObject { .. }]
    ));
    assert!(matches!(
        &conflicts(r##"{"type": "object", "properties": {"a": {"$ref": "#/$defs/gone"}}}"##)[..],
        [Conflict::DanglingRef { reference, .. }, ..] if reference == "#/$defs/gone"
    ));
    assert!(matches!(
        &conflicts(r#"{"type": "object", "minProperties": -1}"#)[..],
        [Conflict::InvalidSchema { .. }, ..]
    ));
    // A dialect the validator does not know is refused, not guessed at.
    assert!(matches!(
        &conflicts(r#"{"$schema": "https://example.com/no-such-dialect", "type": "object"}"#)[..],
        [Conflict::InvalidSchema { .. }, ..]
    ));
}

#[test]
fn a_draft_07_literal_schema_is_checked_in_its_own_dialect() {
    let registration = literal(
        r##"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "definitions": {"id": {"type": "integer"}},
            "properties": {"id": {"$ref": "#/definitions/id"}}}"##,
    );
    let registry = Registry::from_registrations([registration]).expect("a valid draft-07 schema");
    let schema = registry.get("literal").unwrap().input_schema();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(schema["definitions"]["id"], json!({"type": "integer"}));
}
