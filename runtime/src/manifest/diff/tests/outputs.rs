//! Changes to what a tool returns.

use super::*;

#[test]
fn an_output_field_no_longer_guaranteed_breaks_readers() {
    let old = object(
        json!({ "id": { "type": "string" }, "name": { "type": "string" },
                "note": { "type": "string" } }),
        &["id", "name"],
    );
    let new = object(json!({ "name": { "type": "string" } }), &[]);
    assert_eq!(
        outputs(old, new),
        vec![
            change(Breaking, "t output /properties/id", "field `id` removed"),
            change(
                Breaking,
                "t output /properties/name",
                "field `name` no longer guaranteed"
            ),
            change(
                Additive,
                "t output /properties/note",
                "optional field `note` removed"
            ),
        ]
    );
}

#[test]
fn a_widened_output_type_breaks_readers_and_a_narrowed_one_does_not() {
    let old = object(
        json!({ "n": { "type": "integer" }, "s": { "type": "string" },
                "m": { "type": ["string", "null"] } }),
        &["n", "s", "m"],
    );
    let new = object(
        json!({ "n": { "type": "number" }, "s": { "type": ["string", "null"] },
                "m": { "type": "string" } }),
        &["n", "s", "m"],
    );
    assert_eq!(
        outputs(old, new),
        vec![
            change(
                Breaking,
                "t output /properties/n",
                "type `integer` -> `number`"
            ),
            change(Breaking, "t output /properties/s", "now nullable"),
            change(Additive, "t output /properties/m", "no longer nullable"),
        ]
    );
}

#[test]
fn a_new_output_enum_value_breaks_readers() {
    let old = object(
        json!({ "state": { "type": "string", "enum": ["open", "done"] } }),
        &[],
    );
    let new = object(
        json!({ "state": { "type": "string", "enum": ["open", "done", "lost"] } }),
        &[],
    );
    assert_eq!(
        outputs(old.clone(), new.clone()),
        vec![change(
            Breaking,
            "t output /properties/state",
            "enum value `\"lost\"` added"
        )]
    );
    assert_eq!(
        outputs(new, old),
        vec![change(
            Additive,
            "t output /properties/state",
            "enum value `\"lost\"` removed"
        )]
    );
}

#[test]
fn withdrawing_structured_output_breaks_and_adding_it_adds() {
    let plain = manifest(vec![tool("t", args(json!({}), &[]))]);
    let mut structured = plain.clone();
    structured["tools"][0]["outputSchema"] = object(json!({}), &[]);
    assert_eq!(
        diff(&structured, &plain),
        vec![change(Breaking, "t output", "structured output withdrawn")]
    );
    assert_eq!(
        diff(&plain, &structured),
        vec![change(Additive, "t output", "structured output added")]
    );
}

#[test]
fn a_new_output_field_adds() {
    let old = object(json!({ "id": { "type": "string" } }), &["id"]);
    let new = object(
        json!({ "id": { "type": "string" }, "size": { "type": "integer" },
                "tag": { "type": "string" } }),
        &["id", "size"],
    );
    assert_eq!(
        outputs(old, new),
        vec![
            change(Additive, "t output /properties/size", "new field `size`"),
            change(
                Additive,
                "t output /properties/tag",
                "new optional field `tag`"
            ),
        ]
    );
}

#[test]
fn a_narrowed_output_is_safe_for_readers() {
    let old = object(
        json!({ "n": { "type": "integer" }, "s": { "type": "string", "maxLength": 10 } }),
        &["n"],
    );
    let new = object(
        json!({ "n": { "type": "integer", "minimum": 0 },
                "s": { "type": "string", "maxLength": 5 } }),
        &["n", "s"],
    );
    assert_eq!(
        outputs(old, new),
        vec![
            change(Additive, "t output /properties/n", "`minimum` `0` added"),
            change(
                Additive,
                "t output /properties/s",
                "`maxLength` `10` -> `5`"
            ),
            change(
                Additive,
                "t output /properties/s",
                "field `s` now guaranteed"
            ),
        ]
    );
}
