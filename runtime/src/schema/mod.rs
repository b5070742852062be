//! Schemas as clients receive them: derived with schemars, made self-contained, and used to check
//! arguments before a tool runs.

pub(crate) mod check;
pub(crate) mod ranges;
pub(crate) mod validator;

use std::collections::BTreeSet;

use schemars::generate::{Contract, SchemaSettings};
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

pub(crate) const DEFS_PREFIX: &str = "#/$defs/";

/// A generator for one schema: draft 2020-12, subschemas inlined (recursive types stay in `$defs`),
/// no `$schema`. Inputs are described as they are read, outputs as they are written.
pub(crate) fn generator(contract: Contract) -> SchemaGenerator {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    settings.contract = contract;
    settings.into_generator()
}

/// The input schema of a tool: a closed object at the root.
pub(crate) fn input(derive: fn(&mut SchemaGenerator) -> Schema) -> Value {
    let mut schema = normalise(derive(&mut generator(Contract::Deserialize)));
    if let Value::Object(root) = &mut schema {
        // The arguments struct has no doc comment; a root description can only come from a
        // flattened struct's, and the tool's own description is what describes the arguments.
        root.remove("description");
        let composed = ["allOf", "anyOf", "oneOf", "$ref"]
            .iter()
            .any(|k| root.contains_key(*k));
        if root.get("type").and_then(Value::as_str) == Some("object") && !composed {
            root.entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            root.entry("additionalProperties")
                .or_insert(Value::Bool(false));
        }
    }
    schema
}

/// The schema of a form a tool asks the user to fill in, from the type its answer is read as: as
/// an input's, with no root description.
pub(crate) fn form<T: schemars::JsonSchema>() -> Value {
    let mut schema = normalise(generator(Contract::Deserialize).into_root_schema_for::<T>());
    if let Value::Object(root) = &mut schema {
        root.remove("description");
    }
    schema
}

/// The output schema of a tool, if its return type has one.
pub(crate) fn output(derive: fn(&mut SchemaGenerator) -> Option<Schema>) -> Option<Value> {
    derive(&mut generator(Contract::Serialize)).map(normalise)
}

/// Removes what clients stumble on (`$schema`, the root `title` that names a Rust type, numeric
/// formats JSON Schema does not define) and the definitions nothing reaches.
fn normalise(schema: Schema) -> Value {
    let mut value = schema.to_value();
    if let Value::Object(root) = &mut value {
        root.remove("$schema");
        root.remove("title");
    }
    ranges::formats_as_ranges(&mut value);
    prune_definitions(&mut value);
    value
}

/// Keeps only the `$defs` entries reachable from the root, and drops `$defs` when none are.
pub(crate) fn prune_definitions(schema: &mut Value) {
    let Some(Value::Object(mut defs)) = schema.as_object_mut().and_then(|r| r.remove("$defs"))
    else {
        return;
    };
    let mut reachable = BTreeSet::new();
    let mut frontier: Vec<String> = definition_refs(schema);
    while let Some(name) = frontier.pop() {
        if reachable.insert(name.clone())
            && let Some(def) = defs.get(&name)
        {
            frontier.extend(definition_refs(def));
        }
    }
    defs.retain(|name, _| reachable.contains(name));
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
}

/// The names of the local definitions a schema refers to.
fn definition_refs(schema: &Value) -> Vec<String> {
    let mut refs = Vec::new();
    each_ref(schema, &mut |r| {
        if let Some(name) = r.strip_prefix(DEFS_PREFIX) {
            refs.push(unescape_pointer(name));
        }
    });
    refs
}

/// The `$ref`s that point nowhere inside the schema: a client cannot resolve them. A local
/// reference is a JSON pointer into the schema, so `#/definitions/...` of a literal draft-07
/// schema resolves as `#/$defs/...` does.
pub(crate) fn dangling_refs(schema: &Value) -> Vec<String> {
    let mut dangling = Vec::new();
    each_ref(schema, &mut |r| {
        let resolves = r == "#"
            || r.strip_prefix('#').is_some_and(|pointer| {
                pointer.starts_with('/') && schema.pointer(pointer).is_some()
            });
        if !resolves {
            dangling.push(r.to_owned());
        }
    });
    dangling
}

fn each_ref(schema: &Value, visit: &mut impl FnMut(&str)) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(r)) => visit(r),
                    // `properties` and `$defs` map names to schemas; a property may itself be
                    // called `$ref`, so look at their values only.
                    (
                        "properties" | "$defs" | "patternProperties" | "dependentSchemas",
                        Value::Object(m),
                    ) => {
                        m.values().for_each(|v| each_ref(v, visit));
                    }
                    (_, v) => each_ref(v, visit),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| each_ref(v, visit)),
        _ => {}
    }
}

/// A value as a message quotes it: a string as it is, without JSON's quotes; anything else as
/// JSON.
pub(crate) fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The JSON Schema type of a value: a number without a fractional part is an `integer`, as
/// JSON Schema has it.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

pub(crate) fn unescape_pointer(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unreachable_definitions_are_dropped() {
        let mut schema = json!({
            "type": "object",
            "properties": {"t": {"$ref": "#/$defs/Tree"}},
            "$defs": {
                "Tree": {"type": "object", "properties": {"kids": {"items": {"$ref": "#/$defs/Tree"}}}},
                "Unused": {"type": "string"}
            }
        });
        prune_definitions(&mut schema);
        assert_eq!(schema["$defs"].as_object().unwrap().len(), 1);
        assert!(dangling_refs(&schema).is_empty());
    }

    #[test]
    fn a_ref_to_a_missing_definition_is_dangling() {
        let schema = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Gone"}, "$ref": {"type": "string"}}});
        assert_eq!(dangling_refs(&schema), vec!["#/$defs/Gone".to_owned()]);
    }
}
