//! The rewrites no tool of the integration tests exercises.

use serde_json::{Value, json};

use super::input_schema;
use crate::profile::Profile;

/// The schema `profile` makes of `schema`, and the changes of its reports.
fn rewrite(profile: Profile, schema: Value) -> (Value, Vec<String>) {
    let mut reports = Vec::new();
    let schema = input_schema(profile, "t", &schema, &mut reports);
    let changes = reports
        .iter()
        .map(|r| format!("{}: {}", r.pointer(), r.change()))
        .collect();
    (schema, changes)
}

fn property(profile: Profile, schema: Value) -> (Value, Vec<String>) {
    let (root, reports) = rewrite(
        profile,
        json!({"type": "object", "properties": {"p": schema}, "required": ["p"]}),
    );
    (root["properties"]["p"].clone(), reports)
}

#[test]
fn all_of_is_merged_and_a_disagreement_reported() {
    let (merged, reports) = property(
        Profile::OpenAi,
        json!({"allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "integer", "minimum": 0}}, "required": ["b"]}
        ]}),
    );
    assert_eq!(
        merged,
        json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer", "minimum": 0}},
            "required": ["a", "b"],
            "additionalProperties": false
        })
    );
    assert_eq!(reports, Vec::<String>::new());
    let (merged, reports) = property(
        Profile::Gemini,
        json!({"allOf": [{"type": "string", "pattern": "^a"}, {"pattern": "b$"}]}),
    );
    assert_eq!(merged, json!({"type": "string", "pattern": "^a"}));
    assert_eq!(
        reports,
        [
            "/properties/p: the schemas `allOf` combines disagree on `pattern`: only the first \
          is kept, so values the other refuses may be given"
        ]
    );
}

#[test]
fn overlapping_alternatives_become_any_of_with_a_report() {
    let (schema, reports) = property(
        Profile::OpenAi,
        json!({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 10}]}),
    );
    assert_eq!(
        schema,
        json!({"anyOf": [{"type": "integer"}, {"type": "number", "minimum": 10}]})
    );
    assert_eq!(
        reports,
        [
            "/properties/p: `oneOf` became `anyOf` (OpenAI's strict mode supports no `oneOf`), \
          and its alternatives overlap: a value that matches several of them, which `oneOf` \
          refused, is accepted"
        ]
    );
    // Different types, or different `const`s: nothing to report.
    let (_, reports) = property(
        Profile::Gemini,
        json!({"oneOf": [{"type": "integer"}, {"type": "string"}, {"type": "boolean"}]}),
    );
    assert_eq!(reports, Vec::<String>::new());
}

#[test]
fn gemini_bounds_types_and_values() {
    let (schema, reports) = property(
        Profile::Gemini,
        json!({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10.5}),
    );
    assert_eq!(
        schema,
        json!({"type": "integer", "minimum": 1, "maximum": 10})
    );
    assert_eq!(reports, Vec::<String>::new());
    let (schema, reports) = property(
        Profile::Gemini,
        json!({"type": ["integer", "string", "null"], "minimum": 1, "maxLength": 3}),
    );
    assert_eq!(
        schema,
        json!({
            "nullable": true,
            "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "maxLength": 3}]
        })
    );
    assert_eq!(reports, Vec::<String>::new());
    let (schema, reports) = property(Profile::Gemini, json!({"type": "integer", "const": 3}));
    assert_eq!(schema, json!({"type": "integer"}));
    assert_eq!(
        reports,
        [
            "/properties/p: an `enum` or `const` of values that are not strings is dropped: \
          Gemini's enums are strings, so the model may give another value"
        ]
    );
    let (schema, _) = property(
        Profile::Gemini,
        json!({"type": ["string", "null"], "enum": ["a", "b", null]}),
    );
    assert_eq!(
        schema,
        json!({"type": "string", "nullable": true, "enum": ["a", "b"]})
    );
}

#[test]
fn any_value_is_offered_as_what_the_client_can_say() {
    let (schema, reports) = property(Profile::OpenAi, json!(true));
    assert_eq!(
        schema["anyOf"],
        json!([{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}])
    );
    assert_eq!(reports.len(), 1);
    let (schema, _) = property(Profile::Gemini, json!({"description": "Anything."}));
    assert_eq!(
        schema,
        json!({"description": "Anything.", "type": "string"})
    );
}

#[test]
fn a_required_property_that_cannot_be_offered_is_said_to_fail_every_call() {
    let (root, reports) = rewrite(
        Profile::Gemini,
        json!({
            "type": "object",
            "properties": {
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "extra": {"type": ["object", "null"], "properties": {}},
                "name": {"type": "string"}
            },
            "required": ["labels", "name"]
        }),
    );
    assert_eq!(
        root,
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        })
    );
    assert_eq!(
        reports,
        [
            "/properties/extra: an object that lists no properties cannot be expressed in \
             Gemini's schema, which refuses an empty `properties`: not offered",
            "/properties/labels: a map (`additionalProperties` with a schema) cannot be \
             expressed in Gemini's schema, where an object lists its properties: not offered",
            "/properties/labels: required, but it cannot be offered: every call is refused \
             for lack of it",
        ]
    );
}

#[test]
fn strict_mode_keeps_a_recursive_reference_alone() {
    let (root, reports) = rewrite(
        Profile::OpenAi,
        json!({
            "type": "object",
            "properties": {"list": {"$ref": "#/$defs/List"}},
            "required": ["list"],
            "$defs": {"List": {
                "type": "object",
                "properties": {"rest": {"$ref": "#/$defs/List", "description": "The rest.", "minProperties": 1}},
                "required": []
            }}
        }),
    );
    assert_eq!(
        root["$defs"]["List"]["properties"]["rest"],
        json!({
            "description": "The rest.",
            "type": "object",
            "properties": {"rest": {"$ref": "#/$defs/List"}},
            "required": ["rest"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        reports,
        [
            "/$defs/List/properties/rest: optional, but strict mode requires every property \
             and this one does not accept `null`: the model must always give it",
            "/$defs/List/properties/rest: `minProperties` is dropped: OpenAI's strict mode \
             does not support it, so the model is no longer held to it (the server still \
             checks it)",
            "/$defs/List/properties/rest/properties/rest: optional, but strict mode requires \
             every property and this one does not accept `null`: the model must always give \
             it",
            "/$defs/List/properties/rest/properties/rest: `minProperties` beside the \
             recursive `$ref` `#/$defs/List` dropped: strict mode takes a `$ref` alone",
        ]
    );
}
