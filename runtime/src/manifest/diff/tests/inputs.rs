//! Changes to what a tool accepts.

use super::*;

#[test]
fn a_new_required_argument_breaks_and_a_new_optional_one_adds() {
    let old = args(json!({ "a": { "type": "string" } }), &[]);
    let new = args(
        json!({ "a": { "type": "string" }, "colour": { "type": "string" },
                "size": { "type": "integer" } }),
        &["colour"],
    );
    assert_eq!(
        inputs(old, new),
        vec![
            change(
                Breaking,
                "t input /properties/colour",
                "new required argument `colour`"
            ),
            change(
                Additive,
                "t input /properties/size",
                "new optional argument `size`"
            ),
        ]
    );
}

#[test]
fn an_argument_becoming_required_breaks_and_optional_adds() {
    let old = args(
        json!({ "a": { "type": "string" }, "b": { "type": "string" } }),
        &["b"],
    );
    let new = args(
        json!({ "a": { "type": "string" }, "b": { "type": "string" } }),
        &["a"],
    );
    assert_eq!(
        inputs(old, new),
        vec![
            change(
                Breaking,
                "t input /properties/a",
                "argument `a` now required"
            ),
            change(
                Additive,
                "t input /properties/b",
                "argument `b` now optional"
            ),
        ]
    );
}

#[test]
fn a_nested_new_required_field_breaks_callers() {
    let old = args(json!({ "note": object(json!({}), &[]) }), &["note"]);
    let new = args(
        json!({ "note": object(json!({ "id": { "type": "string" } }), &["id"]) }),
        &["note"],
    );
    assert_eq!(
        inputs(old, new),
        vec![change(
            Breaking,
            "t input /properties/note/properties/id",
            "new required field `id`"
        )]
    );
}

#[test]
fn a_narrowed_input_type_breaks_and_a_widened_one_adds() {
    let old = args(
        json!({ "a": { "type": ["string", "null"] }, "b": { "type": "number" },
                "c": { "type": "integer" }, "d": { "type": "string" } }),
        &[],
    );
    let new = args(
        json!({ "a": { "type": "string" }, "b": { "type": "integer" },
                "c": { "type": "number" }, "d": { "type": "integer" } }),
        &[],
    );
    assert_eq!(
        inputs(old, new),
        vec![
            change(Breaking, "t input /properties/a", "no longer nullable"),
            change(
                Breaking,
                "t input /properties/b",
                "type `number` -> `integer`"
            ),
            change(
                Breaking,
                "t input /properties/d",
                "type `string` -> `integer`"
            ),
            change(
                Additive,
                "t input /properties/c",
                "type `integer` -> `number`"
            ),
        ]
    );
}

#[test]
fn tightened_input_limits_break_and_relaxed_ones_add() {
    let old = args(
        json!({
            "n": { "type": "integer", "maximum": 10 },
            "s": { "type": "string", "minLength": 1, "maxLength": 10 },
            "l": { "type": "array", "items": { "type": "string" }, "maxItems": 5 },
            "r": { "type": "integer", "minimum": 5, "maximum": 10 },
            "m": { "type": "integer", "multipleOf": 2 },
            "k": { "type": "integer", "multipleOf": 4 },
            "u": { "type": "integer", "multipleOf": 2 }
        }),
        &[],
    );
    let new = args(
        json!({
            "n": { "type": "integer", "minimum": 0, "maximum": 9 },
            "s": { "type": "string", "minLength": 2, "maxLength": 8, "pattern": "^[a-z]+$" },
            "l": { "type": "array", "items": { "type": "string" }, "maxItems": 4 },
            "r": { "type": "integer", "minimum": 1 },
            "m": { "type": "integer", "multipleOf": 4 },
            "k": { "type": "integer", "multipleOf": 2 },
            "u": { "type": "integer", "multipleOf": 3 }
        }),
        &[],
    );
    assert_eq!(
        inputs(old, new),
        vec![
            change(Breaking, "t input /properties/l", "`maxItems` `5` -> `4`"),
            change(Breaking, "t input /properties/m", "`multipleOf` `2` -> `4`"),
            change(Breaking, "t input /properties/n", "`maximum` `10` -> `9`"),
            change(Breaking, "t input /properties/n", "`minimum` `0` added"),
            change(Breaking, "t input /properties/s", "`maxLength` `10` -> `8`"),
            change(Breaking, "t input /properties/s", "`minLength` `1` -> `2`"),
            change(
                Breaking,
                "t input /properties/s",
                "`pattern` `^[a-z]+$` added"
            ),
            change(Breaking, "t input /properties/u", "`multipleOf` `2` -> `3`"),
            change(Additive, "t input /properties/k", "`multipleOf` `4` -> `2`"),
            change(Additive, "t input /properties/r", "`maximum` `10` removed"),
            change(Additive, "t input /properties/r", "`minimum` `5` -> `1`"),
        ]
    );
}

