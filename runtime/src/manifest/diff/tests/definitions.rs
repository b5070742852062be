//! Definitions reached through `$ref`s.

use super::*;

#[test]
fn a_changed_definition_is_reported_where_it_is_used() {
    let note = |id: &str| {
        json!({
            "type": "object",
            "properties": { "note": { "$ref": "#/$defs/Note" },
                            "parent": { "$ref": "#/$defs/Note", "description": "The parent." } },
            "required": ["note"],
            "additionalProperties": false,
            "$defs": { "Note": { "type": "object", "properties": { "id": { "type": id } } } }
        })
    };
    let old = manifest(vec![tool("get_note", note("string"))]);
    let new = manifest(vec![tool("get_note", note("integer"))]);
    assert_eq!(
        diff(&old, &new),
        vec![
            change(
                Breaking,
                "get_note input /properties/note/properties/id",
                "type `string` -> `integer`"
            ),
            change(
                Breaking,
                "get_note input /properties/parent/properties/id",
                "type `string` -> `integer`"
            ),
        ]
    );
}

#[test]
fn a_definition_used_twice_is_listed_once_and_pointed_to() {
    let with = |id: &str| {
        json!({ "type": "object",
                "properties": { "a": { "$ref": "#/$defs/N" }, "b": { "$ref": "#/$defs/N" } },
                "additionalProperties": false,
                "$defs": { "N": { "type": "object",
                                  "properties": { "id": { "type": id } } } } })
    };
    assert_eq!(
        inputs(with("string"), with("integer")),
        vec![
            change(
                Breaking,
                "t input /properties/a/properties/id",
                "type `string` -> `integer`"
            ),
            change(
                Breaking,
                "t input /properties/b",
                "same changes as at `/properties/a`"
            ),
        ]
    );
}

#[test]
fn definitions_used_at_exponentially_many_places_are_compared_once_each() {
    // `D0` uses `D1` twice, which uses `D2` twice, ...: 2^40 places use `D40`.
    let levels = 40;
    let with = |leaf: &str| {
        let mut defs = Map::new();
        for i in 0..levels {
            let next = json!({ "$ref": format!("#/$defs/D{}", i + 1) });
            let def = json!({ "type": "object", "properties": { "a": next, "b": next } });
            defs.insert(format!("D{i}"), def);
        }
        defs.insert(format!("D{levels}"), json!({ "type": leaf }));
        json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/D0" } },
                "$defs": defs })
    };
    let changes = inputs(with("string"), with("integer"));
    let a = |n: usize| "/properties/a".repeat(n);
    let mut expected = vec![change(
        Breaking,
        &format!("t input /properties/x{}", a(levels)),
        "type `string` -> `integer`",
    )];
    for n in 0..levels {
        let detail = format!("same changes as at `/properties/x{}`", a(n + 1));
        let at = format!("t input /properties/x{}/properties/b", a(n));
        expected.push(change(Breaking, &at, &detail));
    }
    expected.sort();
    assert_eq!(changes, expected);
}

#[test]
fn definitions_resolve_within_each_tool() {
    // Both tools define `Item`, meaning different things; only `b`'s changes.
    let with_item = |item: Value| {
        json!({ "type": "object", "properties": { "item": { "$ref": "#/$defs/Item" } },
                "additionalProperties": false, "$defs": { "Item": item } })
    };
    let a = tool("a", with_item(json!({ "type": "string" })));
    let old = manifest(vec![
        a.clone(),
        tool("b", with_item(json!({ "type": "integer" }))),
    ]);
    let new = manifest(vec![a, tool("b", with_item(json!({ "type": "number" })))]);
    assert_eq!(
        diff(&old, &new),
        vec![change(
            Additive,
            "b input /properties/item",
            "type `integer` -> `number`"
        )]
    );
}

#[test]
fn a_renamed_or_inlined_definition_is_no_change() {
    let by_ref = json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/A" } },
                         "additionalProperties": false,
                         "$defs": { "A": { "type": "string" } } });
    let renamed = json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/B" } },
                          "additionalProperties": false,
                          "$defs": { "B": { "type": "string" } } });
    let inline = args(json!({ "x": { "type": "string" } }), &[]);
    assert_eq!(inputs(by_ref.clone(), renamed), vec![]);
    assert_eq!(inputs(by_ref, inline), vec![]);
}

#[test]
fn recursive_definitions_terminate() {
    let tree = |label: &str| {
        json!({
            "type": "object",
            "properties": { "tree": { "$ref": "#/$defs/Tree" } },
            "required": ["tree"],
            "additionalProperties": false,
            "$defs": { "Tree": { "type": "object", "properties": {
                "label": { "type": label },
                "children": { "type": "array", "items": { "$ref": "#/$defs/Tree" } }
            } } }
        })
    };
    assert_eq!(inputs(tree("string"), tree("string")), vec![]);
    assert_eq!(
        inputs(tree("string"), tree("integer")),
        vec![change(
            Breaking,
            "t input /properties/tree/properties/label",
            "type `string` -> `integer`"
        )]
    );
}

#[test]
fn recursions_of_different_periods_terminate() {
    // The old schema recurses at every level, the new one at every other: the two never
    // follow a `$ref` at the same time.
    let old = json!({ "type": "object", "properties": { "l": { "$ref": "#/$defs/L" } },
                      "$defs": { "L": { "type": "array", "items": { "$ref": "#/$defs/L" } } } });
    let new = json!({ "type": "object",
                      "properties": { "l": { "type": "array", "items": { "$ref": "#/$defs/M" } } },
                      "$defs": { "M": { "type": "array",
                                        "items": { "type": "array", "items": { "$ref": "#/$defs/M" } } } } });
    assert_eq!(inputs(old, new), vec![]);
}

#[test]
fn an_option_around_a_definition_is_nullable() {
    let old = args(json!({ "t": { "$ref": "#/$defs/T" } }), &["t"]);
    let mut new = args(
        json!({ "t": { "anyOf": [{ "$ref": "#/$defs/T" }, { "type": "null" }] } }),
        &["t"],
    );
    let def = json!({ "T": { "type": "object", "properties": { "a": { "type": "string" } } } });
    let mut old = old;
    old["$defs"] = def.clone();
    new["$defs"] = def;
    assert_eq!(
        inputs(old.clone(), new.clone()),
        vec![change(Additive, "t input /properties/t", "now nullable")]
    );
    assert_eq!(
        inputs(new, old),
        vec![change(
            Breaking,
            "t input /properties/t",
            "no longer nullable"
        )]
    );
}
