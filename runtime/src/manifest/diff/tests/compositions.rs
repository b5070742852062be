//! `allOf`, `anyOf`, `oneOf` and `not`.

use super::*;

#[test]
fn compositions_compare_by_position_or_by_kept_branches() {
    let s = json!({ "type": "string" });
    let i = json!({ "type": "integer" });
    let b = json!({ "type": "boolean" });
    let with = |branches: Vec<&Value>| args(json!({ "v": { "anyOf": branches } }), &[]);
    assert_eq!(
        inputs(with(vec![&s, &i]), with(vec![&s, &b])),
        vec![change(
            Breaking,
            "t input /properties/v/anyOf/1",
            "type `integer` -> `boolean`"
        )]
    );
    assert_eq!(
        inputs(with(vec![&s, &i]), with(vec![&b, &s, &i])),
        vec![change(
            Additive,
            "t input /properties/v/anyOf/0",
            "`anyOf` branch 0 added"
        )]
    );
    assert_eq!(
        inputs(with(vec![&s, &i]), with(vec![&s])),
        vec![change(
            Breaking,
            "t input /properties/v/anyOf/1",
            "`anyOf` branch 1 removed"
        )]
    );
    assert_eq!(
        inputs(with(vec![&s, &i]), with(vec![&b])),
        vec![change(
            Breaking,
            "t input /properties/v",
            "`anyOf` changed from 2 to 1 branches"
        )]
    );
}

#[test]
fn a_changed_composition_breaks_outputs_too() {
    let old = object(json!({ "v": { "oneOf": [{ "type": "string" }] } }), &[]);
    let new = object(
        json!({ "v": { "oneOf": [{ "type": "integer" }, { "type": "boolean" }] } }),
        &[],
    );
    assert_eq!(
        outputs(old, new),
        vec![change(
            Breaking,
            "t output /properties/v",
            "`oneOf` changed from 1 to 2 branches"
        )]
    );
}

#[test]
fn an_all_of_branch_narrows_inputs_and_outputs_alike() {
    let a = json!({ "type": "object", "properties": { "a": { "type": "string" } } });
    let b = json!({ "type": "object", "required": ["a"] });
    let old = json!({ "allOf": [a] });
    let new = json!({ "allOf": [a, b] });
    assert_eq!(
        inputs(
            args(json!({ "v": old }), &[]),
            args(json!({ "v": new }), &[])
        ),
        vec![change(
            Breaking,
            "t input /properties/v/allOf/1",
            "`allOf` branch 1 added"
        )]
    );
    assert_eq!(
        outputs(
            object(json!({ "v": old }), &[]),
            object(json!({ "v": new }), &[])
        ),
        vec![change(
            Additive,
            "t output /properties/v/allOf/1",
            "`allOf` branch 1 added"
        )]
    );
}

#[test]
fn any_change_under_not_breaks() {
    let not = |values: Value| {
        args(
            json!({ "a": { "type": "string", "not": { "enum": values } } }),
            &[],
        )
    };
    assert_eq!(
        inputs(not(json!(["x"])), not(json!(["x", "y"]))),
        vec![change(
            Breaking,
            "t input /properties/a/not",
            "enum value `\"y\"` added"
        )]
    );
}
