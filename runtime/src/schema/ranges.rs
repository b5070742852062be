//! Numeric formats as ranges.
//!
//! schemars marks a Rust number type with a `format` (`uint32`, `int64`, `double`...). JSON
//! Schema defines none of them: a validator that knows only the standard formats warns about
//! each (the TypeScript SDKs' validator does, once per schema and format), and none enforces
//! the range the format stands for. So the range is written as `minimum` and `maximum`, which
//! every validator enforces and every client profile keeps, and the format is dropped: the
//! schema then says what deserialisation accepts.

use serde_json::{Map, Number, Value};

/// The values an integer `format` stands for, as deserialisation from JSON reads them: a JSON
/// number is read as a 64-bit integer at most, so the 128-bit types take what 64 bits hold.
fn integer_range(format: &str) -> Option<(Number, Number)> {
    let signed = |min: i64, max: i64| (Number::from(min), Number::from(max));
    let unsigned = |max: u64| (Number::from(0u64), Number::from(max));
    Some(match format {
        "int8" => signed(i8::MIN.into(), i8::MAX.into()),
        "int16" => signed(i16::MIN.into(), i16::MAX.into()),
        "int32" => signed(i32::MIN.into(), i32::MAX.into()),
        "int64" => signed(i64::MIN, i64::MAX),
        "int" => signed(isize::MIN as i64, isize::MAX as i64),
        "int128" => (Number::from(i64::MIN), Number::from(u64::MAX)),
        "uint8" => unsigned(u8::MAX.into()),
        "uint16" => unsigned(u16::MAX.into()),
        "uint32" => unsigned(u32::MAX.into()),
        "uint64" | "uint128" => unsigned(u64::MAX),
        "uint" => unsigned(usize::MAX as u64),
        _ => return None,
    })
}

/// Rewrites every numeric `format` in a schema: an integer format becomes the range it stands
/// for (kept within any bound the schema already has), a floating-point one (`float`,
/// `double`) is dropped, as any JSON number is read into a float.
pub(crate) fn formats_as_ranges(schema: &mut Value) {
    match schema {
        Value::Object(node) => {
            rewrite(node);
            for (key, value) in node.iter_mut() {
                // Values, not schemas: a `const` may hold an object that looks like one.
                if !matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                    formats_as_ranges(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(formats_as_ranges),
        _ => {}
    }
}

fn rewrite(node: &mut Map<String, Value>) {
    let Some(Value::String(format)) = node.get("format") else {
        return;
    };
    if matches!(format.as_str(), "float" | "double") {
        node.remove("format");
        return;
    }
    let Some((min, max)) = integer_range(format) else {
        return;
    };
    node.remove("format");
    tighten(node, "minimum", min, |bound, kept| bound > kept);
    tighten(node, "maximum", max, |bound, kept| bound < kept);
}

/// Sets `key` to `bound` unless the schema's own bound is already tighter.
fn tighten(node: &mut Map<String, Value>, key: &str, bound: Number, tighter: fn(f64, f64) -> bool) {
    let kept = node.get(key).and_then(Value::as_f64);
    let bound_f64 = bound.as_f64().expect("an integer converts to a float");
    if kept.is_none_or(|kept| tighter(bound_f64, kept)) {
        node.insert(key.to_owned(), Value::Number(bound));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ranged(mut schema: Value) -> Value {
        formats_as_ranges(&mut schema);
        schema
    }

    #[test]
    fn integer_formats_become_their_ranges() {
        assert_eq!(
            ranged(json!({"type": "integer", "format": "uint32", "minimum": 0})),
            json!({"type": "integer", "minimum": 0, "maximum": 4_294_967_295u64})
        );
        assert_eq!(
            ranged(json!({"type": "integer", "format": "int64"})),
            json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX})
        );
        assert_eq!(
            ranged(json!({"type": ["integer", "null"], "format": "uint64", "minimum": 0})),
            json!({"type": ["integer", "null"], "minimum": 0, "maximum": u64::MAX})
        );
    }

    #[test]
    fn a_tighter_bound_of_the_schema_is_kept() {
        // `NonZeroU8`, and a range set with `#[schemars(range(...))]`.
        assert_eq!(
            ranged(json!({"type": "integer", "format": "uint8", "minimum": 1, "maximum": 255})),
            json!({"type": "integer", "minimum": 1, "maximum": 255})
        );
        assert_eq!(
            ranged(json!({"type": "integer", "format": "int32", "minimum": -5, "maximum": 1e12})),
            json!({"type": "integer", "minimum": -5, "maximum": i32::MAX})
        );
    }

    #[test]
    fn float_formats_are_dropped_and_others_kept() {
        assert_eq!(
            ranged(json!({"type": "number", "format": "double"})),
            json!({"type": "number"})
        );
        assert_eq!(
            ranged(json!({"type": "string", "format": "date-time"})),
            json!({"type": "string", "format": "date-time"})
        );
    }

    #[test]
    fn every_subschema_is_rewritten_but_values_are_not() {
        let schema = json!({
            "type": "object",
            "properties": {
                "format": {"type": "integer", "format": "uint16", "minimum": 0, "maximum": 65535},
                "xs": {"type": "array", "items": {"type": "integer", "format": "int8", "minimum": -128, "maximum": 127}},
                "c": {"const": {"type": "integer", "format": "uint8"}}
            },
            "$defs": {"N": {"anyOf": [{"type": "number", "format": "float"}, {"type": "null"}]}}
        });
        let rewritten = ranged(schema);
        let at = |pointer: &str| rewritten.pointer(pointer).cloned().unwrap();
        assert_eq!(
            at("/properties/format"),
            json!({"type": "integer", "minimum": 0, "maximum": 65535})
        );
        assert_eq!(
            at("/properties/xs/items"),
            json!({"type": "integer", "minimum": -128, "maximum": 127})
        );
        assert_eq!(at("/$defs/N/anyOf/0"), json!({"type": "number"}));
        assert_eq!(
            at("/properties/c"),
            json!({"const": {"type": "integer", "format": "uint8"}})
        );
    }
}