#[test]
fn a_removed_input_enum_value_breaks_and_an_added_one_adds() {
    let old = args(
        json!({ "format": { "type": "string", "enum": ["json", "text"] } }),
        &[],
    );
    let new = args(
        json!({ "format": { "type": "string", "enum": ["text", "yaml"] } }),
        &[],
    );
    assert_eq!(
        inputs(old, new),
        vec![
            change(
                Breaking,
                "t input /properties/format",
                "enum value `\"json\"` removed"
            ),
            change(
                Additive,
                "t input /properties/format",
                "enum value `\"yaml\"` added"
            ),
        ]
    );
}

#[test]
fn a_one_of_of_consts_is_an_enum() {
    // schemars emits a unit enum whose variants have doc comments like this.
    let variant = |v: &str, doc: &str| json!({ "type": "string", "const": v, "description": doc });
    let old = args(
        json!({ "format": { "oneOf": [variant("json", "JSON."), variant("text", "Text.")] } }),
        &[],
    );
    let new = args(
        json!({ "format": { "oneOf": [variant("text", "Plain text."), variant("yaml", "YAML.")] } }),
        &[],
    );
    assert_eq!(
        inputs(old, new),
        vec![
            change(
                Breaking,
                "t input /properties/format",
                "enum value `\"json\"` removed"
            ),
            change(
                Additive,
                "t input /properties/format",
                "enum value `\"yaml\"` added"
            ),
            change(
                Cosmetic,
                "t input /properties/format/oneOf/0",
                "description changed"
            ),
        ]
    );
}

#[test]
fn documenting_enum_variants_is_not_a_change_of_values() {
    let old = args(
        json!({ "f": { "type": "string", "enum": ["a", "b"] } }),
        &[],
    );
    let new = args(
        json!({ "f": { "oneOf": [
            { "type": "string", "const": "a", "description": "A." },
            { "type": "string", "enum": ["b"] } ] } }),
        &[],
    );
    assert_eq!(inputs(old, new), vec![]);
}

#[test]
fn removing_an_argument_breaks_only_when_unknown_arguments_are_refused() {
    let old = args(
        json!({ "a": { "type": "string" }, "b": { "type": "string" } }),
        &[],
    );
    let closed = args(json!({ "a": { "type": "string" } }), &[]);
    assert_eq!(
        inputs(old.clone(), closed),
        vec![change(
            Breaking,
            "t input /properties/b",
            "argument `b` removed"
        )]
    );
    let open = json!({ "type": "object", "properties": { "a": { "type": "string" } } });
    let mut old_open = old;
    old_open
        .as_object_mut()
        .unwrap()
        .remove("additionalProperties");
    assert_eq!(
        inputs(old_open, open),
        vec![change(
            Additive,
            "t input /properties/b",
            "argument `b` removed; unknown arguments are accepted"
        )]
    );
}

#[test]
fn refusing_unknown_arguments_breaks_and_accepting_them_adds() {
    let closed = args(json!({}), &[]);
    let open = json!({ "type": "object", "properties": {} });
    assert_eq!(
        inputs(open.clone(), closed.clone()),
        vec![change(Breaking, "t input", "unknown arguments now refused")]
    );
    assert_eq!(
        inputs(closed, open),
        vec![change(
            Additive,
            "t input",
            "unknown arguments now accepted"
        )]
    );
}

#[test]
fn an_unknown_keyword_that_differs_breaks_and_is_named() {
    let old = args(json!({ "a": { "type": "string", "x-unit": "cm" } }), &[]);
    let new = args(json!({ "a": { "type": "string", "x-unit": "mm" } }), &[]);
    assert_eq!(
        inputs(old, new),
        vec![change(
            Breaking,
            "t input /properties/a",
            "keyword `x-unit` changed"
        )]
    );
}

#[test]
fn integer_formats_compare_by_range() {
    let int = |format: &str| json!({ "type": "integer", "format": format, "minimum": 0 });
    let old = args(
        json!({ "a": int("uint32"), "b": int("uint64"), "c": int("uuid") }),
        &[],
    );
    let new = args(
        json!({ "a": int("uint64"), "b": int("uint16"), "c": int("ulid") }),
        &[],
    );
    assert_eq!(
        inputs(old, new),
        vec![
            change(
                Breaking,
                "t input /properties/b",
                "`maximum` `18446744073709551615` -> `65535`"
            ),
            change(Breaking, "t input /properties/c", "format `uuid` -> `ulid`"),
            change(
                Additive,
                "t input /properties/a",
                "`maximum` `4294967295` -> `18446744073709551615`"
            ),
        ]
    );
}

#[test]
fn a_format_read_as_its_range_is_no_change() {
    // A snapshot from before numeric formats were served as ranges, against the same types now.
    let old = args(
        json!({
            "n": { "type": "integer", "format": "uint32", "minimum": 0 },
            "x": { "type": "number", "format": "double" }
        }),
        &[],
    );
    let new = args(
        json!({
            "n": { "type": "integer", "minimum": 0, "maximum": 4_294_967_295u64 },
            "x": { "type": "number" }
        }),
        &[],
    );
    assert_eq!(inputs(old, new), vec![]);
}
