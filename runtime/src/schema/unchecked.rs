//! What an input schema asks that serde does not check: the keywords that only the `validate`
//! feature's checker enforces, so that a server built without it can say so instead of serving a
//! promise it does not keep.

use std::collections::BTreeSet;

use serde_json::Value;

use super::ranges::is_integer_bound;

/// Keywords a derived arguments type can carry (from `#[schemars(...)]` attributes, or a
/// hand-written `JsonSchema`) whose constraint serde does not check when it reads the value.
const UNCHECKED: &[&str] = &[
    "pattern",
    "format",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "multipleOf",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "not",
    "if",
    "dependentRequired",
    "dependentSchemas",
];

/// Keywords whose value maps names to schemas: the names are not keywords.
const SCHEMA_MAPS: &[&str] = &["properties", "$defs", "definitions", "patternProperties"];

/// The keywords of `schema` that serde does not check, sorted. `minimum` and `maximum` count
/// unless they are the bounds of one of Rust's integer types (non-zero ones included), which
/// serde checks as it reads the integer.
pub(crate) fn unchecked_keywords(schema: &Value) -> BTreeSet<&'static str> {
    let mut found = BTreeSet::new();
    walk(schema, &mut found);
    found
}

fn walk(schema: &Value, found: &mut BTreeSet<&'static str>) {
    match schema {
        Value::Object(object) => {
            let integer = object.get("type") == Some(&Value::from("integer"));
            for (key, value) in object {
                if let Some(keyword) = UNCHECKED.iter().find(|keyword| **keyword == key) {
                    found.insert(keyword);
                } else if key == "minimum" || key == "maximum" {
                    if !(integer && is_integer_bound(value)) {
                        found.insert(if key == "minimum" {
                            "minimum"
                        } else {
                            "maximum"
                        });
                    }
                } else if SCHEMA_MAPS.contains(&key.as_str()) {
                    if let Value::Object(schemas) = value {
                        schemas.values().for_each(|schema| walk(schema, found));
                    }
                    continue;
                } else if matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                    // Values, not schemas.
                    continue;
                }
                walk(value, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| walk(item, found)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn what_serde_checks_is_not_reported() {
        let schema = json!({
            "type": "object",
            "properties": {
                "pattern": { "type": "string" },
                "count": { "type": "integer", "minimum": 0, "maximum": 4294967295u64 },
                "offset": { "type": "integer", "minimum": i64::MIN, "maximum": i64::MAX },
                "kind": { "enum": ["format", "pattern"] },
                "nested": { "$ref": "#/$defs/Nested" }
            },
            "$defs": { "Nested": { "type": "object", "properties": { "minLength": { "type": "boolean" } } } },
            "required": ["pattern"],
            "additionalProperties": false
        });
        assert!(unchecked_keywords(&schema).is_empty());
    }

    #[test]
    fn constraints_only_a_checker_enforces_are_reported() {
        let schema = json!({
            "type": "object",
            "properties": {
                "email": { "type": "string", "format": "email", "maxLength": 100 },
                "page": { "type": "integer", "minimum": 2 },
                "ratio": { "type": "number", "maximum": 1 },
                "tags": { "type": "array", "items": { "type": "string", "pattern": "^[a-z]+$" } }
            }
        });
        assert_eq!(
            unchecked_keywords(&schema).into_iter().collect::<Vec<_>>(),
            ["format", "maxLength", "maximum", "minimum", "pattern"]
        );
    }
}
